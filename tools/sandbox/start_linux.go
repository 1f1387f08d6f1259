//go:build linux && cgo

package sandbox

// The sandbox's set-up, in C, in two ways in.
//
// Most sandboxed children start with hush_sb_spawn: a vfork'd child of
// hush (sharing its memory until it execs, as posix_spawn's does), cloned
// straight into new user, mount and PID namespaces (and network, when the
// tool's network is off). It maps the user to itself, hides each masked
// path (an empty read-only file bound over a file or socket, an empty
// read-only directory bound over a directory), gives root a /dev without disks and
// only Docker's default capabilities, brings up lo, sets no_new_privs and
// a Landlock scope, mounts the namespace's own /proc and execs the tool,
// which is the namespace's init: when it exits, everything left in the
// namespace dies (a `setsid sleep &` too), and it dies with hush
// (Pdeathsig). For root, the empty file and directory and the /dev come
// from a read-only template hush makes once (hush_sb_template), copied
// into each sandbox with one open_tree.
//
// A child to run as another user (Spec.Credential) and the Landlock-only
// layer start through os/exec instead, as /proc/self/exe with argv[0]
// sandboxInitArg0 and the plan on fd 3: the constructor below, of higher
// priority than any other, answers to that argv[0] before the Go runtime
// exists and never returns to it. It unshares the namespaces after Go has
// changed user, so it forks the namespace's init, which mounts /proc,
// forks and execs the tool, reaps orphans and exits with its status; the
// first process waits outside the PID namespace and exits with the same.
//
// Why not clone flags on os/exec: with CLONE_NEWUSER Go forks hush's whole
// address space instead of vfork'ing, and the mounts need code in the
// child anyway. Why not bubblewrap, which does the same: measured
// interleaved with the same masks (BenchmarkSandboxedCall, 2 shared cores
// at load 8), bash -c true took 1.7-2.0 ms here (median per-call ratio
// 1.6-2.0x a bare exec of about 1 ms), 8-19 ms through bwrap (8-17x).
//
// The plan (fd 3, or in memory for hush_sb_spawn) is NUL-separated: the
// magic, a flags word, one "P<path>" per directory above hush's own dirs,
// and above each read-only mask, outermost first (bound onto itself,
// recursively: it stays as it was, but a mount point cannot be renamed or
// removed), then one "F<path>" or "D<path>" per mask, "R<path>" for a
// path bound onto itself read-only (hush's executable, ~/.ssh), or
// "S<path>" for a symlink covered by a read-only mount of what it leads to
// (a PATH entry's link to hush's executable). Flags: N
// a network namespace with only lo; T probe: stop once the namespace's
// /proc is mounted, exit 0; L Landlock only, where the kernel refuses the
// namespaces: no_new_privs and the Landlock scope, then exec the tool in
// place.

