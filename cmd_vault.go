package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
)

func newVaultCmd(a *app) *cli.Command {
	return &cli.Command{
		Name:  "vault",
		Usage: "manage the secrets hush keeps: set, list, rm, import, backend, reveal",
		Description: "Secrets live in the configured backend ([vault] backend in config.toml): envfile\n" +
			"(vault.env in the data dir) or keyring (the OS keyring). A tool gets one only through\n" +
			"a ${NAME} reference the permission gate allowed. Values are never taken from the\n" +
			"command line and never printed, except by `reveal` on your terminal.",
		Subcommands: []*cli.Command{
			newVaultSetCmd(a, nil),
			newVaultListCmd(a, nil),
			newVaultRmCmd(a, nil),
			newVaultImportCmd(a, nil),
			newVaultBackendCmd(a, nil),
			newVaultRevealCmd(a, nil),
		},
	}
}

// vaultCommands is vaultCmds on the factory's vault.
func (a *app) vaultCommands() (vaultCmds, error) {
	lv, err := a.Vault()
	if err != nil {
		return vaultCmds{}, err
	}
	return vaultCmds{Layered: lv, Proxy: a.Proxy(), Backend: a.Backend(), Out: a.Stdout, Err: a.Stderr}, nil
}

// vaultSetOptions is `hush vault set NAME`.
type vaultSetOptions struct {
	In       io.Reader
	Err      io.Writer
	Commands func() (vaultCmds, error)
	Name     string
}

func newVaultSetCmd(f *app, runF func(*vaultSetOptions) error) *cli.Command {
	if runF == nil {
		runF = runVaultSet
	}
	return &cli.Command{
		Name:      "set",
		Usage:     "store a secret: the value comes from stdin when piped, else from a hidden prompt",
		ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return &exitError{exitUsage, errors.New("usage: hush vault set NAME (the value is read from stdin or a hidden prompt, never from the command line, where ps and shell history would show it)")}
			}
			return runF(&vaultSetOptions{In: f.Stdin, Err: f.Stderr, Commands: f.vaultCommands, Name: c.Args().First()})
		},
	}
}

// runVaultSet reads the value from In when piped, else from a hidden
// prompt (vault.ReadValue), never from the command line, and stores it.
func runVaultSet(opts *vaultSetOptions) error {
	if err := vault.CheckName(opts.Name); err != nil {
		return &exitError{exitUsage, err}
	}
	vc, err := opts.Commands()
	if err != nil {
		return err
	}
	value, err := vault.ReadValue(opts.In, opts.Err, opts.Name)
	if err != nil {
		return err
	}
	return vc.Set(opts.Name, value)
}

// vaultListOptions is `hush vault list`.
type vaultListOptions struct {
	Commands func() (vaultCmds, error)
}

func newVaultListCmd(f *app, runF func(*vaultListOptions) error) *cli.Command {
	if runF == nil {
		runF = runVaultList
	}
	return &cli.Command{
		Name:   "list",
		Usage:  "list secret names, where each comes from, and the backend (never values)",
		Action: func(c *cli.Context) error { return runF(&vaultListOptions{Commands: f.vaultCommands}) },
	}
}

// runVaultList prints names and where each comes from, never values.
func runVaultList(opts *vaultListOptions) error {
	vc, err := opts.Commands()
	if err != nil {
		return err
	}
	return vc.List()
}

// vaultRmOptions is `hush vault rm NAME`.
type vaultRmOptions struct {
	Commands func() (vaultCmds, error)
	Name     string
}

func newVaultRmCmd(f *app, runF func(*vaultRmOptions) error) *cli.Command {
	if runF == nil {
		runF = runVaultRm
	}
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove a secret from the vault",
		ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return &exitError{exitUsage, errors.New("usage: hush vault rm NAME")}
			}
			return runF(&vaultRmOptions{Commands: f.vaultCommands, Name: c.Args().First()})
		},
	}
}

func runVaultRm(opts *vaultRmOptions) error {
	vc, err := opts.Commands()
	if err != nil {
		return err
	}
	return vc.Remove(opts.Name)
}

// vaultImportOptions is `hush vault import PATH`.
type vaultImportOptions struct {
	Commands func() (vaultCmds, error)
	Path     string
	// DeleteSource and RenameSource say what becomes of the file; without
	// either, Choose asks (vault.KeepSource, DeleteSource or RenameSource;
	// safe says every entry is in the vault), and nil keeps it.
	DeleteSource, RenameSource, Overwrite bool
	Choose                                func(path, renamed string, safe bool) string
}

