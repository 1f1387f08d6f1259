//go:build linux && cgo

package sandbox

/*
#include "landlock.h"
*/
import "C"

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// landlockRun is one tool's restriction in the Landlock world: the ruleset
// (shared by every tool of the same view), the call's own network layer
// and the seccomp filter.
type landlockRun struct {
	ruleset *landlockRuleset
	owned   bool // ruleset not cached: closed once the tool has started
	// netRuleset, or -1: a second Landlock layer of the call's own,
	// handling TCP connect and allowing only its egress proxy's port
	// (proxyRuleset); closed once the tool has started.
	netRuleset int
	filter     []bpf.RawInstruction
	cred       *syscall.Credential // run as this user, or nil
}

// landlockRuleset is a ruleset file descriptor, kept open while a cached
// view or a starting command holds it.
type landlockRuleset struct {
	fd    int
	flags uint32
}

// rulesets caches one ruleset per view: building one opens every path of
// the view, which costs more than the rest of a start. A path of the view
// that does not exist when its ruleset is built is not in it (a cache
// created later lives in the private home until hush starts again).
var rulesets struct {
	sync.Mutex
	m map[string]*landlockRuleset
}

// landlockConfig is what the ruleset restricts: every file-system right
// and both scopes this kernel knows (go-landlock's best effort: the rights
// the kernel lacks are left out), and TCP only when the network is off.
func landlockConfig(noNet bool) landlock.Config {
	cfg := landlock.V11
	if !noNet {
		cfg.HandledAccessNet = 0
	}
	return cfg.BestEffort()
}

// ruleset returns the ruleset for v, built once. owned: not cached (the
// cache is full), so the caller closes it once the tool has started. A
// cached ruleset is never closed: a start may hold it outside the lock.
func (v *LandlockView) ruleset() (r *landlockRuleset, owned bool, err error) {
	key := v.key()
	rulesets.Lock()
	defer rulesets.Unlock()
	if r := rulesets.m[key]; r != nil {
		return r, false, nil
	}
	var rules []landlock.Rule
	// A regular file of the view (hush's executable, ~/.gitconfig) takes
	// a file rule: the kernel refuses directory rights on a file (EINVAL),
	// and with them every start.
	readDirs, readFiles := splitFiles(v.Read)
	writeDirs, writeFiles := splitFiles(v.Write)
	if len(readDirs) > 0 {
		rules = append(rules, landlock.RODirs(readDirs...).IgnoreIfMissing())
	}
	if len(readFiles) > 0 {
		rules = append(rules, landlock.ROFiles(readFiles...).IgnoreIfMissing())
	}
	if len(writeDirs) > 0 {
		rules = append(rules, landlock.RWDirs(writeDirs...).WithRefer().IgnoreIfMissing())
	}
	if len(writeFiles) > 0 {
		rules = append(rules, landlock.RWFiles(writeFiles...).IgnoreIfMissing())
	}
	if len(v.Devices) > 0 {
		rules = append(rules, landlock.RWFiles(v.Devices...).IgnoreIfMissing())
	}
	if len(v.Sockets) > 0 {
		// Where the kernel controls connect(2) to a named socket
		// (ABI 9), only these; before it, the seccomp filter's
		// all-or-nothing (landlock_filter_linux.go).
		rules = append(rules, landlock.PathAccess(llsys.AccessFSResolveUnix, v.Sockets...).IgnoreIfMissing())
	}
	fd, flags, err := landlockConfig(v.NoNetwork).NewRulesetFD(rules...)
	if err != nil {
		return nil, false, fmt.Errorf("sandbox: Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return nil, false, fmt.Errorf("sandbox: this kernel has no Landlock")
	}
	r = &landlockRuleset{fd: fd, flags: flags}
	if len(rulesets.m) >= 64 {
		return r, true, nil
	}
	if rulesets.m == nil {
		rulesets.m = map[string]*landlockRuleset{}
	}
	rulesets.m[key] = r
	return r, false, nil
}

// splitFiles parts paths into directories (or missing paths, which the
// rules ignore) and everything else: regular files, devices.
func splitFiles(paths []string) (dirs, files []string) {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			files = append(files, p)
		} else {
			dirs = append(dirs, p)
		}
	}
	return dirs, files
}

