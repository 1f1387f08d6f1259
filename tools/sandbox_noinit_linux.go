//go:build linux && !cgo

package tools

import (
	"context"
	"errors"
	"os/exec"
)

// sandboxInitBuilt: without cgo the sandbox's C init is not linked in.
const sandboxInitBuilt = false

// directStart is never made without cgo: the sandbox is off (SandboxStatus).
type directStart struct {
	prog string
	plan []byte
	ctx  context.Context
}

func (*directStart) start(*exec.Cmd) error { return errors.New("sandbox: built without cgo") }
func (*directStart) wait(*exec.Cmd) error  { return errors.New("sandbox: built without cgo") }
