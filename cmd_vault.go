package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
)

// vaultRegistry is every vault backend hush can open (session.VaultRegistry).
func (a *app) vaultRegistry() *vault.Registry { return session.VaultRegistry(a.ambient) }

// currentBackend is the configured backend's name.
func (a *app) currentBackend() string { return session.Backend(a.cfg) }

// vaultCommands is vault.Commands on the app's vault, opened.
func (a *app) vaultCommands() (vault.Commands, error) {
	lv, err := a.openVault()
	if err != nil {
		return vault.Commands{}, err
	}
	return vault.Commands{Layered: lv, Proxy: a.proxy, Backend: a.currentBackend(), Out: a.stdout, Err: a.stderr}, nil
}

func (a *app) vaultCommand() *cli.Command {
	return &cli.Command{
		Name:  "vault",
		Usage: "manage the secrets hush keeps: set, list, rm, import, backend, reveal",
		Description: "Secrets live in the configured backend ([vault] backend in config.toml): envfile\n" +
			"(vault.env in the data dir) or keyring (the OS keyring). A tool gets one only through\n" +
			"a ${NAME} reference the permission gate allowed. Values are never taken from the\n" +
			"command line and never printed, except by `reveal` on your terminal.",
		Subcommands: []*cli.Command{
			{
				Name:      "set",
				Usage:     "store a secret: the value comes from stdin when piped, else from a hidden prompt",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault set NAME (the value is read from stdin or a hidden prompt, never from the command line, where ps and shell history would show it)")}
					}
					return a.vaultSet(c.Args().First())
				},
			},
			{
				Name:   "list",
				Usage:  "list secret names, where each comes from, and the backend (never values)",
				Action: func(c *cli.Context) error { return a.vaultList() },
			},
			{
				Name:      "rm",
				Usage:     "remove a secret from the vault",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault rm NAME")}
					}
					return a.vaultRm(c.Args().First())
				},
			},
			{
				Name:      "import",
				Usage:     "copy the secrets of a legacy file (.env, .env.local, sub/.env, .envrc …) into the vault",
				ArgsUsage: "PATH",
				Description: "Stores every entry of PATH in the vault and reads each back. Names the backend cannot\n" +
					"store are refused with the reason; a name the vault already holds with another value is\n" +
					"kept unless --overwrite. Afterwards hush offers to delete PATH or rename it to\n" +
					"PATH.imported (at a terminal), or does what --delete-source / --rename-source says.\n" +
					"PATH is deleted only when every entry is in the vault.",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "delete-source", Usage: "delete PATH once every entry is in the vault"},
					&cli.BoolFlag{Name: "rename-source", Usage: "rename PATH to PATH.imported afterwards"},
					&cli.BoolFlag{Name: "overwrite", Usage: "replace values the vault already holds under the same names"},
				},
				Action: func(c *cli.Context) error {
					args, late, err := trailingFlags(c, "delete-source", "rename-source", "overwrite")
					if err != nil || len(args) != 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault import [--delete-source|--rename-source] [--overwrite] PATH")}
					}
					opts := session.ImportOptions{DeleteSource: late["delete-source"], RenameSource: late["rename-source"], Overwrite: late["overwrite"]}
					if opts.DeleteSource && opts.RenameSource {
						return &exitError{exitUsage, errors.New("--delete-source and --rename-source exclude each other")}
					}
					return a.vaultImport(args[0], opts)
				},
			},
			{
				Name:      "backend",
				Usage:     "show the vault backend, or switch to another one, moving every secret across",
				ArgsUsage: "[NAME]",
				Description: "Without NAME: the backend in use and where it keeps secrets. With NAME: copies every\n" +
					"secret to NAME and reads each back, then switches config.toml, then deletes them from\n" +
					"the old backend. A failure before the switch leaves the old backend as it was and\n" +
					"removes what was copied. Moving secrets needs you at a terminal, so a tool cannot\n" +
					"move them somewhere it can read.",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask before moving (a terminal is still required)"}},
				Action: func(c *cli.Context) error {
					args, late, err := trailingFlags(c, "yes")
					if err != nil || len(args) > 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault backend [--yes] [NAME]")}
					}
					if len(args) == 0 {
						return a.vaultBackendShow()
					}
					return a.vaultBackendSwitch(args[0], late["yes"])
				},
			},
			{
				Name:      "reveal",
				Usage:     "show a secret's value on your terminal, after you confirm",
				ArgsUsage: "NAME",
				Description: "Works only with a controlling terminal: the question and the value go to the terminal\n" +
					"itself, not to stdout. Tools run without a terminal, so a tool cannot read the vault\n" +
					"through hush. Every reveal (and refusal) is recorded in the audit log.",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault reveal NAME")}
					}
					return a.vaultReveal(c.Args().First())
				},
			},
		},
	}
}