/*
#include <stdlib.h>
#include "sandbox.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// sandboxInitBuilt: the C init above is linked into this binary.
const sandboxInitBuilt = true

// spawnLock is held by hush_sb_spawn's callers from clone to exec; it is
// syscall.ForkLock's write side, which os/exec's forks hold too.
//
// It keeps the children from overlapping: each shares hush's memory until
// it execs, and the dumpable flag it sets to write its own id maps is that
// memory's, not its own. One child's set-up turning the flag off again
// while another was between turning it on and its last map write made
// that one's /proc/self files root's, and for an unprivileged hush the
// start failed ("hush sandbox: write gid_map: Permission denied") — one
// of two MCP servers started together, now and then
// (TestSandboxConcurrentStartsUnprivileged).
//
// And a child holds, until it execs, a copy of every descriptor hush had
// at the clone: as a fork it keeps Go's promise to hold ForkLock, so
// whoever writes a program under ForkLock's read lock before running it
// never finds it "text file busy" (golang/go#22315,
// TestSandboxedStartHonoursForkLock).
//
// The calling thread waits for the exec anyway (vfork); the lock costs a
// concurrent start at most the other's set-up, well under a millisecond.
var spawnLock = &syscall.ForkLock

// Direct starts one sandboxed child with hush_sb_spawn instead of
// os/exec, and does what os/exec's Start and Wait would: the child's
// standard streams (files passed as they are, other readers and writers
// through pipes copied by goroutines), cancellation by the context through
// the command's Cancel, and WaitDelay for output a grandchild holds open.
type Direct struct {
	ctx  context.Context
	prog string
	plan []byte
	ll   *landlockRun // the Landlock world instead of the plan (landlock_linux.go)

	envDir string     // the host project the .env layer serves, or ""
	env    *envServer // that layer's server, from Start to Wait

	parentEnds []*os.File // closed after Wait
	nsfd       int        // the child's mount namespace, or -1: closed after Wait
	proxy      bool       // a listener for the egress proxy inside the child's network (Config.Proxy)
	listener   net.Listener
	listenErr  error
	proxyAddr  *net.TCPAddr   // where the child reaches the proxy, when not ProxyAddr (the Landlock world)
	forward    []int          // ports to listen on in the child's network (Config.Forward)
	forwarded  []net.Listener // their listeners, after Start
	netns      *NetNS         // the child's network, after Start (Config.Proxy)
	copies     chan error
	ncopies    int
	done       chan struct{}
}

// Start starts c's child as Prepare planned, as c.Start would.
func (d *Direct) Start(c *exec.Cmd) (err error) {
	if c.Process != nil {
		return errors.New("exec: already started")
	}
	if err := d.ctx.Err(); err != nil {
		if d.ll != nil {
			d.ll.close()
		}
		if d.listener != nil {
			d.listener.Close()
		}
		return err
	}
	var childEnds []*os.File
	defer func() {
		for _, f := range childEnds {
			f.Close()
		}
		if err != nil {
			for _, f := range d.parentEnds {
				f.Close()
			}
			if d.env != nil {
				d.env.stop()
			}
			if d.ll != nil {
				d.ll.close()
			}
			if d.listener != nil {
				d.listener.Close()
			}
		}
	}()
	d.copies = make(chan error, 3)
	var copyFns []func() error
	devNull := sharedDevNull
	var fds [3]*os.File
	switch r := c.Stdin.(type) {
	case nil:
		if fds[0], err = devNull(os.O_RDONLY); err != nil {
			return err
		}
	case *os.File:
		fds[0] = r
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		childEnds = append(childEnds, pr)
		d.parentEnds = append(d.parentEnds, pw)
		fds[0] = pr
		copyFns = append(copyFns, func() error {
			_, err := io.Copy(pw, r)
			if cerr := pw.Close(); err == nil && !errors.Is(cerr, os.ErrClosed) {
				err = cerr
			}
			if errors.Is(err, syscall.EPIPE) {
				err = nil // the child stopped reading: not an error
			}
			return err
		})
	}
	output := func(w io.Writer) (*os.File, error) {
		switch w := w.(type) {
		case nil:
			return devNull(os.O_WRONLY)
		case *os.File:
			return w, nil
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		childEnds = append(childEnds, pw)
		d.parentEnds = append(d.parentEnds, pr)
		copyFns = append(copyFns, func() error {
			_, err := io.Copy(w, pr)
			pr.Close()
			if errors.Is(err, os.ErrClosed) {
				err = nil // closed by WaitDelay
			}
			return err
		})
		return pw, nil
	}
	if fds[1], err = output(c.Stdout); err != nil {
		return err
	}
	if c.Stderr != nil && interfaceEqual(c.Stderr, c.Stdout) {
		fds[2] = fds[1]
	} else if fds[2], err = output(c.Stderr); err != nil {
		return err
	}

	cstrs := func(ss []string) []*C.char {
		out := make([]*C.char, len(ss)+1)
		for i, s := range ss {
			out[i] = C.CString(s)
		}
		return out
	}
	argv, envp := cstrs(c.Args), cstrs(c.Env)
	path, dir := C.CString(d.prog), C.CString(c.Dir)
	plan := C.CBytes(d.plan)
	defer func() {
		for _, p := range append(argv, envp...) {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(path))
		C.free(unsafe.Pointer(dir))
		C.free(plan)
	}()
	pdeathsig := 0
	if c.SysProcAttr != nil {
		pdeathsig = int(c.SysProcAttr.Pdeathsig)
	}
	tmpl := -1
	if !sandboxNoTemplate.Load() {
		tmpl = sandboxTemplate()
	}
	envSock := -1
	if d.envDir != "" {
		if d.env, err = startEnvFS(d.envDir); err != nil {
			return err
		}
		envSock = d.env.child
	}
	var nsfd, pfd, userfd, netfd C.int
	pport := 0
	if d.proxy {
		pport = ProxyPort
	}
	fwd := make([]C.int, len(d.forward)+1) // never empty: its address is passed
	fwdfds := make([]C.int, len(d.forward)+1)
	for i, p := range d.forward {
		fwd[i] = C.int(p)
	}
	// One child in set-up at a time, and none beside os/exec's: see
	// spawnLock.
	spawnLock.Lock()
	var pid C.int
	if d.ll != nil {
		pid, nsfd = d.ll.spawn(path, &argv[0], &envp[0], dir, fds, pdeathsig), -1
	} else {
		spawn := func(tuser, tmnt, procfd int) C.int {
			return C.hush_sb_spawn(path, &argv[0], &envp[0], dir, C.int(fds[0].Fd()), C.int(fds[1].Fd()), C.int(fds[2].Fd()),
				C.int(pdeathsig), (*C.char)(plan), C.size_t(len(d.plan)), C.int(tmpl), C.int(pport), C.int(envSock), &nsfd, &pfd,
				&userfd, &netfd, &fwd[0], &fwdfds[0], C.int(len(d.forward)), C.int(tuser), C.int(tmnt), C.int(procfd))
		}
		pid = -1
		if t := worldTemplateFor(d.plan); t != nil && d.envDir == "" {
			if pid = spawn(t.user, t.mnt, int(worldTemplates.proc.Fd())); pid < 0 {
				// Joining the template was refused: this call and the next
				// build their own world.
				worldTemplates.off = true
			}
		}
		if pid < 0 {
			pid = spawn(-1, -1, -1)
		}
	}
	spawnLock.Unlock()
	if d.env != nil {
		d.env.closeChild()
	}
	d.nsfd = int(nsfd)
	runtime.KeepAlive(fds)
	if pid < 0 {
		return fmt.Errorf("sandbox: start %s: %w", c.Args[0], syscall.Errno(-pid))
	}
	if ol, ok := d.listener.(*ownedListener); ok {
		ol.setOwner(int(pid))
	}
	if d.proxy && d.ll == nil {
		// The tool runs already; without its listener it has no way out at
		// all (it fails closed), and ProxyListener says so. (The Landlock
		// world's listener is on the host, made before the start.)
		if pfd >= 0 {
			f := os.NewFile(uintptr(pfd), "egress proxy")
			d.listener, d.listenErr = net.FileListener(f)
			f.Close()
		} else {
			d.listenErr = fmt.Errorf("sandbox: the egress proxy's listener: %w", syscall.Errno(-pfd))
		}
		if userfd >= 0 && netfd >= 0 {
			d.netns = &NetNS{user: int(userfd), net: int(netfd)}
		} else {
			for _, fd := range []C.int{userfd, netfd} {
				if fd >= 0 {
					syscall.Close(int(fd))
				}
			}
		}
		for i := range d.forward {
			if fwdfds[i] < 0 {
				continue // the port was taken, or not ours to bind: no forward
			}
			f := os.NewFile(uintptr(fwdfds[i]), "forwarded port")
			if l, err := net.FileListener(f); err == nil {
				d.forwarded = append(d.forwarded, l)
			}
			f.Close()
		}
	}
	p, err := os.FindProcess(int(pid))
	if err != nil {
		return err
	}
	c.Process = p
	d.ncopies = len(copyFns)
	for _, fn := range copyFns {
		go func() { d.copies <- fn() }()
	}
	d.done = make(chan struct{})
	if d.ctx.Done() != nil {
		go func() {
			select {
			case <-d.ctx.Done():
				if c.Cancel != nil {
					_ = c.Cancel()
				}
			case <-d.done:
			}
		}()
	}
	return nil
}

// Wait waits for the child and for its output to be copied, as c.Wait
// would.
func (d *Direct) Wait(c *exec.Cmd) error {
	err := c.Wait() // the process: sets ProcessState, an *exec.ExitError
	if d.env != nil {
		// A layer never mounted stops now; a mounted one when the
		// namespace's end (below) unmounts it.
		d.env.stop()
	}
	if d.listener != nil {
		d.listener.Close() // ends the proxy's Serve, if it still runs
	}
	for _, l := range d.forwarded {
		l.Close()
	}
	d.netns.Close()
	if d.nsfd >= 0 {
		// The last reference: its close unmounts the namespace's
		// mounts, which waits for an RCU grace period. Nothing runs in
		// it any more; the call need not wait for that.
		go syscall.Close(d.nsfd)
		d.nsfd = -1
	}
	if d.done != nil {
		close(d.done)
	}
	var timeout <-chan time.Time
	if c.WaitDelay > 0 {
		t := time.NewTimer(c.WaitDelay)
		defer t.Stop()
		timeout = t.C
	}
	var copyErr error
	for i := 0; i < d.ncopies; i++ {
		select {
		case e := <-d.copies:
			if copyErr == nil {
				copyErr = e
			}
		case <-timeout:
			// A grandchild holds the output open: stop copying.
			for _, f := range d.parentEnds {
				f.Close()
			}
			timeout = nil
			if copyErr == nil {
				copyErr = exec.ErrWaitDelay
			}
			i--
		}
	}
	for _, f := range d.parentEnds {
		f.Close()
	}
	if err == nil {
		err = copyErr
	}
	return err
}

// devNulls are /dev/null opened once for reading (flag os.O_RDONLY) and
// once for writing, the standard streams of a sandboxed child that has
// none: each start opened its own before, six syscalls apiece through
// os.OpenFile. The child gets duplicates; these stay open. An open that
// failed is tried again on the next start.
var devNulls struct {
	sync.Mutex
	f [2]*os.File
}

func sharedDevNull(flag int) (*os.File, error) {
	i := 0
	if flag != os.O_RDONLY {
		i, flag = 1, os.O_WRONLY
	}
	devNulls.Lock()
	defer devNulls.Unlock()
	if devNulls.f[i] == nil {
		f, err := os.OpenFile(os.DevNull, flag, 0)
		if err != nil {
			return nil, err
		}
		devNulls.f[i] = f
	}
	return devNulls.f[i], nil
}

// sandboxTemplate is hush_sb_template's mount, made once, for root: -1
// when hush is not root or the kernel refused it (each sandbox then builds
// its own scratch and /dev, as before).
var sandboxTemplate = sync.OnceValue(func() int {
	if os.Getuid() != 0 {
		return -1
	}
	fd := int(C.hush_sb_template())
	if fd < 0 {
		return -1
	}
	return fd
})

// interfaceEqual reports a == b without panicking on incomparable types.
func interfaceEqual(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}

// ProxyListener is the listener of hush's egress proxy inside a started
// child's network namespace (Config.Proxy), or nil and why not. Wait
// closes it.
func (d *Direct) ProxyListener() (net.Listener, error) {
	if !d.proxy {
		return nil, nil
	}
	return d.listener, d.listenErr
}

// Proxied says the child's way out is the egress proxy's listener
// (Config.Proxy): in its network namespace, made by Start, or, in the
// Landlock world, on the host's loopback at a port of the call's own.
func (d *Direct) Proxied() bool { return d.proxy }

// ProxyAddr is where the child reaches the egress proxy (Proxied):
// ProxyAddr in its own network, or the call's port on the host's
// loopback in the Landlock world.
func (d *Direct) ProxyAddr() *net.TCPAddr {
	if d.proxyAddr != nil {
		return d.proxyAddr
	}
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: ProxyPort}
}

// Forwarded are the listeners Start made in the child's network for
// Config.Forward's ports (a port that could not be bound has none). Wait
// closes them.
func (d *Direct) Forwarded() []net.Listener { return d.forwarded }

// NetNS is the child's network after Start (Config.Proxy), through which
// hush reaches a local service the child started; nil otherwise. Wait
// closes it.
func (d *Direct) NetNS() *NetNS { return d.netns }

// NetNS is a reference to a sandboxed child's user and network
// namespaces.
type NetNS struct {
	mu        sync.Mutex
	user, net int // -1 once closed
}

// Connect connects to 127.0.0.1:port inside the network.
func (n *NetNS) Connect(port int) (net.Conn, error) {
	if n == nil {
		return nil, errors.New("sandbox: no network to connect in")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.net < 0 {
		return nil, errors.New("sandbox: the tool's network is gone")
	}
	fd := C.hush_sb_netns_connect(C.int(n.user), C.int(n.net), C.int(port))
	if fd < 0 {
		return nil, fmt.Errorf("connect to 127.0.0.1:%d in the tool's network: %w", port, syscall.Errno(-fd))
	}
	f := os.NewFile(uintptr(fd), "local service")
	defer f.Close()
	return net.FileConn(f)
}

// Close drops the references (nil-safe).
func (n *NetNS) Close() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.net >= 0 {
		syscall.Close(n.user)
		syscall.Close(n.net)
		n.user, n.net = -1, -1
	}
}
