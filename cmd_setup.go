package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
)

func (a *app) setupCommand() *cli.Command {
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
			return a.runSetup(ctx, c.Bool("accessible"))
		},
	}
}

// firstRun runs setup when `hush chat` starts at a terminal with no model
// configured (no --provider, no [model] provider in config.toml). What setup
// chose reaches the session through a.Config(), in memory.
func (a *app) firstRun(f modelFlags) error {
	if f.provider != "" {
		return nil
	}
	if err := a.Load(); err != nil {
		return err
	}
	if a.Config().Model.Provider != "" || a.Terminal() == nil {
		return nil // without a terminal, newProvider's error says to run `hush setup`
	}
	fmt.Fprintln(a.Stdout, "hush is not set up yet: a few questions first (run `hush setup` any time to change an answer).")
	return a.runSetup(context.Background(), false)
}

// runSetup asks the setup questions on a.stdin/a.stdout and applies the
// answers (wizard.SetupRun), to config.toml, the vault and, in memory, a.Config().
func (a *app) runSetup(ctx context.Context, accessible bool) error {
	if err := a.Load(); err != nil {
		return fmt.Errorf("%w (fix config.toml, then run hush setup again)", err)
	}
	lv, err := a.Vault()
	if err != nil {
		return err
	}
	err = wizard.SetupRun{In: a.Stdin, Out: a.Stdout, Err: a.Stderr, TTY: a.Terminal(), Accessible: accessible || a.Ambient["ACCESSIBLE"] != "",
		Config: a.Config(), Backend: a.Backend(), ConfigPath: filepath.Join(a.Dirs().Config, config.FileName), DataDir: a.Dirs().Data,
		Registry: a.Registry(), Proxy: a.Proxy(), Vault: lv, HTTP: a.HTTPClient(), BeforeForm: a.ResolveBackground,
		MoveTo: func(name string, extra map[string]string, settings []config.Setting) (vault.MoveReport, error) {
			v, err := a.sessionVault()
			if err != nil {
				return vault.MoveReport{}, err
			}
			return v.MoveTo(a.Registry(), name, a.Dirs(), extra, settings)
		}}.Run(ctx)
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
