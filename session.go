package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/bash"
	"github.com/hushcli/hush/vault"
	"golang.org/x/net/http/httpproxy"
)

// modelFlags are the flags that pick the model, shared by chat and run.
type modelFlags struct {
	provider, baseURL, model, replay string
	yes, json, plain                 bool
}

// sessionOptions is everything needed to start an agent session.
type sessionOptions struct {
	model    modelFlags
	prompter executor.Prompter // nil: non-interactive
	events   executor.Events
}

// newAgent wires config, vault, gate, audit log, provider and tools.
func (a *app) newAgent(opts sessionOptions) (*executor.Agent, func(), error) {
	if err := a.init(); err != nil {
		return nil, nil, err
	}
	lv, err := a.openVault()
	if err != nil {
		return nil, nil, err
	}
	dir, err := a.projectDir()
	if err != nil {
		return nil, nil, err
	}
	prov, err := a.newProvider(opts.model, noticeFor(opts.events, a.stderr))
	if err != nil {
		return nil, nil, err
	}
	dockerTool, err := a.dockerbashTool()
	if err != nil {
		return nil, nil, err
	}
	rules := make([]executor.Rule, 0, len(a.cfg.Rules))
	for _, r := range a.cfg.Rules {
		rules = append(rules, executor.Rule{Gate: r.Gate, Subject: r.Subject, Decision: executor.Decision(r.Decision)})
	}
	gate := &executor.RuleGate{Rules: rules, Prompter: opts.prompter, AutoApproveTools: opts.model.yes}

	session := time.Now().UTC().Format("20060102T150405Z") + fmt.Sprintf("-%d", os.Getpid())
	transcriptPath := filepath.Join(a.dirs.Data, "transcripts", session+".jsonl")
	if err := os.MkdirAll(filepath.Dir(transcriptPath), 0o700); err != nil {
		return nil, nil, fmt.Errorf("create transcript dir: %w", err)
	}
	transcript, err := os.OpenFile(transcriptPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open transcript: %w", err)
	}

	bashCfg := a.cfg.Tools[bash.Name]
	reg := executor.NewRegistry(bash.Tool{Timeout: bashCfg.Timeout.Duration, UnsafeSecretsInArgv: a.cfg.Unsafe.SecretsInArgv})
	if dockerTool != nil {
		reg.Add(dockerTool)
	}
	audit := executor.OpenAudit(filepath.Join(a.dirs.Data, executor.AuditFileName))
	// Background processes and MCP servers live as long as the session; MCP
	// servers start now, so a secret they need is asked for before the
	// first turn rather than in the middle of one.
	// Ctrl-C while they start gives up on the session at once instead of
	// waiting out a hung server's start_timeout; once started, the
	// servers' lives do not depend on this context.
	startCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	extra, stopExtra, err := a.sessionTools(startCtx, gate, audit, session, lv, dir)
	interrupted := startCtx.Err() != nil
	stopSignals()
	if err == nil && interrupted {
		stopExtra()
		err = &exitError{130, errors.New("interrupted while the MCP servers were starting")}
	}
	if err != nil {
		transcript.Close()
		return nil, nil, err
	}
	for _, t := range extra {
		reg.Add(t)
	}
	agent := &executor.Agent{
		Provider:       prov,
		Tools:          reg,
		Gate:           gate,
		Audit:          audit,
		Vault:          lv,
		Secrets:        lv.All,
		SecretsVersion: lv.Version,
		Ambient:        a.ambient,
		Dir:            dir,
		Policy:         func(tool string) tools.Policy { p, _, _ := a.policyFor(tool); return p },
		Events:         opts.events,
		Transcript:     transcript,
		Session:        session,
		System:         a.systemPrompt(dir),
		MaxSteps:       a.cfg.Turn.MaxSteps,

		UnsafeNoRedaction: a.cfg.Unsafe.NoRedaction,
	}
	return agent, func() { stopExtra(); transcript.Close(); audit.Close() }, nil
}

