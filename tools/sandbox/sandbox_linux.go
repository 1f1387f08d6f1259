package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// The host sandbox, Linux: the kernel's namespaces, set up in C
// (sandbox.c, start_linux.go) by a vfork'd child of hush that execs the tool,
// or, for a child to run as another user, by hush's own binary re-run as
// an init before its Go runtime would start.

// sandboxInitArg0 is the argv[0] the C init answers to.
const sandboxInitArg0 = "hush-sandbox-init"

// sandboxExe is this very binary, however it was reached: the magic link
// also works for a user (a credential on the command) who could not search the
// directories leading to it.
const sandboxExe = "/proc/self/exe"

// Prepare turns cmd (already set up by tools.Command for prog: argv,
// directory, environment, streams, credential) into a sandboxed start
// following cfg. It returns a *Direct when the child is to be started by
// it instead of os/exec, or nil when cmd itself (possibly rewritten to go
// through the sandbox's init) is to be started as usual. Most children start directly (Direct: a vfork'd
// child of hush cloned into its namespaces, no second exec); a child to
// run as another user (a credential on the command) goes through the init, which
// changes user before it unshares. Where the kernel refuses the
// namespaces, the Landlock world starts it (landlockStart).
func Prepare(ctx context.Context, cmd *exec.Cmd, prog string, cfg *Config) (*Direct, error) {
	st := Status()
	if !st.Namespaces {
		if cfg.Required {
			return nil, fmt.Errorf("%w: %s", ErrRefused, st.Reason)
		}
		if !st.LandlockOnly {
			return nil, nil // the session said so at start
		}
		// The same allowlist through Landlock (landlock_linux.go).
		return landlockStart(ctx, cmd, prog, cfg)
	}
	flags := sandboxFlags(cfg.NoNetwork || cfg.Proxy) + cfg.Limits.flags()
	var plan []byte
	direct := cmd.SysProcAttr == nil || cmd.SysProcAttr.Credential == nil
	envDir := ""
	if cfg.Constructed && cfg.Policy != nil {
		// The world reads only the project's masks (its .env family).
		masks, err := cfg.Masks.projectMasks()
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		if t := cfg.Policy.opts.Tmp; t != "" {
			if err := ensureTmp(t); err != nil {
				return nil, err
			}
		}
		view := cfg.Policy.view()
		// The .env layer (envfs_linux.go) where hush may open FUSE, for a
		// child hush_sb_spawn starts; otherwise each .env is masked.
		var env *envPlan
		if direct && cfg.EnvLayer && FuseStatus() == nil {
			env = planEnvLayer(view, masks)
		}
		plan = planWorld(flags+"W", view, masks, env)
		if env != nil {
			envDir = env.src
		}
	} else {
		masks, err := cfg.Masks.Masks()
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		plan = planBytes(flags, masks)
	}
	if direct {
		return &Direct{ctx: ctx, prog: prog, plan: plan, envDir: envDir, proxy: cfg.Proxy && !cfg.NoNetwork, forward: cfg.Forward}, nil
	}
	cache := &planCache
	if cfg.Masks != nil {
		cache = &cfg.Masks.plans
	}
	f, err := cache.file(plan)
	if err != nil {
		return nil, err
	}
	throughInit(cmd, prog, f)
	return nil, nil
}

// planWorld is the init's plan for a root built from view (hush_sb_world
// in sandbox.c reads it): magic, flags, then one record per entry — a
// kind letter and the path inside, NUL, an argument, NUL. The project's
// .env-family files, found by the mask list's walk (masks), are hidden
// one by one, as are the view's other Hidden paths — or, with env, by the
// .env layer mounted over the project ('e'), its other subdirectories
// bound through on top right after it, before anything inside them.
func planWorld(flags string, view []Entry, masks []Mask, env *envPlan) []byte {
	var b bytes.Buffer
	b.WriteString("HUSHSB1\x00")
	b.WriteString(flags)
	b.WriteByte(0)
	rec := func(kind byte, path, arg string) {
		if strings.IndexByte(path, 0) >= 0 || strings.IndexByte(arg, 0) >= 0 {
			return
		}
		b.WriteByte(kind)
		b.WriteString(path)
		b.WriteByte(0)
		b.WriteString(arg)
		b.WriteByte(0)
	}
	var names []Entry
	for _, e := range view {
		switch {
		case e.Link != "":
			rec('l', e.Path, e.Link)
		case e.Mode == Hidden && len(e.Names) > 0:
			names = append(names, e)
		case e.Mode == Hidden:
			rec('h', e.Path, "")
		case e.Kernel == "dev":
			rec('d', e.Path, "")
		case e.Kernel == "proc":
			rec('p', e.Path, "")
		case e.Kernel == "tmpfs" && e.Path == "/tmp":
			rec('t', e.Path, "mode=1777")
		case e.Kernel == "tmpfs":
			rec('t', e.Path, "mode=0700")
		case e.Mode == ReadOnly:
			rec('r', e.Path, e.Source)
		case e.Mode == ReadWrite || e.Mode == Private:
			rec('w', e.Path, e.Source)
			if env != nil && e.Path == env.root && e.Source == env.src {
				rec('e', env.root, envSock+":"+FuseDevice)
				for _, b := range env.binds {
					rec('w', b[0], b[1])
				}
			}
		}
	}
	for _, m := range masks {
		if env != nil && envHidden(filepath.Base(m.Path)) {
			continue // not in the layer
		}
		for _, e := range names {
			if rel, ok := below(m.Path, e.Path); ok && m.Reason == ReasonDotEnv && MatchProjectMask(e.Names, rel) {
				rec('h', m.Path, "")
			}
		}
	}
	return b.Bytes()
}