func newVaultImportCmd(f *app, runF func(*vaultImportOptions) error) *cli.Command {
	if runF == nil {
		runF = runVaultImport
	}
	return &cli.Command{
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
			opts := &vaultImportOptions{Commands: f.vaultCommands, Path: args[0], DeleteSource: late["delete-source"], RenameSource: late["rename-source"], Overwrite: late["overwrite"]}
			if opts.DeleteSource && opts.RenameSource {
				return &exitError{exitUsage, errors.New("--delete-source and --rename-source exclude each other")}
			}
			if f.Terminal() != nil {
				opts.Choose = func(abs, renamed string, safe bool) string {
					f.ResolveBackground()
					return wizard.ChooseDisposal(f.Stdin, f.Stdout, f.Ambient["ACCESSIBLE"] != "", abs, renamed, safe)
				}
			}
			return runF(opts)
		},
	}
}

// runVaultImport copies every entry of the legacy file (.env, .envrc …)
// into the vault, reads each back, and then keeps, deletes or renames the
// file as opts say. The vault is opened only for a file it can import.
func runVaultImport(opts *vaultImportOptions) error {
	abs, err := filepath.Abs(opts.Path)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(abs); err != nil {
		return fmt.Errorf("import: %w", err)
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("import: %s is not a file", abs)
	}
	entries, err := config.LoadLegacyFile(abs)
	if err != nil {
		return err
	}
	vc, err := opts.Commands()
	if err != nil {
		return err
	}
	rep := vc.ImportFile(abs, entries, opts.Overwrite)
	action := vault.KeepSource
	switch {
	case opts.DeleteSource:
		action = vault.DeleteSource
	case opts.RenameSource:
		action = vault.RenameSource
	case opts.Choose != nil:
		action = opts.Choose(abs, vault.ImportedName(abs), rep.Safe())
	}
	return vc.DisposeSource(abs, rep, action)
}

// vaultBackendOptions is `hush vault backend [NAME]`.
type vaultBackendOptions struct {
	Commands func() (vaultCmds, error)
	Registry *vault.Registry
	// MoveTo moves every secret to backend name with config.toml's [vault]
	// backend as the commit point (session.Vault.MoveTo).
	MoveTo func(name string) (vault.MoveReport, error)
	// Confirm asks whether to move n secrets from backend from; without a
	// terminal it fails.
	Confirm func(n int, from string) (bool, error)
	// Switched tells the factory's config of the new backend.
	Switched func(name string)
	Name     string // "" shows the backend
}

func newVaultBackendCmd(f *app, runF func(*vaultBackendOptions) error) *cli.Command {
	if runF == nil {
		runF = runVaultBackend
	}
	return &cli.Command{
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
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			opts := vaultBackendOpts(f, name, confirmMove(name, late["yes"]))
			return runF(opts)
		},
	}
}

// vaultBackendOpts are `hush vault backend [NAME]`'s options on f.
func vaultBackendOpts(f *app, name string, confirm func(n int, from string) (bool, error)) *vaultBackendOptions {
	opts := &vaultBackendOptions{Commands: f.vaultCommands, Registry: f.Registry(), Name: name, Confirm: confirm,
		Switched: func(name string) { f.Config().Vault.Backend = name }}
	opts.MoveTo = func(name string) (vault.MoveReport, error) {
		v, err := f.sessionVault()
		if err != nil {
			return vault.MoveReport{}, err
		}
		return v.MoveTo(opts.Registry, name, f.Dirs(), nil, nil)
	}
	return opts
}

// confirmMove asks the person at the controlling terminal before n
// secrets move to backend name; yes skips the question, not the terminal.
func confirmMove(name string, yes bool) func(n int, from string) (bool, error) {
	return func(n int, from string) (bool, error) {
		tty, err := wizard.ControllingTerminal()
		if err != nil {
			return false, fmt.Errorf("moving %d secret(s) to another backend needs you at a terminal (%v); run `hush vault backend %s` in your terminal", n, err, name)
		}
		defer tty.Close()
		return yes || wizard.AskTTY(tty, fmt.Sprintf("Move %d secret(s) from %s to %s? [y/N] ", n, from, name)), nil
	}
}

// runVaultBackend shows the backend in use, or moves every secret to
// backend opts.Name after Confirm says yes.
func runVaultBackend(opts *vaultBackendOptions) error {
	vc, err := opts.Commands()
	if err != nil {
		return err
	}
	if opts.Name == "" {
		return vc.ShowBackend(opts.Registry)
	}
	from := vc.Backend
	err = vc.Switch(opts.Registry.Names(), opts.Name, func(n int) (bool, error) { return opts.Confirm(n, from) }, func() (vault.MoveReport, error) { return opts.MoveTo(opts.Name) })
	if vc.Backend != from && opts.Switched != nil {
		opts.Switched(vc.Backend)
	}
	return err
}

