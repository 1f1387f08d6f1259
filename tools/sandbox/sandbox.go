// Package sandbox contains a host tool: it starts one child process in a
// world of its own (Linux namespaces set up in C, sandbox.c, before the
// tool runs) and says what this machine's kernel gives (Status).
//
// It owns the list of what a tool must not see (MaskSet, masks.go), which
// the file tools in toolset/files and docker-bash consult too, and `hush
// sandbox show`'s rendering of it (Render).
//
// It takes a narrow start request — an *exec.Cmd already holding the
// program, arguments, directory, environment and credential, plus a
// *Config — and imports nothing of package tools, which owns the spawn
// contract (tools.Spec, tools.Command) and is the only caller of Prepare.
// It never builds an environment and never reads hush's own.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// Config is how one host child is contained (see sandbox_linux.go). A nil
// *Config in a tools.Spec runs the child as before: a new session, nothing
// more. The session makes one per tool from [sandbox] in config.toml and
// gives it to every Spec of that tool.
type Config struct {
	// Masks are the paths the child does not see. nil hides nothing but
	// still gives the child its own PID, mount and user namespaces.
	Masks *MaskSet
	// Policy is the world the tool lives in (policy.go): what `hush
	// sandbox show` prints, what the Landlock fallback allows, and, with
	// Constructed, what its root is built from.
	Policy *Policy
	// Constructed builds the tool's root from Policy (hush_sb_world in
	// sandbox.c) instead of the host's root with Masks over it.
	Constructed bool
	// NoNetwork gives the child a network namespace of its own, with only
	// a loopback interface.
	NoNetwork bool
	// EnvLayer hides the project's .env family with the .env layer
	// (envfs_linux.go) where hush may open FUSE, instead of a bind mask per
	// file: an editor's save by rename does not show a running process the
	// new file. For the long-lived tools (background processes, MCP
	// servers). A bash call keeps the masks: under the layer a project
	// subdirectory is a mount point, which the call could not remove or
	// rename (rm -rf dist), and a call ends within its timeout.
	EnvLayer bool
	// Proxy gives the child a network namespace with only a loopback
	// interface, where hush listens at ProxyAddr for its egress proxy
	// (Direct.ProxyListener): the tool's one way out. A child started
	// through the init (another user's) gets the namespace without the
	// listener: no network at all. The Landlock world has no network
	// namespace: there the listener is on the host's 127.0.0.1 at a port
	// of the call's own, the only TCP port the tool may connect to, and
	// seccomp refuses UDP, raw and packet sockets (landlockStart).
	Proxy bool
	// Forward, with Proxy, are ports to listen on at 127.0.0.1 in the
	// child's network (Direct.Forwarded): the session's local services,
	// which hush forwards to the network they run in (NetNS.Connect).
	Forward []int
	// Limits bound each call of the tool (limits.go).
	Limits Limits
	// Required refuses to start the child when the kernel refuses the
	// namespaces ([sandbox] required = true); otherwise it runs without
	// them, and the session has said so once at start.
	Required bool
}

// ProxyPort is the port of hush's egress proxy inside a tool's network
// namespace, on 127.0.0.1 (ProxyAddr): below 1024, so no tool of the
// user's can bind it before hush does, and out of the way of the ports
// dev servers use.
const ProxyPort = 1023

// ProxyAddr is where a tool reaches hush's egress proxy.
const ProxyAddr = "127.0.0.1:1023"

// ErrRefused is returned by Prepare for a Config with Required set
// where the kernel refuses the namespaces; the message says which setting.
var ErrRefused = errors.New("the sandbox is required ([sandbox] required = true) but unavailable")

// Protection is one protection of the sandbox and whether this machine
// gives it.
type Protection struct {
	// Name is stable: `hush audit` rows and tests key on it.
	Name string
	On   bool
	// Why: what it stops when On, and why it is missing otherwise.
	Why string
}

// What the mount protection gives: the constructed world (the default),
// or, with [sandbox] constructed = false, masks over the host's root.
const (
	MountsWorld = "the tool's root is built from an allowlist (hush sandbox show): the project, the system read-only, a private home and /tmp; " +
		"nothing else of this machine, no kernel keys; hush's executable is read-only"
	MountsMasks = "hush's files, the keyring, Docker and key agents' (ssh-agent, gpg-agent) sockets, the project's .env files, home credential stores and private keys are hidden; hush's executable and ~/.ssh are read-only"
)

// Names of the protections, in State.Protections order.
const (
	ProtectPID      = "pid-namespace"
	ProtectMounts   = "mount-masks"
	ProtectUser     = "user-namespace"
	ProtectNoPrivs  = "no-new-privs"
	ProtectLifetime = "lifetime"
	ProtectAbstract = "abstract-sockets"
	ProtectNetwork  = "network-namespace"
	// ProtectDotEnvRename: the .env layer (envfs_linux.go) hides the
	// project's .env family even from a tool that outlives an editor's
	// rename save; off where hush may open no FUSE device.
	ProtectDotEnvRename = "dotenv-rename"
	// Where the kernel refuses the namespaces, the Landlock world's
	// (landlockProtections).
	ProtectLandlockView = "landlock-view"
	ProtectPtraceScope  = "ptrace-scope"
	ProtectKernelKeys   = "kernel-keys"
	ProtectUnixSockets  = "unix-sockets"
)