// trailingFlags returns a command's arguments and its boolean flags, also
// when a flag follows the arguments (`hush vault import .env --delete-source`),
// which urfave/cli leaves among the arguments. An unknown flag is an error.
func trailingFlags(c *cli.Context, names ...string) ([]string, map[string]bool, error) {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = c.Bool(n)
	}
	var args []string
	rest := c.Args().Slice()
	for i, arg := range rest {
		if arg == "--" {
			args = append(args, rest[i+1:]...)
			break
		}
		name, isFlag := strings.CutPrefix(arg, "--")
		if !isFlag && len(arg) == 2 && arg[0] == '-' {
			name, isFlag = map[string]string{"-y": "yes"}[arg], true
		}
		if !isFlag {
			args = append(args, arg)
			continue
		}
		if _, known := set[name]; !known {
			return nil, nil, fmt.Errorf("unknown flag %s", arg)
		}
		set[name] = true
	}
	return args, set, nil
}

// stdinTerminal returns stdin as a terminal, or nil when it is not one.
func (a *app) stdinTerminal() *os.File { return wizard.Terminal(a.stdin) }

// resolveBackground asks the terminal for its background colour, with a
// short timeout, before hush draws a form in it (wizard.ResolveBackground).
func (a *app) resolveBackground() {
	in := a.stdinTerminal()
	out, ok := a.stdout.(*os.File)
	if in != nil && ok {
		wizard.ResolveBackground(in, out, a.ambient["TERM"], wizard.BackgroundTimeout)
	}
}

// controllingTerminal and askTTY: the person at the terminal (wizard).
func controllingTerminal() (*os.File, error) { return wizard.ControllingTerminal() }

func askTTY(tty *os.File, question string) bool { return wizard.AskTTY(tty, question) }

// readSecretValue reads a value for `vault set` (vault.ReadValue).
func (a *app) readSecretValue(name string) (string, error) {
	return vault.ReadValue(a.stdin, a.stderr, name)
}

func (a *app) vaultSet(name string) error {
	if err := vault.CheckName(name); err != nil {
		return &exitError{exitUsage, err}
	}
	vc, err := a.vaultCommands()
	if err != nil {
		return err
	}
	value, err := a.readSecretValue(name)
	if err != nil {
		return err
	}
	return vc.Set(name, value)
}

func (a *app) vaultList() error {
	vc, err := a.vaultCommands()
	if err != nil {
		return err
	}
	dotEnv := ""
	if dir, err := a.projectDir(); err == nil {
		dotEnv = filepath.Join(dir, ".env")
	}
	return vc.List(dotEnv)
}

func (a *app) vaultRm(name string) error {
	vc, err := a.vaultCommands()
	if err != nil {
		return err
	}
	return vc.Remove(name)
}

// vaultImport copies a legacy file into the vault (session.ImportLegacyFile);
// at a terminal, without --delete-source or --rename-source, it asks what
// to do with the file.
func (a *app) vaultImport(path string, opts session.ImportOptions) error {
	if a.stdinTerminal() != nil {
		opts.Choose = func(abs, renamed string, safe bool) string {
			a.resolveBackground()
			return wizard.ChooseDisposal(a.stdin, a.stdout, a.ambient["ACCESSIBLE"] != "", abs, renamed, safe)
		}
	}
	return session.ImportLegacyFile(path, a.vaultCommands, opts)
}

func (a *app) vaultBackendShow() error {
	vc, err := a.vaultCommands()
	if err != nil {
		return err
	}
	return vc.ShowBackend(a.vaultRegistry())
}

func (a *app) vaultBackendSwitch(name string, yes bool) error {
	vc, err := a.vaultCommands()
	if err != nil {
		return err
	}
	err = vc.Switch(a.vaultRegistry(), name, a.dirs.Data, func(n int) (bool, error) {
		tty, err := controllingTerminal()
		if err != nil {
			return false, &exitError{exitFailure, fmt.Errorf("moving %d secret(s) to another backend needs you at a terminal (%v); run `hush vault backend %s` in your terminal", n, err, name)}
		}
		defer tty.Close()
		return yes || askTTY(tty, fmt.Sprintf("Move %d secret(s) from %s to %s? [y/N] ", n, vc.Backend, name)), nil
	}, func() error {
		_, err := config.UpdateConfig(filepath.Join(a.dirs.Config, config.FileName), config.Setting{Table: "vault", Key: "backend", Value: name})
		return err
	})
	a.cfg.Vault.Backend = vc.Backend
	return err
}

func (a *app) vaultReveal(name string) error {
	dataDir := ""
	if a.init() == nil {
		dataDir = a.dirs.Data
	}
	return session.RevealOnTerminal(context.Background(), dataDir, a.warn, a.openVault, name)
}
