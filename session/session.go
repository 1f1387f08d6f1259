// Package session assembles what one agent session needs — the model
// provider, the tools, the MCP servers, the permission gate, the audit log,
// the vault and each tool's spawn policy — from configuration that is
// already read, and stops all of it again. It sits above toolset/ and
// executor/ and below package main, whose commands call it. It imports
// none of ui, wizard or selftest (tools/layering_test.go).
//
// It never reads a secret for a tool itself: every read a tool or an MCP
// server makes goes through executor.GatedVault over executor.Audited. The
// one ungated read is the model's own API key, which hush hands to the SDK
// in memory and no child ever sees.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/telemetry"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/toolset/background"
	"github.com/hushcli/hush/toolset/bash"
	"github.com/hushcli/hush/toolset/dockerbash"
	"github.com/hushcli/hush/toolset/files"
	httptool "github.com/hushcli/hush/toolset/http"
	"github.com/hushcli/hush/vault"
)

// ErrInterrupted is Open's error when ctx ended while the MCP servers were
// starting; everything started so far is stopped.
var ErrInterrupted = errors.New("interrupted while the MCP servers were starting")

// ErrWaitInterrupted is Open's error when ctx ended while it waited
// (--wait) for another hush to close the session.
var ErrWaitInterrupted = errors.New("interrupted while waiting for the other hush to close the session")

// Model is what picks the model: the flags of `hush chat` and `hush run`,
// over config.toml's [model].
type Model struct {
	Provider, BaseURL, Name, Replay string
	// Yes approves tool.run:* requests that would be asked (--yes); it
	// never approves a vault read.
	Yes bool
	// Allow holds the --allow flags: TOOL or TOOL(PATTERN), e.g.
	// bash(npm test:*), each allowing those calls for this run only.
	Allow []string
	// Notice receives the provider's one-line notes ("openai: retrying
	// (2/3) after HTTP 503"). Nil: Open sends them to the Events' Notice
	// method if it has one, else to Stderr.
	Notice func(string)
}

// noticer is the optional capability of an Events that shows connection
// notes itself (the chat UI).
type noticer interface{ Notice(string) }

// Options is everything Open needs. Every field without a stated default
// is required: nothing falls back to the process's own directory or
// environment.
type Options struct {
	Config  config.Config // config.toml with the project's config merged, as trust allows
	Dirs    config.Dirs
	Ambient map[string]string // hush's start-up environment snapshot
	Dir     string            // the project root tools run in
	Vault   *vault.Layered
	// Scrub is the process's secret snapshots (executor.NewSecretCache over
	// Vault), shared with whatever else scrubs output.
	Scrub *executor.SecretCache
	Model Model
	// Prompter asks a person; nil means non-interactive (asks are denied).
	Prompter executor.Prompter
	Events   executor.Events
	// Stderr receives one-line notes: an MCP server that did not start, a
	// background process kept running at Close.
	Stderr io.Writer
	// Version is hush's version, sent to MCP servers and in the http
	// tool's User-Agent.
	Version string
	// Resume, if set, is the session to continue: its id, transcript and
	// turn count carry on. Open takes the session's lock and reads it again
	// into *Resume; with Fork set it continues a copy of it as a new session
	// instead (and *Resume becomes the copy).
	Resume *transcript.Session
	// Fork and Wait are --fork and --wait: what to do about a resumed
	// session another hush has open (default: fail with a
	// *transcript.BusyError saying both).
	Fork, Wait bool
	// NoSave: no transcript is written (Resume.NoSave).
	NoSave bool
	// TranscriptFailed, if set, is told when the transcript cannot be
	// written (once); nil tells Model.Notice.
	TranscriptFailed func(error)
}

// Session is one assembled agent session.
type Session struct {
	Agent *executor.Agent
	// ID names the session in the audit log and the transcript file.
	ID string
	// Instructions names the AGENTS.md files the system prompt carries
	// ("" when none), for the banner.
	Instructions string

	stop       func()
	transcript *transcript.File
	audit      *auditlog.Log
}

