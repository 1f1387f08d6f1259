//go:build linux && !cgo

package sandbox

import (
	"context"
	"errors"
	"os/exec"
)

// sandboxInitBuilt: without cgo the sandbox's C init is not linked in.
const sandboxInitBuilt = false

// Direct is never made without cgo: the sandbox is off (Status).
type Direct struct {
	prog string
	plan []byte
	ctx  context.Context
}

// Start is never called: without cgo Status says the sandbox is off.
func (*Direct) Start(*exec.Cmd) error { return errors.New("sandbox: built without cgo") }

// Wait is never called: without cgo Status says the sandbox is off.
func (*Direct) Wait(*exec.Cmd) error { return errors.New("sandbox: built without cgo") }

func landlockStart(context.Context, *exec.Cmd, string, *Config) (*Direct, error) {
	return nil, errors.New("sandbox: built without cgo")
}
