package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/telemetry"
	"github.com/hushcli/hush/executor/transcript"
	hsession "github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/bash"
	"github.com/hushcli/hush/tools/files"
	httptool "github.com/hushcli/hush/tools/http"
	"github.com/hushcli/hush/vault"
	"golang.org/x/net/http/httpproxy"
)

// modelFlags are the flags that pick the model, shared by chat and run.
type modelFlags struct {
	provider, baseURL, model, replay string
	yes, json                        bool
}

// sessionOptions is everything needed to start an agent session.
type sessionOptions struct {
	model    modelFlags
	prompter executor.Prompter // nil: non-interactive
	events   executor.Events
	// resume, if set, is the session to continue.
	resume *transcript.Session
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
	prov, err := a.newProvider(opts.model)
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
	var transcriptFile *os.File
	priorTurns := 0
	if r := opts.resume; r != nil {
		session, priorTurns = r.ID, r.LastTurn
		transcriptFile, err = transcript.Reopen(r)
	} else {
		transcriptFile, err = transcript.Create(a.dirs.Data, transcript.Header{ID: session, Project: dir, Provider: prov.Name(), Model: a.modelName(opts.model)})
	}
	if err != nil {
		return nil, nil, err
	}

	bashCfg := a.cfg.Tools[bash.Name]
	bashBox, err := a.hostSandbox(bash.Name)
	if err != nil {
		return nil, nil, err
	}
	if n := a.sandboxNotice(); n != "" {
		fmt.Fprintf(a.stderr, "hush: %s\n", n)
	}
	reg := executor.NewRegistry(bash.Tool{Timeout: bashCfg.Timeout.Duration, UnsafeSecretsInArgv: a.cfg.Unsafe.SecretsInArgv, Sandbox: bashBox})
	if dockerTool != nil {
		reg.Add(dockerTool)
	}
	if err := a.addInProcessTools(reg, dir); err != nil {
		return nil, nil, err
	}
	audit := auditlog.Open(filepath.Join(a.dirs.Data, auditlog.FileName))
	tel, err := a.openTelemetry(lv, session, dir, opts.model)
	if err != nil {
		transcriptFile.Close()
		return nil, nil, err
	}
	closeTel := func() {}
	if tel != nil {
		audit.Mirror(tel.Gate)
		opts.events = executor.Tee(opts.events, tel)
		closeTel = func() {
			if err := tel.Close(5 * time.Second); err != nil {
				fmt.Fprintf(a.stderr, "hush: %v\n", err)
			}
		}
	}
	// Background processes and MCP servers live as long as the session; MCP
	// servers start now, so a secret they need is asked for before the
	// first turn rather than in the middle of one.
	// Ctrl-C while they start gives up on the session at once instead of
	// waiting out a hung server's start_timeout; once started, the
	// servers' lives do not depend on this context.
	startCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// One snapshot cache for the process: the turn, background logs, MCP
	// servers and the panic handler scrub with the same vault version.
	extra, stopExtra, err := a.sessionTools(startCtx, gate, audit, session, lv, a.scrub, dir)
	interrupted := startCtx.Err() != nil
	stopSignals()
	if err == nil && interrupted {
		stopExtra()
		err = &exitError{130, errors.New("interrupted while the MCP servers were starting")}
	}
	if err != nil {
		transcriptFile.Close()
		closeTel()
		return nil, nil, err
	}
	for _, t := range extra {
		reg.Add(t)
	}
	system, err := a.systemPrompt(dir, reg, lv)
	if err != nil {
		stopExtra()
		transcriptFile.Close()
		closeTel()
		return nil, nil, err
	}
	agent := &executor.Agent{
		Provider:   prov,
		Tools:      reg,
		Gate:       gate,
		Audit:      audit,
		Vault:      lv,
		Scrub:      a.scrub,
		Ambient:    a.ambient,
		Dir:        dir,
		Policy:     func(tool string) tools.Policy { p, _, _ := a.policyFor(tool); return p },
		Events:     opts.events,
		Transcript: transcriptFile,
		Session:    session,
		PriorTurns: priorTurns,
		Compaction: a.compactPolicy(),
		System:     system,
		MaxSteps:   a.cfg.Turn.MaxSteps,

		UnsafeNoRedaction: a.cfg.Unsafe.NoRedaction,
	}
	return agent, func() { stopExtra(); transcriptFile.Close(); closeTel(); audit.Close() }, nil
}