// throughInit makes cmd start hush's re-exec'd sandbox init, which sets up
// what plan says and then execs prog.
func throughInit(cmd *exec.Cmd, prog string, plan *os.File) {
	cmd.Path = sandboxExe
	cmd.Args = append([]string{sandboxInitArg0, prog}, cmd.Args...)
	cmd.ExtraFiles = []*os.File{plan}
}

// sandboxNoTemplate: tests build each root sandbox's scratch and /dev in
// the sandbox, as where the kernel refuses the template.
var sandboxNoTemplate atomic.Bool

// sandboxFlags returns the init's flags word.
func sandboxFlags(noNet bool) string {
	if noNet {
		return "N"
	}
	return ""
}

// planFile returns a read-only memfd holding the init's plan. Plans rarely
// change within a session, so one file serves every child with the same
// plan (each reads it with pread, which moves no shared offset); a file no
// longer cached is closed by its finalizer once no command holds it.
func (s *MaskSet) planFile(flags string, masks []Mask) (*os.File, error) {
	cache := &planCache
	if s != nil {
		cache = &s.plans
	}
	return cache.file(planBytes(flags, masks))
}

// file returns the read-only memfd holding plan, made once per content.
func (cache *plans) file(plan []byte) (*os.File, error) {
	key := string(plan)
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if f := cache.files[key]; f != nil {
		return f, nil
	}
	fd, err := unix.MemfdCreate("hush-sandbox-plan", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("sandbox: plan: %w", err)
	}
	if err := writeAll(fd, plan); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sandbox: plan: %w", err)
	}
	_, _ = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	f := os.NewFile(uintptr(fd), "hush-sandbox-plan")
	if cache.files == nil || len(cache.files) >= 8 {
		cache.files = map[string]*os.File{}
	}
	cache.files[key] = f
	return f, nil
}

// planCache serves a Config without masks.
var planCache plans

// planBytes is the init's plan: magic, flags, then one F<path>, D<path>,
// R<path> (read-only) or S<path> (a link covered by what it leads to) per mask, NUL-separated (sandbox.c
// reads it).
func planBytes(flags string, masks []Mask) []byte {
	var b bytes.Buffer
	b.WriteString("HUSHSB1\x00")
	b.WriteString(flags)
	b.WriteByte(0)
	for _, p := range pins(masks) {
		b.WriteString("P" + p)
		b.WriteByte(0)
	}
	for _, m := range masks {
		if strings.IndexByte(m.Path, 0) >= 0 {
			continue
		}
		switch {
		case m.Link:
			b.WriteByte('S')
		case m.ReadOnly:
			b.WriteByte('R')
		case m.Dir:
			b.WriteByte('D')
		default:
			b.WriteByte('F')
		}
		b.WriteString(m.Path)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// pins are the directories above hush's own data and config dirs and
// above each read-only mask (hush's executable, ~/.ssh), outermost first.
// The masks cover those paths, but the directories above them are the
// user's and writable: a tool that moved ~/.config aside (the mask moves
// with it) and made a new ~/.config/hush would have the next session read
// its config.toml and trust file — a rule allowing every secret; one that
// moved ~/.local/bin aside would have the user's next `hush` be its own.
// Each is bound onto itself, so it is a mount point, which rename(2) and
// rmdir(2) refuse (EBUSY); it stays writable inside.
func pins(masks []Mask) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range masks {
		if m.Reason != ReasonDataDir && m.Reason != ReasonConfigDir && !m.ReadOnly || strings.IndexByte(m.Path, 0) >= 0 {
			continue
		}
		for d := filepath.Dir(m.Path); d != "/" && d != "." && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Count(out[i], "/") < strings.Count(out[j], "/") })
	return out
}

