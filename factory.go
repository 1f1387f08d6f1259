package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
)

// app is the factory every command is built from: the start-up
// environment and the IO streams, and, each loaded once on first use and
// returning its error, the project directory, the dirs and config.toml
// (loadConfig), the layered vault with its proxy and secret snapshots
// (Vault), the sandbox's mask list (MaskSet) and a prompter at the
// terminal. Nothing is read before a command asks for it, so `hush
// --version` touches no file. run builds one per process; a command's
// new…Cmd(f, runF) copies what it needs into its options, and tests build
// their own.
type app struct {
	Ambient map[string]string // the environment hush was started with (in memory only)
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	// WorkDir, when set, replaces the current directory as the project
	// root (--dir).
	WorkDir string
	// Version is hush's version, sent to MCP servers.
	Version string

	loadOnce sync.Once
	dirs     config.Dirs
	cfg      config.Config
	loadErr  error

	vaultOnce sync.Once
	vault     *vault.Layered
	proxy     *vault.Proxy
	scrub     *executor.SecretCache // the vault's secret snapshots, shared by everything that scrubs
	vaultErr  error
	// dotenvFault: the project root's .env is malformed (Vault.DotEnvFault).
	dotenvFault error

	masksOnce sync.Once
	masks     *sandbox.MaskSet
	masksErr  error

	// instructions names the AGENTS.md files the last opened session's
	// prompt carries.
	instructions string
}

// stoppedError is the error of a command a stop signal ended: hush exits
// 128 + Signal.
type stoppedError struct {
	Signal os.Signal
	Err    error
}

func (e *stoppedError) Error() string { return e.Err.Error() }
func (e *stoppedError) Unwrap() error { return e.Err }

// ProjectDir is the project root tools run in.
func (a *app) ProjectDir() (string, error) {
	if a.WorkDir != "" {
		return a.WorkDir, nil
	}
	return os.Getwd()
}

// Load resolves the dirs and reads config.toml, once (LoadConfig).
func (a *app) Load() error {
	a.loadOnce.Do(func() {
		dir, err := a.ProjectDir()
		if err != nil {
			a.loadErr = err
			return
		}
		a.dirs, a.cfg, a.loadErr = session.LoadConfig(a.Ambient, dir, a.Stderr)
	})
	return a.loadErr
}

// Project is Load, then the project directory.
func (a *app) Project() (string, error) {
	if err := a.Load(); err != nil {
		return "", err
	}
	return a.ProjectDir()
}

// Dirs are the config and data dirs; zero before Load.
func (a *app) Dirs() config.Dirs { return a.dirs }

// Config is the loaded configuration (zero before Load). `hush setup`
// changes it in memory, so a first-run chat uses what setup chose.
func (a *app) Config() *config.Config { return &a.cfg }

// Vault opens the layered vault once (OpenVault): the configured backend
// behind a forwarding proxy, the project's legacy .env files and the real
// environment, with one SecretCache over it.
func (a *app) Vault() (*vault.Layered, error) {
	a.vaultOnce.Do(func() {
		dir, err := a.Project()
		if err != nil {
			a.vaultErr = err
			return
		}
		v, err := session.OpenVault(a.cfg, a.Registry(), a.dirs.Data, a.Ambient, dir)
		if err != nil {
			a.vaultErr = err
			return
		}
		for _, line := range v.Warnings {
			a.Warn(line)
		}
		a.vault, a.proxy, a.dotenvFault = v.Layered, v.Proxy, v.DotEnvFault
		a.scrub = executor.NewSecretCache(a.vault.All, a.vault.Version)
	})
	return a.vault, a.vaultErr
}

// Proxy is the vault's forwarding proxy; nil before Vault.
func (a *app) Proxy() *vault.Proxy { return a.proxy }

// Scrub is the vault's secret snapshots; nil before Vault.
func (a *app) Scrub() *executor.SecretCache { return a.scrub }

// Warn prints one warning sentence.
func (a *app) Warn(s string) { fmt.Fprintf(a.Stderr, "hush: warning: %s\n", s) }

// Redact scrubs every secret hush knows of from s (Redact): the vault's
// once it is open, else the start-up environment's credentials.
func (a *app) Redact(s string) string { return session.Redact(a.scrub, a.Ambient, s) }