// openTelemetry opens the [telemetry] export, if an endpoint is configured;
// its header values' ${NAME} are read from the vault by hush itself, as the
// model's API key is: no tool is involved.
func (a *app) openTelemetry(lv *vault.Layered, session, dir string, f modelFlags) (*telemetry.Exporter, error) {
	t := a.cfg.Telemetry
	if t.Endpoint == "" {
		return nil, nil
	}
	headers := map[string]string{}
	for k, v := range t.Headers {
		val, err := vault.Substitute(v, lv.Get)
		if err != nil {
			return nil, fmt.Errorf("telemetry.headers.%s in config.toml: %w", k, err)
		}
		headers[k] = val
	}
	return telemetry.Open(telemetry.Options{Endpoint: t.Endpoint, Headers: headers, HTTPClient: a.httpClient(),
		Version: version, Session: session, Project: dir, Model: firstNonEmpty(f.provider, a.cfg.Model.Provider) + "/" + a.modelName(f)})
}

// transcriptPath is the session's transcript file in the data dir.
func (a *app) transcriptPath(session string) string { return transcript.Path(a.dirs.Data, session) }

// modelName is the model the session talks to, as session.started and the
// transcript name it.
func (a *app) modelName(f modelFlags) string {
	if firstNonEmpty(f.provider, a.cfg.Model.Provider) == "replay" {
		return firstNonEmpty(f.replay, a.cfg.Model.Replay, "embedded leak check")
	}
	return firstNonEmpty(f.model, a.cfg.Model.Name)
}

// compactPolicy is config.toml's [compaction].
func (a *app) compactPolicy() executor.CompactPolicy {
	c := a.cfg.Compaction
	return executor.CompactPolicy{Auto: c.Auto == nil || *c.Auto, Window: c.ContextWindow, Threshold: c.Threshold, KeepTurns: c.KeepTurns}.Defaults()
}

// systemPrompt is config's turn.system, or the prompt built from the
// project (session.Prompt); it records which AGENTS.md files it carries
// for the banner.
func (a *app) systemPrompt(dir string, reg *executor.Registry, lv *vault.Layered) (string, error) {
	if a.cfg.Turn.System != "" {
		return a.cfg.Turn.System, nil
	}
	var names []string
	if all, err := lv.All(); err == nil {
		for n := range all {
			names = append(names, n)
		}
	}
	var toolNames []string
	for _, t := range reg.List() {
		toolNames = append(toolNames, t.Name())
	}
	prompt, ins, err := hsession.Prompt(context.Background(), hsession.PromptOptions{Dir: dir, ConfigDir: a.dirs.Config,
		Ambient: a.ambient, OS: runtime.GOOS, Now: time.Now(), Tools: toolNames, SecretNames: names})
	a.instructions = hsession.Loaded(ins)
	return prompt, err
}

// addInProcessTools registers the file tools, which apply the mask list
// themselves, and the http tool, which holds no vault.
func (a *app) addInProcessTools(reg *executor.Registry, dir string) error {
	masks, err := tools.NewMaskSet(tools.MaskOptions{Home: a.ambient["HOME"], ConfigDir: a.dirs.Config, DataDir: a.dirs.Data,
		RuntimeDir: a.ambient["XDG_RUNTIME_DIR"], BusAddress: a.ambient["DBUS_SESSION_BUS_ADDRESS"], DockerHost: a.ambient["DOCKER_HOST"], Project: dir})
	if err != nil {
		return err
	}
	for _, t := range files.Tools(masks.Masked, masks.MaskedResolved) {
		reg.Add(t)
	}
	h := a.cfg.Tools[httptool.Name]
	reg.Add(httptool.Tool{AllowPrivate: h.AllowPrivate, Timeout: h.Timeout.Duration, UserAgent: "hush/" + version})
	return nil
}

// newProvider builds the model provider from config.toml and flags. The
// agent's own API key is read from the vault by hush itself, ungated, and
// handed to the SDK in memory; it never enters any child's environment.
func (a *app) newProvider(f modelFlags) (provider.Provider, error) {
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
	opts := provider.Options{BaseURL: baseURL, APIKey: key, Model: firstNonEmpty(f.model, m.Name), HTTPClient: a.httpClient(), MaxRetries: 2}
	switch name {
	case "openai":
		return provider.NewOpenAI(opts)
	case "anthropic":
		return provider.NewAnthropic(opts)
	}
	return nil, fmt.Errorf("unknown provider %q: want openai, anthropic or replay", name)
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