// Gate is the permission gate of opts: config.toml's rules, then the
// person (if any), with --yes approving tool runs only.
func Gate(cfg config.Config, prompter executor.Prompter, yes bool) *executor.RuleGate {
	return &executor.RuleGate{Rules: GateRules(cfg.Rules), Prompter: prompter, AutoApproveTools: yes}
}

// GateRules maps config.toml's [[rules]] to the gate's.
func GateRules(rs []config.Rule) []executor.Rule {
	rules := make([]executor.Rule, 0, len(rs))
	for _, r := range rs {
		er := executor.Rule{Gate: r.Gate, Subject: r.Subject, Decision: executor.Decision(r.Decision)}
		if r.Command != "" {
			tool := strings.TrimPrefix(r.Gate, executor.GateToolRun)
			cr := executor.ParseCommandPattern(tool, r.Command)
			er.Command = &cr
		}
		rules = append(rules, er)
	}
	return rules
}

// AllowRules reads the --allow flags (TOOL or TOOL(PATTERN)) as gate rules.
func AllowRules(flags []string) ([]executor.Rule, error) {
	var rules []executor.Rule
	for _, f := range flags {
		tool, cr, ok := executor.ParseToolPattern(f)
		if !ok {
			return nil, fmt.Errorf("--allow %q: want a tool, or a tool and a command pattern, e.g. --allow 'bash(npm test:*)' or --allow http", f)
		}
		rules = append(rules, executor.Rule{Gate: executor.GateToolRun + tool, Subject: tool, Decision: executor.Allow, Command: cr, Flag: true})
	}
	return rules, nil
}

// projectGate adds to gate what belongs to the project at dir: the rules
// saved "always in this project" in the user's config.toml, the --allow
// flags, and — when a person can be asked — the save of a new project
// rule, which is hush's own write of the user's config.toml.
func projectGate(gate *executor.RuleGate, cfg config.Config, dirs config.Dirs, dir string, m Model) error {
	if dir != "" {
		gate.Rules = append(gate.Rules, GateRules(cfg.Projects[config.RealDir(dir)].Rules)...)
	}
	flags, err := AllowRules(m.Allow)
	if err != nil {
		return err
	}
	gate.Rules = append(gate.Rules, flags...)
	if gate.Prompter == nil {
		gate.AllowFlag = "--allow"
		return nil
	}
	if dir != "" && dirs.Config != "" {
		path := filepath.Join(dirs.Config, config.FileName)
		gate.SaveRules = func(crs []executor.CommandRule) error {
			rs := make([]config.Rule, len(crs))
			for i, cr := range crs {
				rs[i] = config.Rule{Gate: executor.GateToolRun + cr.Tool, Subject: cr.Tool, Decision: string(executor.Allow), Command: cr.Pattern()}
			}
			return config.AddProjectRules(path, dir, rs)
		}
	}
	return nil
}

// NewID names a session (or a one-off command, by prefix) in the audit log.
func NewID(prefix string) string {
	id := time.Now().UTC().Format("20060102T150405Z") + fmt.Sprintf("-%d", os.Getpid())
	if prefix != "" {
		id = prefix + "-" + id
	}
	return id
}

// TranscriptPath is a session's transcript file in the data dir.
func TranscriptPath(dataDir, id string) string { return transcript.Path(dataDir, id) }

// ModelName is the model a session talks to, as session.started and the
// transcript name it.
func ModelName(cfg config.Config, m Model) string {
	if firstNonEmpty(m.Provider, cfg.Model.Provider) == provider.Replay {
		return firstNonEmpty(m.Replay, cfg.Model.Replay, "embedded leak check")
	}
	return firstNonEmpty(m.Name, cfg.Model.Name)
}

// compactPolicy is config.toml's [compaction].
func compactPolicy(cfg config.Config) executor.CompactPolicy {
	c := cfg.Compaction
	return executor.CompactPolicy{Auto: c.Auto == nil || *c.Auto, Window: c.ContextWindow, Threshold: c.Threshold, KeepTurns: c.KeepTurns}.Defaults()
}

