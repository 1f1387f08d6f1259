package session

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/toolset/background"
	"github.com/hushcli/hush/toolset/mcp"
)

// startTools starts what a session offers beyond the built-in tools: the
// background tool and the tools of every configured MCP server. Servers
// start now, before the first prompt, because the model must see their
// tools to call them and because a server that needs a secret asks the gate
// here — at start-up, where the user expects a question — not halfway
// through a turn. The returned func stops every server and every background
// process the user did not ask to keep, and says which ones it kept.
//
// denied names each server kept from starting for want of a credential
// (the gate refused a secret it needs, or it signs in with OAuth and no
// sign-in is stored), one phrase each, for hush run's exit status.
func startTools(ctx context.Context, opts Options, masks *sandbox.MaskSet, policy *sandbox.Policy, gate executor.Gate, audit *auditlog.Log, id string, network executor.Network) (ts []executor.Tool, stop func(), denied []string, err error) {
	bgBox, err := HostSandbox(opts.Config, masks, policy, background.Name)
	if err != nil {
		return nil, nil, nil, err
	}
	bg, err := background.New(background.Options{
		LogDir:  filepath.Join(opts.Dirs.Data, "background", id),
		Secrets: opts.Scrub,
		Sandbox: bgBox,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	servers, err := MCPServers(opts.Config, opts.Dirs.Config)
	if err != nil {
		bg.Close()
		return nil, nil, nil, err
	}
	if opts.Stderr != nil {
		// A key written literally in mcp.json (the format the README shows)
		// is said at start, as one in config.toml is.
		if fromJSON, err := config.LoadMCPJSON(filepath.Join(opts.Dirs.Config, config.MCPFileName)); err == nil {
			for _, w := range tools.LiteralSecrets(config.Config{}, fromJSON) {
				fmt.Fprintln(opts.Stderr, "hush: warning: "+w)
			}
		}
	}
	box, err := HostSandbox(opts.Config, masks, policy, "mcp")
	if err != nil {
		bg.Close()
		return nil, nil, nil, err
	}
	// With a person at the terminal, an OAuth server without a stored
	// sign-in signs in now; without one it is not started.
	var signIn *mcp.SignIn
	if opts.Prompter != nil && opts.Stderr != nil {
		signIn = &mcp.SignIn{Out: opts.Stderr}
	}
	mgr, err := StartMCP(ctx, MCPOptions{Sandbox: box, Servers: servers, Dir: opts.Dir, Ambient: opts.Ambient, Vault: opts.Vault,
		Scrub: opts.Scrub, Gate: gate, Audit: audit, Session: id, Version: opts.Version, Events: opts.Events,
		UnsafeNoCredentialFilter: opts.Config.Unsafe.NoCredentialFilter,
		Store:                    opts.Vault, SignIn: signIn, Notice: warnTo(opts.Stderr), Network: network})
	if err != nil {
		bg.Close()
		return nil, nil, nil, err
	}
	for _, st := range mgr.Status() {
		if ctx.Err() != nil {
			break // interrupted: the caller says so once
		}
		if st.State == mcp.NeedsSignIn {
			why := NeedsSignIn(st)
			fmt.Fprintln(opts.Stderr, "hush: "+why)
			denied = append(denied, why)
			continue
		}
		if st.State != mcp.Running && st.State != mcp.Disabled {
			fmt.Fprintf(opts.Stderr, "hush: mcp server %q %s\n", st.Name, st.Describe())
		}
		if st.State == mcp.Denied {
			why, _, _ := strings.Cut(st.Reason, " To allow it") // the rule to add was just shown
			denied = append(denied, fmt.Sprintf("mcp server %q was not started: %s", st.Name, strings.TrimSpace(why)))
		}
	}
	ts = []executor.Tool{background.Tool{M: bg}}
	for _, t := range mgr.Tools() {
		ts = append(ts, t)
	}
	stop = func() {
		mgr.Close()
		for _, k := range bg.Close() {
			fmt.Fprintf(opts.Stderr, "hush: background %s keeps running as asked (pid %d): %s\n  output: %s\n  stop it with: kill -TERM -- -%d (if it keeps running: kill -KILL -- -%d)\n",
				k.ID, k.PID, shorten(strings.Join(strings.Fields(k.Command), " "), 80), k.LogPath, k.PID, k.PID)
		}
	}
	return ts, stop, denied, nil
}

// NeedsSignIn says in one sentence that the OAuth server st has no usable
// sign-in: the command that signs in, why, and that its tools are not
// offered.
func NeedsSignIn(st mcp.Status) string {
	return fmt.Sprintf("mcp server %q needs `hush mcp login %s` at a terminal: %s, so its tools are unavailable", st.Name, st.Name, st.Reason)
}

// warnTo is a Notice that writes "hush: warning: ..." lines to w (nil: none).
func warnTo(w io.Writer) func(string) {
	if w == nil {
		return nil
	}
	return func(s string) { fmt.Fprintln(w, "hush: warning: "+s) }
}

// MCPOptions is what StartMCP needs: the servers, and the gate, audit log
// and vault their ${NAME} references are read through.
type MCPOptions struct {
	Servers []mcp.Server
	Dir     string
	Ambient map[string]string
	Vault   executor.SecretReader
	Scrub   *executor.SecretCache
	Gate    executor.Gate
	Audit   *auditlog.Log
	Session string
	Version string
	// Sandbox is the servers' sandbox; nil runs them without one.
	Sandbox *sandbox.Config
	// Events, if set, is told each gate decision (executor.AuditedTo).
	Events executor.Events

	UnsafeNoCredentialFilter bool

	// Store keeps OAuth servers' tokens (the vault); SignIn is the person
	// who signs in to one without a stored sign-in (nil: not started);
	// Notice receives one-line warnings.
	Store  mcp.SecretStore
	SignIn *mcp.SignIn
	Notice func(string)
	// Network is the session's egress proxy: a stdio server whose network
	// is "proxy" goes out only through it, bound by the secrets it was
	// granted. nil leaves the servers the network their sandbox gives.
	Network executor.Network
}

// StartMCP builds an MCP manager and starts the named servers (every
// enabled one when none is named). A server's ${NAME} reads go through
// executor.GatedVault over executor.Audited, with the server (mcp:<name>)
// as subject — the same chain as a tool call's.
func StartMCP(ctx context.Context, o MCPOptions, names ...string) (*mcp.Manager, error) {
	mgr, err := newMCP(o)
	if err != nil {
		return nil, err
	}
	mgr.Start(ctx, names...)
	return mgr, nil
}

// newMCP is StartMCP's manager, before anything starts.
func newMCP(o MCPOptions) (*mcp.Manager, error) {
	audited := executor.AuditedTo(o.Gate, o.Audit, o.Session, o.Events)
	grant := func(ctx context.Context, server string, turn int) tools.Grant {
		return executor.GatedVault(ctx, audited, mcp.Subject(server), turn, o.Vault).WithDetail("starting MCP server " + server).Get
	}
	var egressFor func(server string, secrets []string) func(context.Context, net.Listener)
	var local *tools.LocalServices
	if n := o.Network; n != nil && n.Proxied("mcp") {
		local = n.Local()
		egressFor = func(server string, secrets []string) func(context.Context, net.Listener) {
			subject := mcp.Subject(server)
			call := executor.NetCall{Tool: subject, Secrets: secrets, Ask: func(gateID, detail string) (executor.Verdict, error) {
				return audited.Decide(context.Background(), executor.Request{GateID: gateID, Subject: subject, Detail: detail})
			}}
			return func(ctx context.Context, l net.Listener) { n.Serve(ctx, l, call) }
		}
	}
	return mcp.NewManager(mcp.Options{
		Egress: egressFor, Local: local,
		Sandbox: o.Sandbox,
		Servers: o.Servers, Dir: o.Dir, Ambient: o.Ambient, Secrets: o.Scrub,
		Grant: grant, Version: o.Version, HTTPClient: HTTPClient(o.Ambient),
		UnsafeNoCredentialFilter: o.UnsafeNoCredentialFilter,
		Store:                    o.Store, SignIn: o.SignIn, Notice: o.Notice,
	})
}

// MCPServers is every configured MCP server, from config.toml's [mcp.NAME]
// and mcp.json in configDir. It reads mcp.json; a session calls it once, at
// Open.
func MCPServers(cfg config.Config, configDir string) ([]mcp.Server, error) {
	fromJSON, err := config.LoadMCPJSON(filepath.Join(configDir, config.MCPFileName))
	if err != nil {
		return nil, err
	}
	named, err := config.MCPServers(cfg.MCP, fromJSON)
	if err != nil {
		return nil, err
	}
	out := make([]mcp.Server, 0, len(named))
	for _, n := range named {
		transport := ""
		if n.Remote() {
			transport = n.Transport()
		}
		out = append(out, mcp.Server{Name: n.Name, URL: n.URL, Transport: transport, Headers: n.Headers,
			OAuth: n.OAuth, ClientID: n.ClientID, CallbackPort: n.CallbackPort, Command: n.Command, Args: n.Args, Env: n.Env, Dir: n.Dir,
			StartTimeout: n.StartTimeout.Duration, CallTimeout: n.Timeout.Duration, Disabled: n.Disabled, Source: n.Source})
	}
	return out, nil
}

func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// Standalone is what `hush mcp list` and `hush mcp tools` start servers
// with, outside a chat session: config.toml's rules and, when Prompter is
// set (a terminal), a person to ask; decisions go to the audit log in
// DataDir, its notices to Notice.
type Standalone struct {
	Config   config.Config
	Servers  []mcp.Server
	Dir      string
	DataDir  string
	Ambient  map[string]string
	Vault    executor.SecretReader
	Scrub    *executor.SecretCache
	Prompter executor.Prompter
	Notice   func(string)
	Version  string
	// Sandbox is the servers' sandbox (HostSandbox for "mcp"), as in a
	// session; nil runs them without one.
	Sandbox *sandbox.Config
}

// Start starts the named servers (every enabled one when none). An OAuth
// server without a stored sign-in is not started: `hush mcp login` signs in.
func (s Standalone) Start(ctx context.Context, names ...string) (*mcp.Manager, error) {
	return StartMCP(ctx, s.options(nil), names...)
}

func (s Standalone) options(signIn *mcp.SignIn) MCPOptions {
	audit := auditlog.Open(filepath.Join(s.DataDir, auditlog.FileName))
	audit.Notice = s.Notice
	store, _ := s.Vault.(mcp.SecretStore)
	return MCPOptions{Sandbox: s.Sandbox, Servers: s.Servers, Dir: s.Dir, Ambient: s.Ambient, Vault: s.Vault, Scrub: s.Scrub,
		Gate: Gate(s.Config, s.Prompter, false), Audit: audit, Session: NewID("mcp"), Version: s.Version,
		UnsafeNoCredentialFilter: s.Config.Unsafe.NoCredentialFilter, Store: store, SignIn: signIn, Notice: s.Notice}
}

// Login is `hush mcp login SERVER`: it signs in to the OAuth server name
// at the terminal (in, out), whatever sign-in is stored, stores the new
// tokens in the vault and says so on out.
func (s Standalone) Login(ctx context.Context, name string, in io.Reader, out io.Writer) error {
	mgr, err := newMCP(s.options(&mcp.SignIn{Out: out, In: in}))
	if err != nil {
		return err
	}
	defer mgr.Close()
	signedIn, err := mgr.Login(ctx, name)
	if err != nil {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		return err
	}
	n := 0
	if list, err := mgr.ServerTools(name); err == nil {
		n = len(list)
	}
	count := fmt.Sprintf("%d tools", n)
	if n == 1 {
		count = "1 tool"
	}
	if !signedIn {
		fmt.Fprintf(out, "mcp server %q let hush in without a sign-in (%s); nothing was stored\n", name, count)
		return nil
	}
	secret := config.OAuthTokenName(name)
	fmt.Fprintf(out, "mcp server %q is connected (%s). Sessions read its tokens through the gate, as vault.read:%s\n"+
		"for mcp:%s. To let hush run and CI use them without asking, add to config.toml:\n\n"+
		"[[rules]]\ngate = \"vault.read:%s\"\nsubject = \"mcp:%s\"\ndecision = \"allow\"\n",
		name, count, secret, name, secret, name)
	return nil
}
