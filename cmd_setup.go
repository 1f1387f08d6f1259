package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/provider/names"
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
// chose reaches the session through a.cfg, in memory.
func (a *app) firstRun(f modelFlags) error {
	if f.provider != "" {
		return nil
	}
	if err := a.init(); err != nil {
		return err
	}
	if a.cfg.Model.Provider != "" || a.stdinTerminal() == nil {
		return nil // without a terminal, newProvider's error says to run `hush setup`
	}
	fmt.Fprintln(a.stdout, "hush is not set up yet: a few questions first (run `hush setup` any time to change an answer).")
	return a.runSetup(context.Background(), false)
}

// currentAnswers are today's settings, the defaults of every question.
func (a *app) currentAnswers() wizard.Answers {
	m := a.cfg.Model
	cur := wizard.Answers{Provider: m.Provider, BaseURL: m.BaseURL, Model: m.Name, Backend: a.currentBackend()}
	if cur.Provider == names.Replay {
		cur = wizard.Answers{Backend: cur.Backend}
	}
	// Only a reference that is exactly ${NAME} names the key; anything else
	// is re-asked.
	if refs, err := vault.References(m.APIKey); err == nil && len(refs) == 1 && m.APIKey == "${"+refs[0]+"}" {
		cur.KeyName = refs[0]
	}
	return cur
}

