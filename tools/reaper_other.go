//go:build !linux || !cgo

package tools

import "os/exec"

// reaperBuilt says the reaper (reaper_linux.go) is in this binary: it
// needs Linux and cgo, like the sandbox's init.
const reaperBuilt = false

// reapTree leaves cmd as it is: without the reaper, the parent-death
// signal reaches only the direct child.
func reapTree(*exec.Cmd, string, Spec) {}

// reaperTakeDown has no reaper to ask.
func reaperTakeDown(int) {}
