package session

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
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
)

// Env is what every hush command works in: the start-up environment and
// the IO streams, and, each loaded once on first use, the project
// directory, the dirs and config.toml, the layered vault with its proxy and
// secret snapshots, and the sandbox's mask list. Nothing is read before a
// command asks for it, so `hush --version` touches no file. Package main
// builds one per process and hands it to every command.
type Env struct {
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

// UsageError is an error in how a command was called: hush exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// StoppedError is the error of a command a stop signal ended: hush exits
// 128 + Signal.
type StoppedError struct {
	Signal os.Signal
	Err    error
}

func (e *StoppedError) Error() string { return e.Err.Error() }
func (e *StoppedError) Unwrap() error { return e.Err }

// ProjectDir is the project root tools run in.
func (e *Env) ProjectDir() (string, error) {
	if e.WorkDir != "" {
		return e.WorkDir, nil
	}
	return os.Getwd()
}

// Load resolves the dirs and reads config.toml, once (LoadConfig).
func (e *Env) Load() error {
	e.loadOnce.Do(func() {
		dir, err := e.ProjectDir()
		if err != nil {
			e.loadErr = err
			return
		}
		e.dirs, e.cfg, e.loadErr = LoadConfig(e.Ambient, dir, e.Stderr)
	})
	return e.loadErr
}

// Project is Load, then the project directory.
func (e *Env) Project() (string, error) {
	if err := e.Load(); err != nil {
		return "", err
	}
	return e.ProjectDir()
}

// Dirs are the config and data dirs; zero before Load.
func (e *Env) Dirs() config.Dirs { return e.dirs }

// Config is the loaded configuration (zero before Load). `hush setup`
// changes it in memory, so a first-run chat uses what setup chose.
func (e *Env) Config() *config.Config { return &e.cfg }

// Vault opens the layered vault once (OpenVault): the configured backend
// behind a forwarding proxy, the project's legacy .env files and the real
// environment, with one SecretCache over it.
func (e *Env) Vault() (*vault.Layered, error) {
	e.vaultOnce.Do(func() {
		dir, err := e.Project()
		if err != nil {
			e.vaultErr = err
			return
		}
		v, err := OpenVault(e.cfg, e.Registry(), e.dirs.Data, e.Ambient, dir)
		if err != nil {
			e.vaultErr = err
			return
		}
		for _, line := range v.Warnings {
			e.Warn(line)
		}
		e.vault, e.proxy, e.dotenvFault = v.Layered, v.Proxy, v.DotEnvFault
		e.scrub = executor.NewSecretCache(e.vault.All, e.vault.Version)
	})
	return e.vault, e.vaultErr
}

// Proxy is the vault's forwarding proxy; nil before Vault.
func (e *Env) Proxy() *vault.Proxy { return e.proxy }

// Scrub is the vault's secret snapshots; nil before Vault.
func (e *Env) Scrub() *executor.SecretCache { return e.scrub }

// Warn prints one warning sentence.
func (e *Env) Warn(s string) { fmt.Fprintf(e.Stderr, "hush: warning: %s\n", s) }

// Redact scrubs every secret hush knows of from s (Redact): the vault's
// once it is open, else the start-up environment's credentials.
func (e *Env) Redact(s string) string { return Redact(e.scrub, e.Ambient, s) }

// Registry is every vault backend hush can open (VaultRegistry).
func (e *Env) Registry() *vault.Registry { return VaultRegistry(e.Ambient) }

// Backend is the configured vault backend's name.
func (e *Env) Backend() string { return Backend(e.cfg) }

// HTTPClient uses the proxy settings hush was started with.
func (e *Env) HTTPClient() *http.Client { return HTTPClient(e.Ambient) }

// MaskSet is the process's one mask list (MaskSet), built once.
func (e *Env) MaskSet() (*sandbox.MaskSet, error) {
	e.masksOnce.Do(func() {
		dir, err := e.Project()
		if err != nil {
			e.masksErr = err
			return
		}
		e.masks, e.masksErr = MaskSet(e.cfg, e.dirs, e.Ambient, dir)
	})
	return e.masks, e.masksErr
}

// HostSandbox is the sandbox a host tool gets (`hush sandbox show`).
func (e *Env) HostSandbox(tool string) (*sandbox.Config, error) {
	masks, err := e.MaskSet()
	if err != nil {
		return nil, err
	}
	dir, err := e.Project()
	if err != nil {
		return nil, err
	}
	policy, err := World(e.cfg, e.dirs, e.Ambient, dir, sandbox.SessionTmp("<session>"))
	if err != nil {
		return nil, err
	}
	return HostSandbox(e.cfg, masks, policy, tool)
}

// Terminal is stdin as a terminal, or nil when it is not one.
func (e *Env) Terminal() *os.File { return wizard.Terminal(e.Stdin) }

// ResolveBackground asks the terminal for its background colour, with a
// short timeout, before hush draws a form in it (wizard.ResolveBackground).
func (e *Env) ResolveBackground() {
	in := e.Terminal()
	out, ok := e.Stdout.(*os.File)
	if in != nil && ok {
		wizard.ResolveBackground(in, out, e.Ambient["TERM"], wizard.BackgroundTimeout)
	}
}

// accessible says the user asked for line-by-line forms ($ACCESSIBLE).
func (e *Env) accessible() bool { return e.Ambient["ACCESSIBLE"] != "" }

// StartAgent opens a session (Open) on the loaded config and vault; the
// returned func closes it. A stop signal while the MCP servers start ends
// it with a *StoppedError at once instead of waiting out a hung server.
//
// resume, if set, is the session to continue, as rr asks (--fork, --wait).
func (e *Env) StartAgent(m Model, prompter executor.Prompter, sink executor.Events, resume *transcript.Session, rr Resume) (*executor.Agent, func(), error) {
	return e.startAgent(m, prompter, sink, resume, rr, nil)
}

// startAgent is StartAgent; transcriptFailed, if set, is told of a
// transcript that cannot be written instead of the model's notices.
func (e *Env) startAgent(m Model, prompter executor.Prompter, sink executor.Events, resume *transcript.Session, rr Resume, transcriptFailed func(error)) (*executor.Agent, func(), error) {
	lv, err := e.Vault()
	if err != nil {
		return nil, nil, err
	}
	if e.dotenvFault != nil {
		return nil, nil, e.dotenvFault
	}
	dir, err := e.ProjectDir()
	if err != nil {
		return nil, nil, err
	}
	startCtx, stopSig, stopSignals := NotifyStop(context.Background())
	defer stopSignals()
	s, err := Open(startCtx, Options{
		Config: e.cfg, Dirs: e.dirs, Ambient: e.Ambient, Dir: dir, Vault: lv, Scrub: e.scrub, Model: m,
		Prompter: prompter, Events: sink, Stderr: e.Stderr, Version: e.Version, Resume: resume, Fork: rr.Fork, Wait: rr.Wait,
		NoSave: rr.NoSave, TranscriptFailed: transcriptFailed,
	})
	if errors.Is(err, ErrInterrupted) || errors.Is(err, ErrWaitInterrupted) {
		return nil, nil, &StoppedError{Signal: stopSig.Get(), Err: err}
	}
	if err != nil {
		return nil, nil, err
	}
	e.instructions = s.Instructions
	return s.Agent, s.Close, nil
}

// FindSession resolves a resume request in the project dir (Find);
// --resume without an id asks, when interactive (a terminal to ask on).
func (e *Env) FindSession(r Resume, interactive bool) (*transcript.Session, error) {
	dir, err := e.Project()
	if err != nil {
		return nil, err
	}
	var pick func([]Choice) (string, error)
	if interactive {
		pick = func(cs []Choice) (string, error) {
			var opts []wizard.SessionOption
			for _, c := range cs {
				opts = append(opts, wizard.SessionOption{ID: c.ID, Label: c.Label})
			}
			return wizard.PickSession(context.Background(), e.Stdin, e.Stdout, e.accessible(), opts)
		}
	}
	if pick != nil {
		_, _ = e.Vault() // the picker's prompts are redacted with the vault's values
	}
	s, err := Find(r, e.dirs.Data, dir, pick, e.Redact)
	if errors.Is(err, ErrNeedsID) {
		return nil, &UsageError{err}
	}
	return s, err
}

// Chat is the chat of `hush chat` on the loaded config and vault, with
// model m, continuing resumed if set as rr asks.
func (e *Env) Chat(m Model, resumed *transcript.Session, rr Resume) (Chat, error) {
	dir, err := e.Project()
	if err != nil {
		return Chat{}, err
	}
	return Chat{
		Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr, Ambient: e.Ambient,
		Config: e.cfg, Dirs: e.dirs, Dir: dir, Model: m, Resumed: resumed, Redact: e.Redact,
		Start: func(prompter executor.Prompter, sink executor.Events) (*executor.Agent, func(), error) {
			return e.StartAgent(m, prompter, sink, resumed, rr)
		},
		Instructions: func() string { return e.instructions },
		Find: func(id string, interactive bool) (*transcript.Session, error) {
			return e.FindSession(Resume{Resume: true, ID: id}, interactive)
		},
		Vault:             e.Vault,
		ResolveBackground: e.ResolveBackground,
	}, nil
}

// Run is the one turn of `hush run` with model m: JSON streams events,
// resume says which session it continues.
func (e *Env) Run(m Model, json bool, resume Resume) Run {
	return Run{Stdout: e.Stdout, Stderr: e.Stderr, JSON: json, Resume: resume,
		Find: func(r Resume) (*transcript.Session, error) { return e.FindSession(r, false) },
		Start: func(sink executor.Events, resumed *transcript.Session) (*executor.Agent, func(), error) {
			// A transcript that cannot be written ends the run as kind
			// storage (OneTurn): said once, at the end.
			return e.startAgent(m, nil, sink, resumed, resume, func(error) {})
		},
		Redact:    e.Redact,
		ModelName: func() string { return ModelName(e.cfg, m) },
		TranscriptPath: func(id string) string {
			if resume.NoSave {
				return ""
			}
			return TranscriptPath(e.dirs.Data, id)
		},
	}
}
