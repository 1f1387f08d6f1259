//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"runtime"
)

func probeSandbox() State {
	reason := "host tools run without a sandbox on " + runtime.GOOS + ": it is built from Linux namespaces"
	return State{Reason: reason, Protections: protections(false, reason, 0)}
}

// Prepare runs the child unsandboxed, or refuses when it is required.
func Prepare(_ context.Context, _ *exec.Cmd, _ string, cfg *Config) (*Direct, error) {
	if cfg.Required {
		return nil, fmt.Errorf("%w: %s", ErrRefused, Status().Reason)
	}
	return nil, nil
}

// Direct is never used here: no sandbox starts without os/exec.
type Direct struct{}

// ProxyListener is never called: Prepare returns no Direct here.
func (*Direct) ProxyListener() (net.Listener, error) { return nil, nil }

// ProxyAddr is never called: there is no proxied child here.
func (*Direct) ProxyAddr() *net.TCPAddr { return nil }

// Start is never called: Prepare returns no Direct here.
func (*Direct) Start(*exec.Cmd) error { return errors.New("sandbox: not supported") }

// Wait is never called: Prepare returns no Direct here.
func (*Direct) Wait(*exec.Cmd) error { return errors.New("sandbox: not supported") }

// watchedTmpBuses: no inotify here; tmpBuses checks /tmp's mtime.
func watchedTmpBuses() ([]string, bool) { return nil, false }

// Proxied is never called: Prepare returns no Direct here.
func (*Direct) Proxied() bool { return false }

// envLayerProtection: the .env layer is Linux's (envfs_linux.go).
func envLayerProtection() Protection {
	return Protection{Name: ProtectDotEnvRename, Why: "no .env layer on " + runtime.GOOS}
}

// RenderEnvLayer: no .env layer here.
func RenderEnvLayer(io.Writer, *Config) {}

// Forwarded is never called here: Status says the sandbox is off.
func (*Direct) Forwarded() []net.Listener { return nil }

// NetNS is never called here: Status says the sandbox is off.
func (*Direct) NetNS() *NetNS { return nil }

// NetNS is a tool's network; there is none here.
type NetNS struct{}

// Connect fails: there is no tool network here.
func (*NetNS) Connect(int) (net.Conn, error) { return nil, errors.New("sandbox: no tool network here") }

// Close does nothing here.
func (*NetNS) Close() {}