// Open wires config, vault, gate, audit log, provider and tools, and
// starts the session's MCP servers. ctx bounds only the start-up: when it
// ends while servers start, Open stops what it started and returns
// ErrInterrupted; once started, the servers' lives do not depend on it.
func Open(ctx context.Context, opts Options) (*Session, error) {
	cfg := opts.Config
	if opts.Model.Notice == nil {
		if n, ok := opts.Events.(noticer); ok {
			opts.Model.Notice = n.Notice
		} else if opts.Stderr != nil {
			stderr := opts.Stderr
			opts.Model.Notice = func(s string) { fmt.Fprintf(stderr, "hush: %s\n", s) }
		}
	}
	prov, err := NewProvider(cfg.Model, opts.Model, opts.Vault, HTTPClient(opts.Ambient))
	if err != nil {
		return nil, err
	}
	dockerTool, err := dockerbashTool(cfg, opts.Dirs.Data)
	if err != nil {
		return nil, err
	}
	policies, err := builtinPolicies(cfg)
	if err != nil {
		return nil, err
	}
	gate := Gate(cfg, opts.Prompter, opts.Model.Yes)
	if err := projectGate(gate, cfg, opts.Dirs, opts.Dir, opts.Model); err != nil {
		return nil, err
	}

	// hush's own dirs exist, 0700, before any tool starts: one a tool made
	// first (for a user who never ran hush setup, or a HUSH_CONFIG_DIR not
	// made yet) would hold the tool's config.toml and rules.
	for _, d := range []string{opts.Dirs.Config, opts.Dirs.Data} {
		if d == "" {
			continue
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("make hush's dir %s before any tool starts: %w", d, err)
		}
	}

	masks, err := MaskSet(cfg, opts.Dirs, opts.Ambient, opts.Dir)
	if err != nil {
		return nil, err
	}

	id := NewID("")
	var transcriptFile *transcript.File
	priorTurns := 0
	if r := opts.Resume; r != nil && !opts.Fork {
		id = r.ID
	}
	// The session's /tmp for its tools: made when the first starts, gone
	// when the session closes.
	tmp := sandbox.SessionTmp(id)
	// Open that fails after a tool started (an interrupt while an MCP
	// server starts, say) removes the /tmp it made, as Close would.
	opened := false
	defer func() {
		if !opened {
			os.RemoveAll(tmp)
		}
	}()
	policy, err := World(cfg, opts.Dirs, opts.Ambient, opts.Dir, tmp)
	if err != nil {
		return nil, err
	}
	if dt, ok := dockerTool.(dockerbash.Tool); ok {
		// Its containers carry the session; those a hush that is gone
		// left behind (killed, or cut off from the engine) go now.
		dt.Session = id
		dockerTool = dt
		for _, l := range dockerbash.RemoveLeftovers(ctx, opts.Ambient) {
			if opts.Stderr != nil {
				fmt.Fprintf(opts.Stderr, "hush: %s\n", l.Describe())
			}
		}
	}
	if r := opts.Resume; opts.NoSave {
		if r != nil {
			id, priorTurns = r.ID, r.LastTurn
		}
	} else if r != nil {
		if opts.Fork {
			transcriptFile, err = transcript.Fork(opts.Dirs.Data, r, transcript.Header{ID: id, Project: opts.Dir, Provider: prov.Name(), Model: ModelName(cfg, opts.Model)})
		} else {
			mode := transcript.NoWait
			if opts.Wait {
				mode = transcript.Wait
			}
			transcriptFile, err = transcript.Reopen(ctx, r, mode)
			if err != nil && ctx.Err() != nil {
				err = ErrWaitInterrupted
			}
		}
		if err == nil {
			id, priorTurns = r.ID, r.LastTurn
		}
	} else {
		transcriptFile, err = transcript.Create(opts.Dirs.Data, transcript.Header{ID: id, Project: opts.Dir, Provider: prov.Name(), Model: ModelName(cfg, opts.Model)})
	}
	if err != nil {
		return nil, err
	}
	var transcriptTo io.Writer // nil, not a nil *File, when nothing is saved
	if transcriptFile != nil {
		transcriptTo = transcriptFile
		if opts.TranscriptFailed != nil {
			transcriptFile.Notice = opts.TranscriptFailed
		} else if notice := opts.Model.Notice; notice != nil {
			transcriptFile.Notice = func(err error) { notice(err.Error()) }
		}
	}

	bashCfg := cfg.Tools[bash.Name]
	bashBox, err := HostSandbox(cfg, masks, policy, bash.Name)
	if err != nil {
		transcriptFile.Close()
		return nil, err
	}
	if n := SandboxNotice(cfg); n != "" {
		fmt.Fprintf(opts.Stderr, "hush: %s\n", n)
	}
	reg := executor.NewRegistry(bash.Tool{Timeout: bashCfg.Timeout.Duration, UnsafeSecretsInArgv: cfg.Unsafe.SecretsInArgv, Sandbox: bashBox})
	if dockerTool != nil {
		reg.Add(dockerTool)
	}
	if err := addInProcessTools(reg, opts, masks); err != nil {
		transcriptFile.Close()
		return nil, err
	}
	audit := auditlog.Open(filepath.Join(opts.Dirs.Data, auditlog.FileName))
	if stderr := opts.Stderr; stderr != nil {
		audit.Notice = func(s string) { fmt.Fprintf(stderr, "hush: warning: %s\n", s) }
	}
	tel, err := openTelemetry(opts, id)
	if err != nil {
		transcriptFile.Close()
		return nil, err
	}
	closeTel := func() {}
	if tel != nil {
		audit.Mirror(tel.Gate)
		opts.Events = executor.Tee(opts.Events, tel)
		closeTel = func() {
			if err := tel.Close(5 * time.Second); err != nil {
				fmt.Fprintf(opts.Stderr, "hush: %v\n", err)
			}
		}
	}
	// Every host tool's way out: the session's egress proxy.
	var egressNet executor.Network
	if !cfg.Unsafe.NoSandbox {
		proxied := map[string]bool{}
		for _, tool := range []string{bash.Name, background.Name, "mcp"} {
			if mode, _ := NetworkMode(cfg, tool); mode == NetworkProxy {
				proxied[tool] = true
			}
		}
		// docker-bash has no network unless configured; "proxy" is the
		// same proxy, reached from the call's own Docker network.
		if cfg.Tools[dockerbash.Name].Network == dockerbash.NetworkProxy {
			proxied[dockerbash.Name] = true
		}
		n, err := newNetwork(cfg, opts.Ambient, audit, id, opts.Events, proxied)
		if err != nil {
			transcriptFile.Close()
			closeTel()
			return nil, err
		}
		egressNet = n
	}
	// Background processes and MCP servers live as long as the session; MCP
	// servers start now, so a secret they need is asked for before the
	// first turn rather than in the middle of one.
	extra, stopExtra, startDenied, err := startTools(ctx, opts, masks, policy, gate, audit, id, egressNet)
	if err == nil && ctx.Err() != nil {
		stopExtra()
		err = ErrInterrupted
	}
	if err != nil {
		transcriptFile.Close()
		closeTel()
		audit.Close()
		return nil, err
	}
	for _, t := range extra {
		reg.Add(t)
	}
	system, ins, err := systemPrompt(opts, reg, bashBox, masks.Masked)
	if err != nil {
		stopExtra()
		transcriptFile.Close()
		closeTel()
		audit.Close()
		return nil, err
	}
	for _, in := range ins {
		if in.Refused != "" && opts.Stderr != nil {
			fmt.Fprintf(opts.Stderr, "hush: %s not read: %s\n", in.Path, in.Refused)
		}
	}
	instructions := Loaded(ins)
	agent := &executor.Agent{
		Network:    egressNet,
		Provider:   prov,
		Tools:      reg,
		Gate:       gate,
		Audit:      audit,
		Vault:      opts.Vault,
		Scrub:      opts.Scrub,
		Ambient:    opts.Ambient,
		Dir:        opts.Dir,
		Policy:     policies.of,
		Events:     opts.Events,
		Transcript: transcriptTo,
		Session:    id,
		PriorTurns: priorTurns,
		Compaction: compactPolicy(cfg),
		System:     system,
		MaxSteps:   cfg.Turn.MaxSteps,

		StartDenied: startDenied,

		UnsafeNoRedaction: cfg.Unsafe.NoRedaction,
	}
	stop := func() { stopExtra(); closeTel(); os.RemoveAll(tmp) }
	opened = true
	return &Session{Agent: agent, ID: id, Instructions: instructions, stop: stop, transcript: transcriptFile, audit: audit}, nil
}

