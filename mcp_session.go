package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/background"
	"github.com/hushcli/hush/tools/mcp"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
	"golang.org/x/term"
)

// sessionTools starts what a session offers beyond the built-in tools: the
// background tool and the tools of every configured MCP server. Servers
// start now, before the first prompt, because the model must see their
// tools to call them and because a server that needs a secret asks the gate
// here — at start-up, where the user expects a question — not halfway
// through a turn. The returned func stops every server and every background
// process the user did not ask to keep, and says which ones it kept.
func (a *app) sessionTools(ctx context.Context, gate executor.Gate, audit *auditlog.Log, session string, lv *vault.Layered, scrub *executor.SecretCache, dir string) ([]executor.Tool, func(), error) {
	bgBox, err := a.hostSandbox(background.Name)
	if err != nil {
		return nil, nil, err
	}
	bg, err := background.New(background.Options{
		LogDir:  filepath.Join(a.dirs.Data, "background", session),
		Secrets: scrub,
		Sandbox: bgBox,
	})
	if err != nil {
		return nil, nil, err
	}
	mgr, err := a.startMCP(ctx, gate, audit, session, lv, scrub, dir)
	if err != nil {
		return nil, nil, err
	}
	for _, st := range mgr.Status() {
		if ctx.Err() != nil {
			break // interrupted: the caller says so once
		}
		if st.State != mcp.Running && st.State != mcp.Disabled {
			fmt.Fprintf(a.stderr, "hush: mcp server %q %s\n", st.Name, st.Describe())
		}
	}
	ts := []executor.Tool{background.Tool{M: bg}}
	for _, t := range mgr.Tools() {
		ts = append(ts, t)
	}
	stop := func() {
		mgr.Close()
		for _, k := range bg.Close() {
			fmt.Fprintf(a.stderr, "hush: background %s keeps running as asked (pid %d): %s\n  output: %s\n  stop it with: kill -TERM -- -%d\n",
				k.ID, k.PID, shorten(strings.Join(strings.Fields(k.Command), " "), 80), k.LogPath, k.PID)
		}
	}
	return ts, stop, nil
}

// startMCP builds the session's MCP manager from config.toml and mcp.json
// and starts every enabled server.
func (a *app) startMCP(ctx context.Context, gate executor.Gate, audit *auditlog.Log, session string, lv *vault.Layered, scrub *executor.SecretCache, dir string) (*mcp.Manager, error) {
	servers, err := a.mcpServers()
	if err != nil {
		return nil, err
	}
	box, err := a.hostSandbox("mcp")
	if err != nil {
		return nil, err
	}
	mgr, err := mcp.NewManager(mcp.Options{
		Sandbox: box,
		Servers: servers, Dir: dir, Ambient: a.ambient, Secrets: scrub,
		Grant: mcpGrant(gate, audit, session, lv), Version: version, HTTPClient: a.httpClient(),
		UnsafeNoCredentialFilter: a.cfg.Unsafe.NoCredentialFilter,
	})
	if err != nil {
		return nil, err
	}
	mgr.Start(ctx)
	return mgr, nil
}

// mcpServers is every configured MCP server, from config.toml and mcp.json.
func (a *app) mcpServers() ([]mcp.Server, error) {
	if err := a.init(); err != nil {
		return nil, err
	}
	fromJSON, err := config.LoadMCPJSON(filepath.Join(a.dirs.Config, config.MCPFileName))
	if err != nil {
		return nil, err
	}
	named, err := config.MCPServers(a.cfg.MCP, fromJSON)
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

// mcpGrant is the vault as a starting MCP server sees it: the executor's
// gated vault over the audited gate, with the server as subject.
func mcpGrant(gate executor.Gate, audit *auditlog.Log, session string, v executor.SecretReader) func(context.Context, string, int) tools.Grant {
	audited := executor.Audited(gate, audit, session)
	return func(ctx context.Context, server string, turn int) tools.Grant {
		return executor.GatedVault(ctx, audited, mcp.Subject(server), turn, v).WithDetail("starting MCP server " + server).Get
	}
}

// mcpGate is the gate of a command that is not a chat session
// (`hush mcp list`): config.toml's rules, and the terminal when there is one.
func (a *app) mcpGate() *executor.RuleGate {
	rules := make([]executor.Rule, 0, len(a.cfg.Rules))
	for _, r := range a.cfg.Rules {
		rules = append(rules, executor.Rule{Gate: r.Gate, Subject: r.Subject, Decision: executor.Decision(r.Decision)})
	}
	g := &executor.RuleGate{Rules: rules}
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		g.Prompter = &wizard.Prompter{In: a.stdin, Out: a.stdout, Accessible: a.ambient["ACCESSIBLE"] != ""}
	}
	return g
}

// mcpSessionName names a one-off command's entries in the audit log.
func mcpSessionName(name string) string {
	return name + "-" + time.Now().UTC().Format("20060102T150405Z") + fmt.Sprintf("-%d", os.Getpid())
}
