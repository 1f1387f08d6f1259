//go:build !linux

package tools

import "syscall"

// killWithParent has no kernel support here: a child outlives a hush that
// is killed outright (hush still stops its children on a normal exit).
func killWithParent(*syscall.SysProcAttr) {}

// keepInheritedHome: elsewhere, descriptors hush inherited stay as they are.
func keepInheritedHome() {}