// probeSandbox starts one sandboxed child that sets everything up and exits
// before running anything, and says what the kernel refused.
func probeSandbox() State {
	ll, _, _ := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	landlock := int(ll)
	if int(ll) < 0 || ll > 1000 {
		landlock = 0
	}
	fail := func(reason string) State {
		return State{Reason: reason, LandlockABI: landlock, Protections: protections(false, reason, landlock)}
	}
	if !sandboxInitBuilt {
		return fail("host tools run without a sandbox: this hush was built without cgo, so the sandbox's init is not in it")
	}
	cmd := exec.Command(sandboxExe)
	cmd.Args = []string{sandboxInitArg0}
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	flags := sandboxFlags(true) + "T"
	plan, err := (*MaskSet)(nil).planFile(flags, nil)
	if err != nil {
		return fail("host tools run without a sandbox: " + err.Error())
	}
	cmd.ExtraFiles = []*os.File{plan}
	if err := cmd.Run(); err != nil {
		cause := refusal(err, stderr.String())
		if landlock >= 1 && probeLandlockOnly() {
			reason := "host tools run in the Landlock sandbox, not in namespaces: " + cause
			return State{Reason: reason, LandlockABI: landlock, LandlockOnly: true, Protections: landlockProtections(reason, landlock)}
		}
		reason := "host tools run without a sandbox: " + cause
		switch {
		case landlock > 0:
		case seccompFiltered():
			reason += "; the seccomp filter refuses Landlock too (Docker engines before 23: add landlock_create_ruleset, landlock_add_rule and landlock_restrict_self to the container's seccomp profile)"
		default:
			reason += "; this kernel has no Landlock either (lsm= on the kernel command line lacks landlock, or the kernel is older than 5.13)"
		}
		return fail(reason)
	}
	return State{Namespaces: true, LandlockABI: landlock, Protections: protections(true, "", landlock)}
}

// probeLandlockOnly starts the init in Landlock-only mode once.
func probeLandlockOnly() bool {
	cmd := exec.Command(sandboxExe)
	cmd.Args = []string{sandboxInitArg0}
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	plan, err := (*MaskSet)(nil).planFile("LT", nil)
	if err != nil {
		return false
	}
	cmd.ExtraFiles = []*os.File{plan}
	return cmd.Run() == nil
}

// refusal names the setting behind a refused sandbox, in one sentence.
func refusal(err error, stderr string) string {
	read := func(p string) string {
		b, _ := os.ReadFile(p)
		return strings.TrimSpace(string(b))
	}
	said := strings.ToLower(stderr) // C's strerror is capitalised, Go's is not
	switch {
	case read("/proc/sys/kernel/unprivileged_userns_clone") == "0" && os.Getuid() != 0:
		return "unprivileged user namespaces are off (sysctl kernel.unprivileged_userns_clone = 0)"
	case read("/proc/sys/user/max_user_namespaces") == "0":
		return "user namespaces are off (sysctl user.max_user_namespaces = 0)"
	case read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" && os.Getuid() != 0:
		return "AppArmor restricts unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns = 1)"
	case strings.Contains(said, syscall.EPERM.Error()) && seccompFiltered():
		if c := inContainer(); c != "" {
			return "the container's seccomp profile refuses user namespaces (" + c + "; Docker's default profile refuses them)"
		}
		return "a seccomp filter on hush refuses user namespaces (Seccomp: 2 in /proc/self/status)"
	case strings.Contains(said, syscall.ENOSPC.Error()):
		return "the user-namespace limit is reached here or in an enclosing namespace (sysctl user.max_user_namespaces)"
	}
	if msg := strings.TrimSpace(stderr); msg != "" {
		return "the kernel refused its namespaces (" + strings.TrimPrefix(msg, "hush sandbox: ") + ")"
	}
	return "the kernel refused its namespaces (" + err.Error() + ")"
}

// seccompFiltered: a seccomp filter is on hush (a container's profile).
func seccompFiltered() bool {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Seccomp:"); ok {
			return strings.TrimSpace(v) == "2"
		}
	}
	return false
}

// inContainer says how hush knows it runs in a container, or "".
func inContainer() string {
	if _, err := os.Stat("/.dockerenv"); err == nil {
		return "a Docker container: /.dockerenv"
	}
	if c := containerEnv.Load(); c != nil && *c != "" {
		return "a " + *c + " container: $container"
	}
	b, _ := os.ReadFile("/proc/1/cgroup")
	for _, k := range []string{"docker", "containerd", "kubepods", "libpod", "lxc"} {
		if strings.Contains(string(b), k) {
			return "a container: " + k + " in /proc/1/cgroup"
		}
	}
	return ""
}

func writeAll(fd int, p []byte) error {
	for len(p) > 0 {
		n, err := unix.Write(fd, p)
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}