// Registry is every vault backend hush can open (VaultRegistry).
func (a *app) Registry() *vault.Registry { return session.VaultRegistry(a.Ambient) }

// Backend is the configured vault backend's name.
func (a *app) Backend() string { return session.Backend(a.cfg) }

// HTTPClient uses the proxy settings hush was started with.
func (a *app) HTTPClient() *http.Client { return session.HTTPClient(a.Ambient) }

// MaskSet is the process's one mask list (MaskSet), built once.
func (a *app) MaskSet() (*sandbox.MaskSet, error) {
	a.masksOnce.Do(func() {
		dir, err := a.Project()
		if err != nil {
			a.masksErr = err
			return
		}
		a.masks, a.masksErr = session.MaskSet(a.cfg, a.dirs, a.Ambient, dir)
	})
	return a.masks, a.masksErr
}

// HostSandbox is the sandbox a host tool gets (`hush sandbox show`): its
// /tmp is a session's, shown as <session>.
func (a *app) HostSandbox(tool string) (*sandbox.Config, error) {
	return a.hostSandbox(tool, sandbox.SessionTmp("<session>"))
}

// hostSandbox is HostSandbox with tmp as the tool's /tmp on the host; ""
// gives each call an empty one of its own (a tool started outside a
// session, which has no /tmp to share and none to remove at its end).
func (a *app) hostSandbox(tool, tmp string) (*sandbox.Config, error) {
	masks, err := a.MaskSet()
	if err != nil {
		return nil, err
	}
	dir, err := a.Project()
	if err != nil {
		return nil, err
	}
	policy, err := session.World(a.cfg, a.dirs, a.Ambient, dir, tmp)
	if err != nil {
		return nil, err
	}
	return session.HostSandbox(a.cfg, masks, policy, tool)
}

// Terminal is stdin as a terminal, or nil when it is not one.
func (a *app) Terminal() *os.File { return wizard.Terminal(a.Stdin) }

// ResolveBackground asks the terminal for its background colour, with a
// short timeout, before hush draws a form in it (wizard.ResolveBackground).
func (a *app) ResolveBackground() {
	in := a.Terminal()
	out, ok := a.Stdout.(*os.File)
	if in != nil && ok {
		wizard.ResolveBackground(in, out, a.Ambient["TERM"], wizard.BackgroundTimeout)
	}
}

// accessible says the user asked for line-by-line forms ($ACCESSIBLE).
func (a *app) accessible() bool { return a.Ambient["ACCESSIBLE"] != "" }

// StartAgent opens a session (Open) on the loaded config and vault; the
// returned func closes it. A stop signal while the MCP servers start ends
// it with a *stoppedError at once instead of waiting out a hung server.
//
// resume, if set, is the session to continue, as rr asks (--fork, --wait).
func (a *app) StartAgent(m session.Model, prompter executor.Prompter, sink executor.Events, resume *transcript.Session, rr session.Resume) (*executor.Agent, func(), error) {
	return a.startAgent(m, prompter, sink, resume, rr, nil)
}

// startAgent is StartAgent; transcriptFailed, if set, is told of a
// transcript that cannot be written instead of the model's notices.
func (a *app) startAgent(m session.Model, prompter executor.Prompter, sink executor.Events, resume *transcript.Session, rr session.Resume, transcriptFailed func(error)) (*executor.Agent, func(), error) {
	lv, err := a.Vault()
	if err != nil {
		return nil, nil, err
	}
	if a.dotenvFault != nil {
		return nil, nil, a.dotenvFault
	}
	dir, err := a.ProjectDir()
	if err != nil {
		return nil, nil, err
	}
	startCtx, stopSig, stopSignals := session.NotifyStop(context.Background())
	defer stopSignals()
	s, err := session.Open(startCtx, session.Options{
		Config: a.cfg, Dirs: a.dirs, Ambient: a.Ambient, Dir: dir, Vault: lv, Scrub: a.scrub, Model: m,
		Prompter: prompter, Events: sink, Stderr: a.Stderr, Version: a.Version, Resume: resume, Fork: rr.Fork, Wait: rr.Wait,
		NoSave: rr.NoSave, TranscriptFailed: transcriptFailed,
	})
	if errors.Is(err, session.ErrInterrupted) || errors.Is(err, session.ErrWaitInterrupted) {
		return nil, nil, &stoppedError{Signal: stopSig.Get(), Err: err}
	}
	if err != nil {
		return nil, nil, err
	}
	a.instructions = s.Instructions
	return s.Agent, s.Close, nil
}