// runSetup asks the setup questions on a.stdin/a.stdout and applies the
// answers: the key into the vault, references into config.toml (only its
// [model] and [vault] tables change), and — for the session already
// running — into a.cfg and the vault proxy, in memory. Nothing is written to
// the process environment.
func (a *app) runSetup(ctx context.Context, accessible bool) error {
	if err := a.init(); err != nil {
		return fmt.Errorf("%w (fix config.toml, then run hush setup again)", err)
	}
	lv, err := a.openVault()
	if err != nil {
		return err
	}
	cur := a.currentAnswers()
	reg := a.vaultRegistry()

	// Offer the backends that can be opened here; say why one cannot.
	opened := map[string]vault.Vault{cur.Backend: a.proxy.Backend()}
	var backends []wizard.Backend
	for _, name := range reg.Names() {
		if _, ok := opened[name]; !ok {
			v, err := reg.Open(name, a.dirs.Data)
			if err != nil {
				fmt.Fprintf(a.stdout, "(the %s backend is not available here: %v)\n", name, err)
				continue
			}
			opened[name] = v
		}
		backends = append(backends, wizard.Backend{Name: name, Description: name + ": " + vault.BackendDescription(name)})
	}
	defer func() {
		for name, v := range opened {
			if c, ok := v.(io.Closer); ok && v != a.proxy.Backend() && name != cur.Backend {
				_ = c.Close()
			}
		}
	}()

	tty := a.stdinTerminal()
	a.resolveBackground()
	form := &wizard.Setup{
		In:         a.stdin,
		Out:        a.stdout,
		Accessible: accessible || tty == nil || a.ambient["ACCESSIBLE"] != "",
		Terminal:   tty != nil,
		Current:    cur,
		Backends:   backends,
		KeySource:  lv.Origin,
		// The key is checked, and the model list fetched, before anything
		// is stored. A key already stored is sent only when a person runs
		// setup at a terminal: otherwise a tool could pipe answers naming
		// its own URL and have hush send it the key.
		Check: func(ctx context.Context, provider, baseURL, key string) wizard.Check {
			name := wizard.ConventionalKeyName(provider)
			if cur.Provider == provider && cur.KeyName != "" {
				name = cur.KeyName
			}
			if key == "" && lv.Origin(name) != "" {
				t, err := controllingTerminal()
				if err != nil {
					return wizard.Check{OK: true, Skipped: true, Message: "the stored key was not checked: hush sends a stored key to a server only when you run setup at a terminal"}
				}
				t.Close()
				if key, err = lv.Get(name); err != nil {
					return wizard.Check{Message: err.Error()}
				}
			}
			return wizard.CheckKey(ctx, a.httpClient(), provider, baseURL, key)
		},
	}
	ans, err := form.Run(ctx)
	switch {
	case errors.Is(err, wizard.ErrAborted):
		return &exitError{exitInterrupted, err}
	case errors.Is(err, wizard.ErrInput):
		return &exitError{exitUsage, err}
	case err != nil:
		return err
	}
	if check := form.Checked; !check.OK {
		ok, err := form.Confirm(ctx, "Save these settings anyway?", false)
		if err != nil {
			return err
		}
		if !ok {
			return &exitError{exitFailure, errors.New("nothing was saved; run `hush setup` again to change an answer")}
		}
	}

	ref := ""
	if ans.KeyName != "" {
		ref = "${" + ans.KeyName + "}"
	}
	settings := []config.Setting{
		{Table: "model", Key: "provider", Value: ans.Provider},
		{Table: "model", Key: "base_url", Value: ans.BaseURL},
		{Table: "model", Key: "model", Value: ans.Model},
		{Table: "model", Key: "api_key", Value: ref},
		{Table: "vault", Key: "backend", Value: ans.Backend},
	}
	extra := map[string]string{}
	if ans.Key != "" {
		extra[ans.KeyName] = ans.Key
	}
	cfgPath := filepath.Join(a.dirs.Config, config.FileName)
	if ans.Backend != cur.Backend {
		names, err := a.proxy.Names()
		if err != nil {
			return err
		}
		if len(names) > 0 {
			t, err := controllingTerminal()
			if err != nil {
				return &exitError{exitFailure, fmt.Errorf("moving %d secret(s) to the %s backend needs you at a terminal (%v); nothing was saved", len(names), ans.Backend, err)}
			}
			t.Close()
		}
		rep, err := a.moveToBackend(reg, ans.Backend, extra, settings)
		if err != nil {
			return err
		}
		if len(rep.Moved) > 0 {
			fmt.Fprintf(a.stdout, "moved %d secret(s) to the %s backend\n", len(rep.Moved), ans.Backend)
		}
		if w := rep.Warning(cur.Backend); w != "" {
			fmt.Fprintf(a.stderr, "hush: warning: %s\n", w)
		}
	} else {
		for n, v := range extra {
			if err := a.proxy.Set(n, v); err != nil {
				return err
			}
		}
		rewritten, err := config.UpdateConfig(cfgPath, settings...)
		if err != nil {
			return err
		}
		if rewritten {
			fmt.Fprintf(a.stdout, "(%s was rewritten in full: its layout defeated an in-place edit; every setting was kept, comments were not)\n", cfgPath)
		}
	}

	// The carry-across into this session: in memory only.
	a.cfg.Model.Provider, a.cfg.Model.BaseURL, a.cfg.Model.Name, a.cfg.Model.APIKey = ans.Provider, ans.BaseURL, ans.Model, ref
	a.cfg.Vault.Backend = ans.Backend

	where := vault.Describe(ans.Backend, a.proxy.Backend())
	fmt.Fprintf(a.stdout, "saved %s: provider %s, %s, model %s, secrets in %s\n", cfgPath, ans.Provider, ans.BaseURL, ans.Model, where)
	switch {
	case ans.Key != "":
		fmt.Fprintf(a.stdout, "the key is in the vault as %s; config.toml says api_key = %q\n", ans.KeyName, ref)
	case ans.KeyName != "":
		fmt.Fprintf(a.stdout, "the key is %s (from the %s); config.toml says api_key = %q\n", ans.KeyName, lv.Origin(ans.KeyName), ref)
	default:
		fmt.Fprintln(a.stdout, "no API key is used")
	}
	if ans.Key != "" && lv.Origin(ans.KeyName) == "environment" {
		fmt.Fprintf(a.stderr, "hush: warning: %s is also set in the environment hush was started with, and that value wins over the vault; unset it in your shell to use the stored one\n", ans.KeyName)
	}
	return nil
}