// sessionVault is the factory's vault with its forwarding proxy, which
// MoveTo switches.
func (a *app) sessionVault() (*session.Vault, error) {
	lv, err := a.Vault()
	if err != nil {
		return nil, err
	}
	return &session.Vault{Layered: lv, Proxy: a.Proxy()}, nil
}

// vaultRevealOptions is `hush vault reveal NAME`.
type vaultRevealOptions struct {
	// DataDir is where the audit log is ("" when config.toml could not be
	// read: nothing is recorded); Warn says a problem writing it.
	DataDir string
	Warn    func(string)
	// Terminal opens the controlling terminal; Vault opens the vault,
	// only once there is one.
	Terminal func() (io.ReadWriteCloser, error)
	Vault    func() (*vault.Layered, error)
	Name     string
}

func newVaultRevealCmd(f *app, runF func(*vaultRevealOptions) error) *cli.Command {
	if runF == nil {
		runF = runVaultReveal
	}
	return &cli.Command{
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
			opts := vaultRevealOpts(f, c.Args().First())
			return runF(opts)
		},
	}
}

// vaultRevealOpts are `hush vault reveal NAME`'s options on f: the
// reveal is recorded in the audit log when config.toml could be read.
func vaultRevealOpts(f *app, name string) *vaultRevealOptions {
	opts := &vaultRevealOptions{Warn: f.Warn, Terminal: controllingTerminal, Vault: f.Vault, Name: name}
	if f.Load() == nil {
		opts.DataDir = f.Dirs().Data
	}
	return opts
}

func controllingTerminal() (io.ReadWriteCloser, error) { return wizard.ControllingTerminal() }

// revealSubject is the subject `hush vault reveal` asks the gate as.
const revealSubject = "hush vault reveal"

// errRevealNeedsTerminal is reveal's answer without a controlling terminal.
var errRevealNeedsTerminal = errors.New("vault reveal needs a controlling terminal and a person to confirm, and there is none here; tools run without one, so a tool cannot read the vault through hush")

// runVaultReveal opens the audit log, then the controlling terminal, then
// the vault, and reveals the secret there (reveal). Without a controlling
// terminal the vault is not opened, and the refusal is recorded.
func runVaultReveal(opts *vaultRevealOptions) error {
	var audit *auditlog.Log
	if opts.DataDir != "" {
		audit = auditlog.Open(filepath.Join(opts.DataDir, auditlog.FileName))
		audit.Notice = opts.Warn
	}
	tty, err := opts.Terminal()
	if err != nil {
		return reveal(context.Background(), nil, audit, nil, opts.Name)
	}
	defer tty.Close()
	lv, err := opts.Vault()
	if err != nil {
		return err
	}
	return reveal(context.Background(), tty, audit, lv, opts.Name)
}

// reveal shows secret name's value on tty after the person there
// confirms, through the gate → audit → vault chain, so every reveal and
// refusal is in the audit log. A nil tty is a denial, recorded as one.
// audit may be nil.
func reveal(ctx context.Context, tty io.ReadWriter, audit *auditlog.Log, lv *vault.Layered, name string) error {
	if tty == nil {
		_, _ = executor.Audited(revealGate{}, audit, "").Decide(ctx, executor.Request{GateID: executor.GateVaultRead + name, Subject: revealSubject})
		return errRevealNeedsTerminal
	}
	if _, err := lv.Get(name); err != nil {
		return err // no such secret: nothing to ask about
	}
	gate := revealGate{tty: tty, question: fmt.Sprintf("Show the value of %s (from the %s) on this terminal? [y/N] ", name, lv.Origin(name))}
	value, err := executor.GatedVault(ctx, executor.Audited(gate, audit, ""), revealSubject, 0, lv).Get(name)
	if errors.Is(err, executor.ErrDenied) {
		fmt.Fprintln(tty, "not shown")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(tty, value)
	return nil
}

// revealGate is `hush vault reveal`'s permission gate: the person at the
// controlling terminal, or a denial when there is none.
type revealGate struct {
	tty      io.ReadWriter
	question string
}

func (g revealGate) Decide(_ context.Context, _ executor.Request) (executor.Verdict, error) {
	if g.tty == nil {
		return executor.Verdict{Decision: executor.Deny, Source: "no terminal", Message: "no controlling terminal"}, nil
	}
	if wizard.AskTTY(g.tty, g.question) {
		return executor.Verdict{Decision: executor.Allow, Source: "prompt"}, nil
	}
	return executor.Verdict{Decision: executor.Deny, Source: "prompt", Message: "not shown"}, nil
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
