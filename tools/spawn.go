// Package tools is hush's spawn layer: the only code that builds a child
// environment or starts a process. Every tool — bash, background processes,
// MCP servers, anything that ever runs a program — gets its *exec.Cmd from
// Command, with an environment from BuildEnv. No other package calls
// os.Environ, os.Setenv, exec.Command, os.StartProcess or syscall.Exec; an
// architecture test enforces it.
//
// Command never inherits the parent's environment, never puts a vault value
// on a command line, and starts each child in a new session (no controlling
// terminal, its own process group) so cancelling kills the whole tree.
package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/tools/sandbox/egress"
)

// Spec describes one child process.
type Spec struct {
	// Path is the program; a bare name is looked up in the PATH of Env (not
	// hush's own PATH).
	Path string
	Args []string // not including the program name
	// Dir is the working directory. Required: there is no fallback to hush's.
	Dir string
	// Env is the child's whole environment, from BuildEnv. Required.
	Env Env
	// Stdin is the child's input; nil means /dev/null.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Secrets, when set, is checked against Path and Args: a command line
	// holding a vault value is refused before anything starts.
	Secrets *SecretSet
	// Outlive lets the child survive hush's exit (a background process the
	// user asked to keep). Otherwise the kernel kills it when hush dies.
	Outlive bool
	// Credential, when set, runs the child as another user (hush audit runs
	// the agent under test unprivileged, where same-user protections mean
	// something).
	Credential *syscall.Credential
	// Sandbox, when set, runs the child in a sandbox of its own (package
	// sandbox). Every host tool sets it; nil is for hush's own helpers.
	Sandbox *sandbox.Config
	// Egress, when set with Sandbox, gives the child a network of its own
	// whose one way out is hush's egress proxy (sandbox.Config.Proxy):
	// Egress serves the listener until its context ends, when the call
	// does. The child's proxy variables (HTTP_PROXY, HTTPS_PROXY,
	// ALL_PROXY, NO_PROXY, both cases) then point at it and replace any in
	// Env. In the Landlock world (no network namespace) the listener is on
	// the host's 127.0.0.1 at a port of the call's own, the only TCP port
	// the child may connect to. Where the sandbox is off altogether,
	// Egress is not called and the child's network is as without it.
	Egress func(ctx context.Context, l net.Listener)
	// Local, with Egress, are the session's local services (localnet.go):
	// the child reaches those its session's running calls listen on at
	// 127.0.0.1, and its own are reached by the session's later calls.
	// A child whose Env holds a secret gets neither.
	Local *LocalServices
	// KillGrace is how long a cancelled child's group gets between SIGTERM
	// and SIGKILL. Zero means SIGKILL at once.
	KillGrace time.Duration
}

// ErrSecretInArgv is returned when a command line would hold a vault value.
var ErrSecretInArgv = errors.New("refusing to start: a secret value would appear on the command line (pass it as ${NAME} in env instead)")

// minArgvSecret is the shortest vault value the argv check looks for; shorter
// values match ordinary text too often to be refused on.
const minArgvSecret = 4

// Cmd is a ready, unstarted command from Command: an *exec.Cmd, whose
// Start, Run and Wait a sandboxed child replaces (package sandbox starts
// it itself, without os/exec's fork). Use its methods, not the embedded
// *exec.Cmd's.
type Cmd struct {
	*exec.Cmd
	direct *sandbox.Direct // nil: os/exec starts it
	box    *sandbox.Config
	watch  *sandbox.LimitWatch // the call's process limit (limits.go)
	egress func(context.Context, net.Listener)
	stop   context.CancelFunc // ends egress's Serve
	local  *LocalServices
}

// Start starts the command.
func (c *Cmd) Start() error {
	var err error
	if c.direct != nil {
		err = c.direct.Start(c.Cmd)
	} else {
		err = c.Cmd.Start()
	}
	if err == nil && c.direct != nil && c.egress != nil {
		l, lerr := c.direct.ProxyListener()
		if l != nil {
			ctx, cancel := context.WithCancel(context.Background())
			c.stop = cancel
			go c.egress(ctx, l)
			if c.local != nil {
				c.local.add(c.direct.NetNS(), c.Process.Pid)
				for _, fl := range c.direct.Forwarded() {
					go c.local.serve(fl)
				}
			}
		} else if lerr != nil && c.Stderr != nil {
			// The tool has no way out; say why once, where its output goes.
			fmt.Fprintf(c.Stderr, "hush: this call has no network: %v\n", lerr)
		}
	}
	if err == nil && c.box != nil {
		pid := c.Process.Pid
		c.watch = sandbox.WatchLimits(pid, c.box, func() { _ = KillGroup(pid, syscall.SIGKILL) })
	}
	return err
}