func (a *app) systemPrompt(dir string) string {
	if a.cfg.Turn.System != "" {
		return a.cfg.Turn.System
	}
	return "You are hush, a coding agent working in the project directory " + dir + ". " +
		"Use the tools to inspect and change the project. Tools start with a minimal environment and no credentials; " +
		"when a command needs a secret, pass it as an env entry referencing the vault, like {\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"}, " +
		"and the user will be asked. Secret values appear in output as [REDACTED:NAME]. Be concise."
}

// newProvider builds the model provider from config.toml and flags. The
// agent's own API key is read from the vault by hush itself, ungated, and
// handed to the SDK in memory; it never enters any child's environment.
func (a *app) newProvider(f modelFlags, notice func(string)) (provider.Provider, error) {
	m := a.cfg.Model
	name := firstNonEmpty(f.provider, m.Provider)
	if name == "" {
		return nil, errors.New("no model configured: run `hush setup`, set [model] in config.toml, or pass --provider openai|anthropic|replay")
	}
	if name == "replay" {
		file := firstNonEmpty(f.replay, m.Replay)
		if file == "" {
			return provider.NewReplayBytes("embedded leak-check replay", provider.DefaultReplay)
		}
		return provider.NewReplay(file)
	}
	if f.replay != "" {
		return nil, fmt.Errorf("--replay needs --provider replay (got %s)", name)
	}
	baseURL := firstNonEmpty(f.baseURL, m.BaseURL)
	if baseURL != "" {
		if u, err := url.Parse(baseURL); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("base URL %q is not a URL like https://api.example.com/v1", baseURL)
		}
	}
	key := ""
	if m.APIKey != "" {
		lv, err := a.openVault()
		if err != nil {
			return nil, err
		}
		key, err = vault.Substitute(m.APIKey, lv.Get)
		if err != nil {
			return nil, fmt.Errorf("model.api_key in config.toml: %w", err)
		}
	} else if !isLocalURL(baseURL) {
		// No reference configured: the conventional vault name.
		conventional := map[string]string{"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}[name]
		if lv, err := a.openVault(); err == nil && conventional != "" {
			key, _ = lv.Get(conventional)
		}
	}
	opts := provider.Options{BaseURL: baseURL, APIKey: key, Model: firstNonEmpty(f.model, m.Name), HTTPClient: a.httpClient(), MaxRetries: 2,
		ConnectTimeout: m.ConnectTimeout.Duration, FirstByteTimeout: m.FirstByteTimeout.Duration, Notice: notice}
	switch name {
	case "openai":
		return provider.NewOpenAI(opts)
	case "anthropic":
		return provider.NewAnthropic(opts)
	}
	return nil, fmt.Errorf("unknown provider %q: want openai, anthropic or replay", name)
}

// noticer is the optional capability of an Events that shows connection
// notes (ui.Chat); others get them on stderr.
type noticer interface{ Notice(string) }

func noticeFor(events executor.Events, stderr io.Writer) func(string) {
	if n, ok := events.(noticer); ok {
		return n.Notice
	}
	return func(s string) { fmt.Fprintf(stderr, "hush: %s\n", s) }
}

// httpClient uses the proxy settings hush was started with, from its
// in-memory snapshot, since its own environment no longer holds them.
func (a *app) httpClient() *http.Client {
	get := func(names ...string) string {
		for _, n := range names {
			if v := a.ambient[n]; v != "" {
				return v
			}
		}
		return ""
	}
	pc := httpproxy.Config{
		HTTPProxy:  get("HTTP_PROXY", "http_proxy"),
		HTTPSProxy: get("HTTPS_PROXY", "https_proxy"),
		NoProxy:    get("NO_PROXY", "no_proxy"),
	}
	proxy := pc.ProxyFunc()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }
	return &http.Client{Transport: tr}
}

func isLocalURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// runTurn runs one turn with Ctrl-C (ctx) cancelling it.
func runTurn(ctx context.Context, agent *executor.Agent, history []provider.Message, prompt string) ([]provider.Message, error) {
	return agent.Turn(ctx, history, strings.TrimSpace(prompt))
}