// State is what the sandbox gives a host tool on this machine.
//
// For `hush audit` rows and the session banner: call Status() once;
// if !state.Namespaces, print state.Reason (one sentence naming the kernel
// setting) at start, and show each Protection with On false as a failed row
// with its Why — never as a pass. state.Protections lists every protection,
// on or off, with a stable Name.
type State struct {
	// Namespaces: the PID, mount and user namespaces, mount masks, own
	// /proc and lifetime all work (a real sandboxed child was started).
	Namespaces bool
	// Reason is empty when Namespaces, else one sentence naming the
	// setting that refused them.
	Reason string
	// LandlockABI is the kernel's Landlock version (0: none). From 6 the
	// sandbox scopes abstract unix sockets and signals.
	LandlockABI int
	// LandlockOnly: the namespaces are refused, and host tools get the
	// Landlock world instead (landlock_linux.go, docs/sandbox.md): the
	// same allowlist as Landlock rules, a private HOME and TMPDIR,
	// seccomp, no_new_privs and Landlock's ptrace and scope rules. What it
	// cannot give is in Protections, off, each saying what is missing.
	LandlockOnly bool
	Protections  []Protection
}

var sandboxProbe struct {
	once  sync.Once
	state State
}

// Status probes the machine once per process (by starting one
// sandboxed child that exits at once) and returns what the sandbox gives.
func Status() State {
	sandboxProbe.once.Do(func() { sandboxProbe.state = probeSandbox() })
	return sandboxProbe.state
}

func protections(ns bool, reason string, landlock int) []Protection {
	off := func(name, why string) Protection {
		if ns {
			return Protection{Name: name, On: true, Why: why}
		}
		return Protection{Name: name, Why: reason}
	}
	ps := []Protection{
		off(ProtectPID, "the tool sees only its own processes, with its own /proc: not hush, not another tool"),
		off(ProtectMounts, MountsWorld),
		off(ProtectUser, "even as root the tool holds no capability over the host: no ptrace, no /proc/<pid>/mem, no remount"),
		off(ProtectNoPrivs, "no setuid or file-capability gain"),
		off(ProtectLifetime, "everything the tool starts dies with the call and with hush"),
		off(ProtectNetwork, "a tool whose network is off gets only a loopback interface"),
	}
	if ns {
		ps = append(ps, envLayerProtection())
	}
	switch {
	case !ns:
		ps = append(ps, Protection{Name: ProtectAbstract, Why: reason})
	case landlock >= 6:
		ps = append(ps, Protection{Name: ProtectAbstract, On: true, Why: "Landlock scope: no abstract unix socket or signal outside the sandbox"})
	default:
		ps = append(ps, Protection{Name: ProtectAbstract, Why: "the kernel's Landlock is older than ABI 6, so an abstract unix socket (a session bus at an abstract address) stays reachable"})
	}
	return ps
}

// plans caches the sandbox's plan files by content (sandbox_linux.go).
type plans struct {
	mu    sync.Mutex
	files map[string]*os.File
}

// containerEnv is $container from hush's start-up snapshot
// (NoteStartupEnv): systemd-nspawn, podman and others set it.
var containerEnv atomic.Pointer[string]

// NoteStartupEnv gives the sandbox's diagnosis of a refusal what it reads
// from hush's start-up snapshot: only $container.
func NoteStartupEnv(env map[string]string) {
	c := env["container"]
	containerEnv.Store(&c)
}

// landlockProtections are the protections of the Landlock world on a
// kernel with Landlock ABI abi, where the namespaces were refused for
// reason: what holds, and, off, exactly what does not.
func landlockProtections(reason string, abi int) []Protection {
	on := func(name, why string) Protection { return Protection{Name: name, On: true, Why: why} }
	off := func(name, why string) Protection { return Protection{Name: name, Why: why + " (" + reason + ")"} }
	ps := []Protection{
		on(ProtectLandlockView, "Landlock allowlist: the tool reaches the system and its PATH read-only, the project and build caches read-write, "+
			"a private HOME and TMPDIR; not hush's files, the vault, another profile's dirs, the rest of the home, /tmp or the user's runtime dir"),
		on(ProtectPtraceScope, "Landlock: no ptrace of hush or of another tool, and their /proc/<pid>/environ and /proc/<pid>/mem are unreadable"),
		on(ProtectKernelKeys, "seccomp: keyctl, add_key and request_key fail (no kernel key is read by its serial)"),
		on(ProtectUnixSockets, "seccomp: no unix socket of the user's (X server, ssh ControlMaster, session bus, Docker) unless the config names it"),
		on(ProtectNoPrivs, "no setuid or file-capability gain"),
		on(ProtectNetwork, "a tool whose network is \"proxy\" (the default) connects over TCP only to its call's port (Landlock's TCP rule), where hush's egress proxy "+
			"listens on the host's 127.0.0.1 and answers only the call's processes, and gets no UDP, raw or packet socket (seccomp); "+
			"but the rule names a port, not an address: a server anywhere that listens on that port is reached directly. "+
			"One whose network is off gets no internet socket at all, loopback included"),
		off(ProtectPID, "no PID namespace: the tool lists every process and reads their command lines (ps); not their environment or memory"),
		off(ProtectMounts, "Landlock grants whole trees: the project's .env family is readable and writable to the tool, "+
			"and nothing inside the project or a build cache can be made read-only (hush's executable, if it lives there)"),
		off(ProtectUser, "no user namespace: a root tool stays the host's root, with Docker's default capabilities and only Landlock and seccomp around it"),
		off(ProtectLifetime, "a process the tool starts in a session of its own (setsid cmd &) outlives the call and hush"),
	}
	if abi >= 6 {
		ps = append(ps, on(ProtectAbstract, "Landlock scope: no abstract unix socket or signal outside the tool"))
	} else {
		ps = append(ps, off(ProtectAbstract, fmt.Sprintf("this kernel's Landlock (ABI %d) has no scopes: the tool can signal hush and reach an abstract unix socket", abi)))
	}
	return ps
}