func (v *LandlockView) key() string {
	var b strings.Builder
	for _, l := range [][]string{v.Read, {"\x01"}, v.Write, {"\x01"}, v.Devices, {"\x01"}, v.Sockets} {
		for _, p := range l {
			b.WriteString(p)
			b.WriteByte(0)
		}
	}
	if v.NoNetwork {
		b.WriteString("N")
	}
	return b.String()
}

// spawn starts the tool (hush_ll_spawn) and returns its pid or -errno.
func (r *landlockRun) spawn(path *C.char, argv, envp **C.char, dir *C.char, fds [3]*os.File, pdeathsig int) C.int {
	var filter unsafe.Pointer
	if len(r.filter) > 0 {
		filter = unsafe.Pointer(&r.filter[0])
	}
	setid, uid, gid := 0, uint32(0), uint32(0)
	if r.cred != nil {
		setid, uid, gid = 1, r.cred.Uid, r.cred.Gid
	}
	pid := C.hush_ll_spawn(path, argv, envp, dir, C.int(fds[0].Fd()), C.int(fds[1].Fd()), C.int(fds[2].Fd()),
		C.int(pdeathsig), C.int(r.ruleset.fd), C.uint(r.ruleset.flags), C.int(r.netRuleset), filter, C.ushort(len(r.filter)),
		C.int(setid), C.uint(uid), C.uint(gid))
	r.close()
	return pid
}

// close closes what the run owns (after the start, or instead of it).
func (r *landlockRun) close() {
	if r.owned {
		unix.Close(r.ruleset.fd)
		r.owned = false
	}
	if r.netRuleset >= 0 {
		unix.Close(r.netRuleset)
		r.netRuleset = -1
	}
}

// proxyRuleset is the Landlock layer of one call whose network is
// "proxy": TCP connect handled, and allowed only to port, where hush's
// egress proxy listens for this call on the host's 127.0.0.1 (UDP too
// where the kernel handles it, with no rule: none). Bind is left alone,
// so a dev server still listens. A layer of its own rather than part of
// the view's cached ruleset, which opens every path of the view: this
// one is two system calls. -1 when this kernel's Landlock has no TCP
// rules (ABI < 4): the caller then gives the tool no network.
func proxyRuleset(port int) (int, error) {
	cfg := landlock.Config{HandledAccessNet: llsys.AccessNetConnectTCP | llsys.AccessNetConnectSendUDP}.BestEffort()
	fd, _, err := cfg.NewRulesetFD(landlock.ConnectTCP(uint16(port)))
	if err != nil {
		return -1, fmt.Errorf("sandbox: Landlock network ruleset: %w", err)
	}
	return fd, nil
}

// privateDirs are the tools' private HOME and TMPDIR in the Landlock
// world, made once per hush: <tmp>/hush-tools-<uid>-<pid>-*/{home,tmp},
// 0700. The home holds a link to each entry of the view under the real
// home (~/.gitconfig, ~/go/pkg/mod, ...), so that $HOME/.gitconfig is the
// user's. Those of a hush no longer running are removed when the next
// one makes its own.
var privateDirs = sync.OnceValues(func() (string, error) {
	base := os.TempDir()
	prefix := "hush-tools-" + strconv.Itoa(os.Getuid()) + "-"
	if ents, err := os.ReadDir(base); err == nil {
		for _, e := range ents {
			rest, ok := strings.CutPrefix(e.Name(), prefix)
			if !ok || !e.IsDir() {
				continue
			}
			pid, _, _ := strings.Cut(rest, "-")
			if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && unix.Kill(n, 0) == unix.ESRCH {
				os.RemoveAll(filepath.Join(base, e.Name()))
			}
		}
	}
	dir, err := os.MkdirTemp(base, prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("sandbox: private home: %w", err)
	}
	for _, d := range []string{"home", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			return "", fmt.Errorf("sandbox: private home: %w", err)
		}
	}
	return dir, nil
})