// FindSession resolves a resume request in the project dir (Find);
// --resume without an id asks, when interactive (a terminal to ask on).
func (a *app) FindSession(r session.Resume, interactive bool) (*transcript.Session, error) {
	dir, err := a.Project()
	if err != nil {
		return nil, err
	}
	var pick func([]session.Choice) (string, error)
	if interactive {
		pick = func(cs []session.Choice) (string, error) {
			var opts []wizard.SessionOption
			for _, c := range cs {
				opts = append(opts, wizard.SessionOption{ID: c.ID, Label: c.Label})
			}
			return wizard.PickSession(context.Background(), a.Stdin, a.Stdout, a.accessible(), opts)
		}
	}
	if pick != nil {
		_, _ = a.Vault() // the picker's prompts are redacted with the vault's values
	}
	s, err := session.Find(r, a.dirs.Data, dir, pick, a.Redact)
	if errors.Is(err, session.ErrNeedsID) {
		return nil, &exitError{exitUsage, err}
	}
	return s, err
}

// Chat is the chat of `hush chat` on the loaded config and vault, with
// model m, continuing resumed if set as rr asks.
func (a *app) Chat(m session.Model, resumed *transcript.Session, rr session.Resume) (chatLoop, error) {
	dir, err := a.Project()
	if err != nil {
		return chatLoop{}, err
	}
	return chatLoop{
		Stdin: a.Stdin, Stdout: a.Stdout, Stderr: a.Stderr, Ambient: a.Ambient,
		Config: a.cfg, Dirs: a.dirs, Dir: dir, Model: m, Resumed: resumed, Redact: a.Redact,
		Start: func(prompter executor.Prompter, sink executor.Events) (*executor.Agent, func(), error) {
			return a.StartAgent(m, prompter, sink, resumed, rr)
		},
		Instructions: func() string { return a.instructions },
		Find: func(id string, interactive bool) (*transcript.Session, error) {
			return a.FindSession(session.Resume{Resume: true, ID: id}, interactive)
		},
		Vault:             a.Vault,
		ResolveBackground: a.ResolveBackground,
	}, nil
}

// Run is the one turn of `hush run` with model m: JSON streams events,
// resume says which session it continues.
func (a *app) Run(m session.Model, json bool, resume session.Resume) runTurn {
	return runTurn{Stdout: a.Stdout, Stderr: a.Stderr, JSON: json, Resume: resume,
		Find: func(r session.Resume) (*transcript.Session, error) { return a.FindSession(r, false) },
		Start: func(sink executor.Events, resumed *transcript.Session) (*executor.Agent, func(), error) {
			// A transcript that cannot be written ends the run as kind
			// storage (OneTurn): said once, at the end.
			return a.startAgent(m, nil, sink, resumed, resume, func(error) {})
		},
		Redact:    a.Redact,
		ModelName: func() string { return session.ModelName(a.cfg, m) },
		TranscriptPath: func(id string) string {
			if resume.NoSave {
				return ""
			}
			return session.TranscriptPath(a.dirs.Data, id)
		},
	}
}

// loaded is the factory's configuration, loaded once on first use: the
// merged config.toml and the config and data dirs. A command's options
// carry it as a func, so `hush --version` reads no file and a test hands a
// command its own.
type loaded struct {
	Config *config.Config
	Dirs   config.Dirs
}

// loadConfig is the factory's lazy, error-returning configuration.
func (a *app) loadConfig() (loaded, error) {
	if err := a.Load(); err != nil {
		return loaded{}, err
	}
	return loaded{Config: a.Config(), Dirs: a.Dirs()}, nil
}

// prompter is a person to ask at the terminal, or nil without one.
func (a *app) prompter() executor.Prompter {
	if a.Terminal() == nil {
		return nil
	}
	return &wizard.Prompter{In: a.Stdin, Out: a.Stdout, Accessible: a.Ambient["ACCESSIBLE"] != "", NoColor: a.Ambient["NO_COLOR"] != ""}
}
