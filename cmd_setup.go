package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
)

// setupOptions is `hush setup`, and the first run of `hush chat`.
type setupOptions struct {
	Context  context.Context
	In       io.Reader
	Out, Err io.Writer
	// TTY is stdin as a terminal, nil when it is not one (the questions
	// are then asked line by line).
	TTY        *os.File
	Accessible bool
	// Config is the factory's configuration: setup changes it in memory
	// too, so a first-run chat uses what setup chose.
	Config func() (loaded, error)
	Vault  func() (*vault.Layered, error)
	// Proxy is the vault's forwarding proxy, once Vault returned.
	Proxy    func() *vault.Proxy
	Registry *vault.Registry
	HTTP     *http.Client
	// BeforeForm asks the terminal for its background colour before a
	// form is drawn.
	BeforeForm func()
	// MoveTo moves every secret to backend name (session.Vault.MoveTo),
	// with extra settings written in the same config.toml update.
	MoveTo func(name string, extra map[string]string, settings []config.Setting) (vault.MoveReport, error)
}

func newSetupCmd(f *app, runF func(*setupOptions) error) *cli.Command {
	if runF == nil {
		runF = runSetup
	}
	return &cli.Command{
		Name:  "setup",
		Usage: "choose the model server, the model, where secrets are kept, and the API key",
		Description: "Asks a few questions; the current settings are the defaults, so running it again to\n" +
			"change one answer keeps the rest. The API key goes straight into the vault; config.toml\n" +
			"gets only a reference such as api_key = \"${OPENAI_API_KEY}\". The key is checked with\n" +
			"one request for the server's model list. With input that is not a terminal (or\n" +
			"--accessible) the questions are asked line by line.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "accessible", Usage: "ask line by line (screen readers, simple terminals)"},
		},
		Action: func(c *cli.Context) error {
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt)
			defer stop()
			return runF(setupOpts(f, ctx, c.Bool("accessible")))
		},
	}
}

// setupOpts are setup's options on f; $ACCESSIBLE asks line by line too.
func setupOpts(f *app, ctx context.Context, accessible bool) *setupOptions {
	return &setupOptions{Context: ctx, In: f.Stdin, Out: f.Stdout, Err: f.Stderr, TTY: f.Terminal(), Accessible: accessible || f.accessible(),
		Config: f.loadConfig, Vault: f.Vault, Proxy: f.Proxy, Registry: f.Registry(), HTTP: f.HTTPClient(), BeforeForm: f.ResolveBackground,
		MoveTo: func(name string, extra map[string]string, settings []config.Setting) (vault.MoveReport, error) {
			v, err := f.sessionVault()
			if err != nil {
				return vault.MoveReport{}, err
			}
			return v.MoveTo(f.Registry(), name, f.Dirs(), extra, settings)
		}}
}

// runSetup asks the setup questions on opts.In/opts.Out and applies the
// answers (wizard.SetupRun) to config.toml, the vault and, in memory, the
// loaded config.
func runSetup(opts *setupOptions) error {
	l, err := opts.Config()
	if err != nil {
		return fmt.Errorf("%w (fix config.toml, then run hush setup again)", err)
	}
	lv, err := opts.Vault()
	if err != nil {
		return err
	}
	err = wizard.SetupRun{In: opts.In, Out: opts.Out, Err: opts.Err, TTY: opts.TTY, Accessible: opts.Accessible,
		Config: l.Config, Backend: session.Backend(*l.Config), ConfigPath: filepath.Join(l.Dirs.Config, config.FileName), DataDir: l.Dirs.Data,
		Registry: opts.Registry, Proxy: opts.Proxy(), Vault: lv, HTTP: opts.HTTP, BeforeForm: opts.BeforeForm,
		MoveTo: opts.MoveTo}.Run(opts.Context)
	switch {
	case errors.Is(err, wizard.ErrAborted):
		return &exitError{exitInterrupted, err}
	case errors.Is(err, wizard.ErrInput):
		return &exitError{exitUsage, err}
	case err != nil:
		return &exitError{exitFailure, err}
	}
	return nil
}
