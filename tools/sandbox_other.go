//go:build !linux

package tools

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
)

func probeSandbox() SandboxState {
	reason := "host tools run without a sandbox on " + runtime.GOOS + ": it is built from Linux namespaces"
	return SandboxState{Reason: reason, Protections: protections(false, reason, 0)}
}

// sandboxCmd runs the child unsandboxed, or refuses when it is required.
func sandboxCmd(_ context.Context, _ *exec.Cmd, _ string, spec Spec) (*directStart, error) {
	if spec.Sandbox.Required {
		return nil, fmt.Errorf("%w: %s", ErrSandboxRefused, SandboxStatus().Reason)
	}
	return nil, nil
}

// directStart is never used here: no sandbox starts without os/exec.
type directStart struct{}

func (*directStart) start(*exec.Cmd) error { return errors.New("sandbox: not supported") }
func (*directStart) wait(*exec.Cmd) error  { return errors.New("sandbox: not supported") }

// watchedTmpBuses: no inotify here; tmpBuses checks /tmp's mtime.
func watchedTmpBuses() ([]string, bool) { return nil, false }