// openTelemetry opens the [telemetry] export, if an endpoint is configured;
// its header values' ${NAME} are read from the vault by hush itself, as the
// model's API key is: no tool is involved.
func openTelemetry(opts Options, id string) (*telemetry.Exporter, error) {
	t := opts.Config.Telemetry
	if t.Endpoint == "" {
		return nil, nil
	}
	headers := map[string]string{}
	for k, v := range t.Headers {
		val, err := config.Substitute(v, opts.Vault.Get)
		if err != nil {
			return nil, fmt.Errorf("telemetry.headers.%s in config.toml: %w", k, err)
		}
		headers[k] = val
	}
	return telemetry.Open(telemetry.Options{Endpoint: t.Endpoint, Headers: headers, HTTPClient: HTTPClient(opts.Ambient),
		Version: opts.Version, Session: id, Project: opts.Dir,
		Model: firstNonEmpty(opts.Model.Provider, opts.Config.Model.Provider) + "/" + ModelName(opts.Config, opts.Model)})
}

// Close stops every MCP server and every background process the user did
// not ask to keep, and closes the transcript and the audit log. It may be
// called more than once.
func (s *Session) Close() {
	if s == nil || s.stop == nil {
		return
	}
	s.stop()
	s.stop = nil
	s.transcript.Close()
	s.audit.Close()
}