// Wait waits for it to exit and for its output to be copied. A call
// stopped at its limits returns a *sandbox.LimitError.
func (c *Cmd) Wait() error {
	var err error
	if c.direct != nil {
		err = c.direct.Wait(c.Cmd)
		c.local.remove(c.direct.NetNS())
	} else {
		err = c.Cmd.Wait()
	}
	if c.stop != nil {
		c.stop()
	}
	return c.watch.Stop(err)
}

// Run starts it and waits.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// inheritedHome runs keepInheritedHome before the first child starts.
var inheritedHome sync.Once

// Command returns a ready, unstarted command for spec.
func Command(ctx context.Context, spec Spec) (*Cmd, error) {
	inheritedHome.Do(keepInheritedHome)
	if spec.Dir == "" {
		return nil, errors.New("spawn: no working directory given")
	}
	if spec.Env == nil {
		return nil, errors.New("spawn: no environment given (build one with BuildEnv)")
	}
	if spec.Path == "" {
		return nil, errors.New("spawn: no program given")
	}
	// One pass over the vault's values for the whole command line rather
	// than one per word: the words are joined with NUL, which no word can
	// hold, so every value inside a word is found, and a value holding a
	// NUL could at worst refuse a harmless command line.
	argv := spec.Path + "\x00" + strings.Join(spec.Args, "\x00")
	if spec.Secrets.ContainsValue(argv, minArgvSecret) {
		return nil, ErrSecretInArgv
	}
	prog, err := lookPath(spec.Path, spec.Env, spec.Dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, prog, spec.Args...)
	cmd.Args[0] = spec.Path
	cmd.Dir = spec.Dir
	cmd.Env = spec.Env.Environ()
	cmd.Stdin = spec.Stdin
	cmd.Stdout = spec.Stdout
	cmd.Stderr = spec.Stderr
	// Setsid: a new session and process group, and no controlling terminal,
	// so a tool can neither read the user's keystrokes nor be stopped by the
	// terminal's job control, and the group id is the child's pid.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if !spec.Outlive {
		killWithParent(cmd.SysProcAttr)
	}
	cmd.SysProcAttr.Credential = spec.Credential
	var direct *sandbox.Direct
	box := spec.Sandbox
	if box != nil && spec.Egress != nil && !box.NoNetwork {
		b := *box
		b.Proxy = true
		if spec.Env.holdsSecret() {
			// A call holding a secret reaches no session service, and
			// its own are no one's: a service of the session is a
			// program that may reach any public host, so a port
			// forwarded either way would carry the secret past its
			// binding (TestSessionServicesCarryNoGrantedSecret).
			spec.Local = nil
		}
		b.Forward = spec.Local.ports()
		box = &b
	}
	if box != nil {
		if direct, err = sandbox.Prepare(ctx, cmd, prog, box); err != nil {
			return nil, err
		}
	}
	var egressFn func(context.Context, net.Listener)
	if box != nil && box.Proxy && direct != nil {
		if direct.Proxied() {
			cmd.Env = withProxyEnv(cmd.Env, direct.ProxyAddr())
			egressFn = spec.Egress
		}
	}
	if direct == nil {
		reapTree(cmd, prog, spec) // reaper_linux.go
	}
	grace := spec.KillGrace
	cmd.Cancel = func() error {
		if grace > 0 {
			_ = KillGroup(cmd.Process.Pid, syscall.SIGTERM)
			time.AfterFunc(grace, func() { _ = KillGroup(cmd.Process.Pid, syscall.SIGKILL) })
			return nil
		}
		return KillGroup(cmd.Process.Pid, syscall.SIGKILL)
	}
	// Without it a grandchild holding stdout open would keep Wait blocked.
	cmd.WaitDelay = grace + 2*time.Second
	c := &Cmd{Cmd: cmd, direct: direct, box: spec.Sandbox, egress: egressFn}
	if egressFn != nil {
		c.local = spec.Local
	}
	return c, nil
}

// holdsSecret reports whether any variable's value came from the vault.
func (e Env) holdsSecret() bool {
	for _, v := range e {
		if v.Secret {
			return true
		}
	}
	return false
}

// proxyNames are the variables that point a program at a proxy; a child
// behind hush's egress proxy gets them from proxyEnv and no other value.
var proxyNames = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"}

// withProxyEnv is environ with every proxy variable replaced by the ones
// that point at hush's egress proxy at addr, where the child reaches it.
func withProxyEnv(environ []string, addr *net.TCPAddr) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(proxyNames, strings.ToUpper(name)) {
			out = append(out, kv)
		}
	}
	if addr.Port == sandbox.ProxyPort && addr.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		return append(out, toolProxyEnv()...)
	}
	return append(out, proxyEnvLines(addr)...)
}

