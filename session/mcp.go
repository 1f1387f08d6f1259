package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/selftest"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/background"
	"github.com/hushcli/hush/tools/mcp"
)

// startTools starts what a session offers beyond the built-in tools: the
// background tool and the tools of every configured MCP server. Servers
// start now, before the first prompt, because the model must see their
// tools to call them and because a server that needs a secret asks the gate
// here — at start-up, where the user expects a question — not halfway
// through a turn. The returned func stops every server and every background
// process the user did not ask to keep, and says which ones it kept.
func startTools(ctx context.Context, opts Options, masks *tools.MaskSet, gate executor.Gate, audit *auditlog.Log, id string) ([]executor.Tool, func(), error) {
	bgBox, err := HostSandbox(opts.Config, masks, background.Name)
	if err != nil {
		return nil, nil, err
	}
	bg, err := background.New(background.Options{
		LogDir:  filepath.Join(opts.Dirs.Data, "background", id),
		Secrets: opts.Scrub,
		Sandbox: bgBox,
	})
	if err != nil {
		return nil, nil, err
	}
	servers, err := MCPServers(opts.Config, opts.Dirs.Config)
	if err != nil {
		bg.Close()
		return nil, nil, err
	}
	if opts.Stderr != nil {
		// A key written literally in mcp.json (the format the README shows)
		// is said at start, as one in config.toml is.
		if fromJSON, err := config.LoadMCPJSON(filepath.Join(opts.Dirs.Config, config.MCPFileName)); err == nil {
			for _, w := range selftest.LiteralSecrets(config.Config{}, fromJSON) {
				fmt.Fprintln(opts.Stderr, "hush: warning: "+w)
			}
		}
	}
	box, err := HostSandbox(opts.Config, masks, "mcp")
	if err != nil {
		bg.Close()
		return nil, nil, err
	}
	mgr, err := StartMCP(ctx, MCPOptions{Sandbox: box, Servers: servers, Dir: opts.Dir, Ambient: opts.Ambient, Vault: opts.Vault,
		Scrub: opts.Scrub, Gate: gate, Audit: audit, Session: id, Version: opts.Version, Events: opts.Events,
		UnsafeNoCredentialFilter: opts.Config.Unsafe.NoCredentialFilter})
	if err != nil {
		bg.Close()
		return nil, nil, err
	}
	for _, st := range mgr.Status() {
		if ctx.Err() != nil {
			break // interrupted: the caller says so once
		}
		if st.State != mcp.Running && st.State != mcp.Disabled {
			fmt.Fprintf(opts.Stderr, "hush: mcp server %q %s\n", st.Name, st.Describe())
		}
	}
	ts := []executor.Tool{background.Tool{M: bg}}
	for _, t := range mgr.Tools() {
		ts = append(ts, t)
	}
	stop := func() {
		mgr.Close()
		for _, k := range bg.Close() {
			fmt.Fprintf(opts.Stderr, "hush: background %s keeps running as asked (pid %d): %s\n  output: %s\n  stop it with: kill -TERM -- -%d\n",
				k.ID, k.PID, shorten(strings.Join(strings.Fields(k.Command), " "), 80), k.LogPath, k.PID)
		}
	}
	return ts, stop, nil
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
	Sandbox *tools.Sandbox
	// Events, if set, is told each gate decision (executor.AuditedTo).
	Events executor.Events

	UnsafeNoCredentialFilter bool
}

// StartMCP builds an MCP manager and starts the named servers (every
// enabled one when none is named). A server's ${NAME} reads go through
// executor.GatedVault over executor.Audited, with the server (mcp:<name>)
// as subject — the same chain as a tool call's.
func StartMCP(ctx context.Context, o MCPOptions, names ...string) (*mcp.Manager, error) {
	audited := executor.AuditedTo(o.Gate, o.Audit, o.Session, o.Events)
	grant := func(ctx context.Context, server string, turn int) tools.Grant {
		return executor.GatedVault(ctx, audited, mcp.Subject(server), turn, o.Vault).WithDetail("starting MCP server " + server).Get
	}
	mgr, err := mcp.NewManager(mcp.Options{
		Sandbox: o.Sandbox,
		Servers: o.Servers, Dir: o.Dir, Ambient: o.Ambient, Secrets: o.Scrub,
		Grant: grant, Version: o.Version, HTTPClient: HTTPClient(o.Ambient),
		UnsafeNoCredentialFilter: o.UnsafeNoCredentialFilter,
	})
	if err != nil {
		return nil, err
	}
	mgr.Start(ctx, names...)
	return mgr, nil
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
		out = append(out, mcp.Server{Name: n.Name, URL: n.URL, Transport: transport, Headers: n.Headers, Command: n.Command, Args: n.Args, Env: n.Env, Dir: n.Dir,
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
	Sandbox *tools.Sandbox
}

// Start starts the named servers (every enabled one when none).
func (s Standalone) Start(ctx context.Context, names ...string) (*mcp.Manager, error) {
	audit := auditlog.Open(filepath.Join(s.DataDir, auditlog.FileName))
	audit.Notice = s.Notice
	return StartMCP(ctx, MCPOptions{Sandbox: s.Sandbox, Servers: s.Servers, Dir: s.Dir, Ambient: s.Ambient, Vault: s.Vault, Scrub: s.Scrub,
		Gate: Gate(s.Config, s.Prompter, false), Audit: audit, Session: NewID("mcp"), Version: s.Version,
		UnsafeNoCredentialFilter: s.Config.Unsafe.NoCredentialFilter}, names...)
}