// systemPrompt is config's turn.system, or the prompt built from the
// project (Prompt), with the AGENTS.md files it carries or refused.
func systemPrompt(opts Options, reg *executor.Registry, sandbox *sandbox.Config, masked Masked) (string, []Instruction, error) {
	if opts.Config.Turn.System != "" {
		return opts.Config.Turn.System, nil, nil
	}
	var names []string
	if all, err := opts.Vault.All(); err == nil {
		for n := range all {
			names = append(names, n)
		}
	}
	var toolNames []string
	for _, t := range reg.List() {
		toolNames = append(toolNames, t.Name())
	}
	prompt, ins, err := Prompt(context.Background(), PromptOptions{Dir: opts.Dir, ConfigDir: opts.Dirs.Config,
		Ambient: opts.Ambient, OS: runtime.GOOS, Now: time.Now(), Tools: toolNames, SecretNames: names, Sandbox: sandbox, Masked: masked})
	return prompt, ins, err
}

// addInProcessTools registers the file tools, which apply the session's
// mask list (the sandbox's own, [sandbox] allow and hide included)
// themselves, and the http tool, which holds no vault.
func addInProcessTools(reg *executor.Registry, opts Options, masks *sandbox.MaskSet) error {
	if masks == nil {
		return errors.New("the file tools need the session's mask list")
	}
	for _, t := range files.Tools(masks.Masked, masks.MaskedResolved, masks.WriteMasked) {
		reg.Add(t)
	}
	h := opts.Config.Tools[httptool.Name]
	reg.Add(httptool.Tool{AllowPrivate: h.AllowPrivate, Timeout: h.Timeout.Duration, UserAgent: "hush/" + opts.Version})
	return nil
}
