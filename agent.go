package main

import (
	"context"
	"errors"
	"net/http"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools"
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
	// resume, if set, is the session to continue.
	resume *transcript.Session
}

// newAgent opens a session (session.Open) from the app's config and vault.
// The returned func closes it.
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
	// Ctrl-C while the MCP servers start gives up on the session at once
	// instead of waiting out a hung server's start_timeout.
	startCtx, stopSig, stopSignals := session.NotifyStop(context.Background())
	defer stopSignals()
	f := opts.model
	s, err := session.Open(startCtx, session.Options{
		Config: a.cfg, Dirs: a.dirs, Ambient: a.ambient, Dir: dir, Vault: lv, Scrub: a.scrub,
		Model:    sessionModel(f),
		Prompter: opts.prompter, Events: opts.events, Stderr: a.stderr, Version: version, Resume: opts.resume,
	})
	if errors.Is(err, session.ErrInterrupted) {
		return nil, nil, &exitError{signalExit(stopSig.Get()).code, err}
	}
	if err != nil {
		return nil, nil, err
	}
	a.instructions = s.Instructions
	return s.Agent, s.Close, nil
}

// httpClient uses the proxy settings hush was started with.
func (a *app) httpClient() *http.Client { return session.HTTPClient(a.ambient) }

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// transcriptPath is the session's transcript file in the data dir.
func (a *app) transcriptPath(id string) string { return session.TranscriptPath(a.dirs.Data, id) }

// modelName is the model the session talks to, as session.started and the
// transcript name it.
func (a *app) modelName(f modelFlags) string { return session.ModelName(a.cfg, sessionModel(f)) }

func sessionModel(f modelFlags) session.Model {
	return session.Model{Provider: f.provider, BaseURL: f.baseURL, Name: f.model, Replay: f.replay, Yes: f.yes}
}

// maskSet is the process's one mask list (session.MaskSet), built once.
func (a *app) maskSet() (*tools.MaskSet, error) {
	a.masksOnce.Do(func() {
		if a.masksErr = a.init(); a.masksErr != nil {
			return
		}
		dir, err := a.projectDir()
		if err != nil {
			a.masksErr = err
			return
		}
		a.masks, a.masksErr = session.MaskSet(a.cfg, a.dirs, a.ambient, dir)
	})
	return a.masks, a.masksErr
}

// hostSandbox is the sandbox a host tool gets (`hush sandbox show`).
func (a *app) hostSandbox(tool string) (*tools.Sandbox, error) {
	masks, err := a.maskSet()
	if err != nil {
		return nil, err
	}
	return session.HostSandbox(a.cfg, masks, tool)
}