// linkHome puts a link to each of the view's paths under realHome into the
// private home, at the same place (made once per path).
func linkHome(private, realHome string, paths []string) {
	if realHome == "" {
		return
	}
	realHome = resolvePath(realHome)
	linked.Lock()
	defer linked.Unlock()
	for _, p := range paths {
		rel, ok := below(p, realHome)
		if !ok || rel == "" || rel == "." || linked.m[p] {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		dst := filepath.Join(private, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			continue
		}
		if err := os.Symlink(p, dst); err == nil || os.IsExist(err) {
			if linked.m == nil {
				linked.m = map[string]bool{}
			}
			linked.m[p] = true
		}
	}
}

var linked struct {
	sync.Mutex
	m map[string]bool
}

// landlockStart makes cmd, set up by tools.Command for prog, start in the
// Landlock world of cfg: its view's ruleset and the seccomp filter, HOME
// and TMPDIR the private ones.
func landlockStart(ctx context.Context, cmd *exec.Cmd, prog string, cfg *Config) (*Direct, error) {
	base, err := privateDirs()
	if err != nil {
		return nil, err
	}
	home, tmp := filepath.Join(base, "home"), filepath.Join(base, "tmp")
	var cred *syscall.Credential
	if cmd.SysProcAttr != nil {
		cred = cmd.SysProcAttr.Credential
	}
	if cred != nil && int(cred.Uid) != os.Getuid() {
		if home, tmp, err = privateFor(base, cred); err != nil {
			return nil, err
		}
	}
	v, err := landlockViewFor(cmd.Dir, cmd.Env, cfg, home, tmp)
	if err != nil {
		return nil, err
	}
	linkHome(home, v.RealHome, append(append([]string{}, v.Read...), v.Write...))
	rs, owned, err := v.ruleset()
	if err != nil {
		return nil, err
	}
	cmd.Env = setEnv(cmd.Env, "HOME", home)
	cmd.Env = setEnv(cmd.Env, "TMPDIR", tmp)
	run := &landlockRun{ruleset: rs, owned: owned, netRuleset: -1, cred: cred}
	d := &Direct{ctx: ctx, prog: prog, ll: run}
	mode := netHost
	switch {
	case v.NoNetwork:
		mode = netNone
	case cfg.Proxy:
		// No network namespace here: the call's proxy listens on the
		// host's loopback, at a port of its own, and the call's
		// Landlock layer lets TCP reach that port alone.
		l, err := listenProxy()
		if err == nil {
			run.netRuleset, err = proxyRuleset(l.Addr().(*net.TCPAddr).Port)
		}
		if err != nil || run.netRuleset < 0 {
			if l != nil {
				l.Close()
			}
			if err == nil {
				err = fmt.Errorf("sandbox: this kernel's Landlock (ABI %d) has no TCP rules", Status().LandlockABI)
			}
			// Fail closed: no network at all, and the call is told why.
			mode, d.proxy, d.listenErr = netNone, true, err
			break
		}
		mode, d.proxy, d.listener = netProxy, true, l
		d.proxyAddr = l.Addr().(*net.TCPAddr)
	}
	run.filter = landlockFilter(len(v.Sockets) > 0, mode)
	return d, nil
}

// listenProxy is a call's egress proxy listener on the host's loopback, at
// a port the kernel picks, which accepts only the call's own processes
// (proxyowner_linux.go) once Start has told it the tool's pid.
func listenProxy() (*ownedListener, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sandbox: the egress proxy's listener: %w", err)
	}
	return &ownedListener{Listener: l}, nil
}

// privateFor is the private home and tmp of a tool run as another user
// (a credential on the command): <base>/<uid>/{home,tmp}, that user's.
func privateFor(base string, c *syscall.Credential) (home, tmp string, err error) {
	dir := filepath.Join(base, strconv.Itoa(int(c.Uid)))
	home, tmp = filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	if err := os.Chmod(base, 0o711); err != nil {
		return "", "", err
	}
	for _, d := range []string{dir, home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
			return "", "", fmt.Errorf("sandbox: private home: %w", err)
		}
		if err := os.Lchown(d, int(c.Uid), int(c.Gid)); err != nil {
			return "", "", fmt.Errorf("sandbox: private home: %w", err)
		}
	}
	return home, tmp, nil
}

// setEnv sets name=value in env, in place of any entry of that name.
func setEnv(env []string, name, value string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return append(out, name+"="+value)
}