// toolProxyEnv is egress.ToolEnv for the proxy's address in every tool's
// network (sandbox.ProxyAddr), as NAME=value lines, made once.
var toolProxyEnv = sync.OnceValue(func() []string {
	return proxyEnvLines(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sandbox.ProxyPort})
})

// proxyEnvLines is egress.ToolEnv for addr as NAME=value lines.
func proxyEnvLines(addr *net.TCPAddr) []string {
	env, err := egress.ToolEnv(addr)
	if err != nil {
		panic(err) // a loopback address with a port
	}
	var out []string
	for _, n := range slices.Sorted(maps.Keys(env)) {
		out = append(out, n+"="+env[n])
	}
	return out
}

// KillGroup signals the process group led by pid. A SIGTERM that the
// kernel would drop (a sandboxed namespace init without a TERM handler and
// without children, see termDropped) is followed by SIGKILL at once.
func KillGroup(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return fmt.Errorf("kill group: bad pid %d", pid)
	}
	if sig == syscall.SIGKILL {
		reaperTakeDown(pid) // reaper_linux.go
	}
	// Checked before the signal, so a child that ends at once of the
	// SIGTERM does not make the init look childless.
	dropped := sig == syscall.SIGTERM && termDropped(pid) // stopinit_linux.go
	err := syscall.Kill(-pid, sig)
	if dropped {
		return KillGroup(pid, syscall.SIGKILL)
	}
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// GroupAlive reports whether the process group pgid has a member left.
func GroupAlive(pgid int) bool {
	return pgid > 0 && syscall.Kill(-pgid, 0) == nil
}

// WaitGroupGone waits, boundedly, until no process of group pgid is left:
// SIGKILL is delivered asynchronously, and "stopped" should mean gone.
func WaitGroupGone(pgid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for GroupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}

// lookPath finds a bare program name in the child's PATH, so what runs is
// what the child's own shell would find, not what hush's PATH says. A
// relative PATH entry is relative to the child's working directory, dir.
//
// Like a shell's command hash, it remembers where it found each name for
// each PATH and checks only that file on the next call: a stat per PATH
// directory before it cost more than the rest of preparing a command. If
// the remembered file is gone or no longer executable, it searches again.
// Unlike a shell it does not notice the same name installed in an earlier
// PATH directory later; nor does a shell until `hash -r`.
func lookPath(prog string, env Env, dir string) (string, error) {
	if strings.Contains(prog, "/") {
		return prog, nil
	}
	pathList, _ := env.Lookup("PATH")
	if pathList == "" {
		pathList = "/usr/local/bin:/usr/bin:/bin"
	}
	key := pathKey{pathList, prog}
	found.Lock()
	cand, ok := found.m[key]
	found.Unlock()
	if ok && isExecutable(cand) {
		return cand, nil
	}
	relative := false // an answer after a relative entry depends on dir: not remembered
	for _, entry := range filepath.SplitList(pathList) {
		if entry == "" {
			entry = "."
		}
		cand := entry + "/" + prog
		if !filepath.IsAbs(entry) {
			// The child runs it from dir, so look there; exec starts it
			// after changing into dir, so the relative name stays right.
			relative = true
			if isExecutable(filepath.Join(dir, cand)) {
				return cand, nil
			}
			continue
		}
		if isExecutable(cand) {
			if !relative {
				found.Lock()
				if found.m == nil || len(found.m) >= maxFound {
					found.m = map[pathKey]string{}
				}
				found.m[key] = cand
				found.Unlock()
			}
			return cand, nil
		}
	}
	return "", fmt.Errorf("spawn: %s: %w", prog, exec.ErrNotFound)
}

type pathKey struct{ path, prog string }

// found is lookPath's memory; it starts over when it holds maxFound names.
var found struct {
	sync.Mutex
	m map[pathKey]string
}

const maxFound = 256

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// StopOnTerm goes before a bash script, on its first line (line numbers in
// bash's messages stay the script's own); the bash and background tools
// put it there. In its sandbox bash is its PID namespace's init, and the
// kernel drops a signal to an init that has no handler for it: on Ctrl-C,
// a timeout or a background stop, SIGTERM ended the running command but
// bash went on to the script's next commands until the SIGKILL after the
// grace period (and a kept process's `kill -TERM -- -PID` did nothing).
// With a handler bash exits once that command has ended; it also stays the
// parent instead of exec'ing a lone command into init's place, so that
// command gets SIGTERM too.
//
// The trap re-raises the signal first, so where bash is not an init (no
// sandbox) it still ends killed by SIGTERM, as before; an init ignores
// that and exits 143.
const StopOnTerm = "trap 'trap - TERM; kill -TERM $$; exit 143' TERM; "
