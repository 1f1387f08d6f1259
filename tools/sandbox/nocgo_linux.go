//go:build linux && !cgo

package sandbox

import (
	"context"
	"errors"
	"net"
	"os/exec"
)

// sandboxInitBuilt: without cgo the sandbox's C init is not linked in.
const sandboxInitBuilt = false

// Direct is never made without cgo: the sandbox is off (Status).
type Direct struct {
	prog   string
	envDir string
	plan   []byte
	ctx    context.Context
	// proxy is never served: without cgo Status says the sandbox is off.
	proxy   bool
	forward []int
}

// ProxyListener is never called: without cgo Status says the sandbox is off.
func (*Direct) ProxyListener() (net.Listener, error) { return nil, nil }

// ProxyAddr is never called: there is no proxied child here.
func (*Direct) ProxyAddr() *net.TCPAddr { return nil }

// Start is never called: without cgo Status says the sandbox is off.
func (*Direct) Start(*exec.Cmd) error { return errors.New("sandbox: built without cgo") }

// Wait is never called: without cgo Status says the sandbox is off.
func (*Direct) Wait(*exec.Cmd) error { return errors.New("sandbox: built without cgo") }

func landlockStart(context.Context, *exec.Cmd, string, *Config) (*Direct, error) {
	return nil, errors.New("sandbox: built without cgo")
}

// Proxied is never called: without cgo Status says the sandbox is off.
func (*Direct) Proxied() bool { return false }

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
