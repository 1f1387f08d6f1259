//go:build !linux

package tools

import (
	"fmt"
	"os/exec"
	"runtime"
)

func probeSandbox() SandboxState {
	reason := "host tools run without a sandbox on " + runtime.GOOS + ": it is built from Linux namespaces"
	return SandboxState{Reason: reason, Protections: protections(false, reason, 0)}
}

// sandboxCmd runs the child unsandboxed, or refuses when it is required.
func sandboxCmd(_ *exec.Cmd, _ string, spec Spec) error {
	if spec.Sandbox.Required {
		return fmt.Errorf("%w: %s", ErrSandboxRefused, SandboxStatus().Reason)
	}
	return nil
}
