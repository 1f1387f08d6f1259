package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/charmbracelet/huh"
	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/vault/keyring"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// vaultRegistry is every vault backend hush can open: the built-in envfile
// backend and the OS keyring. openVault and the commands that switch
// backends both build from it, so they agree on what exists.
func (a *app) vaultRegistry() *vault.Registry {
	reg := vault.NewRegistry()
	reg.Register("keyring", keyring.Factory(a.ambient))
	return reg
}

// backendDescriptions are what `hush setup` and `hush vault backend` say
// about each backend.
func backendDescription(name string) string {
	switch name {
	case "envfile":
		return "a file in hush's data dir (vault.env, mode 0600): works everywhere; any program running as you can read it"
	case "keyring":
		return "the OS keyring (Secret Service, macOS Keychain, Windows Credential Manager): no file, nothing in the environment"
	}
	return name
}

// currentBackend is the configured backend's name.
func (a *app) currentBackend() string {
	if a.cfg.Vault.Backend == "" {
		return session.DefaultBackend
	}
	return a.cfg.Vault.Backend
}

// describeBackend says where a backend keeps its secrets.
func describeBackend(name string, v vault.Vault) string {
	switch b := v.(type) {
	case interface{ Path() string }:
		return name + " (" + b.Path() + ")"
	case interface{ Describe() string }:
		return name + " (" + b.Describe() + ")"
	}
	return name
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
					opts := importOptions{deleteSource: late["delete-source"], renameSource: late["rename-source"], overwrite: late["overwrite"]}
					if opts.deleteSource && opts.renameSource {
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
func (a *app) stdinTerminal() *os.File {
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return f
	}
	return nil
}

// resolveBackground asks the terminal for its background colour, with a
// short timeout, before hush draws a form in it (wizard.ResolveBackground).
func (a *app) resolveBackground() {
	in := a.stdinTerminal()
	out, ok := a.stdout.(*os.File)
	if in != nil && ok {
		wizard.ResolveBackground(in, out, a.ambient["TERM"], wizard.BackgroundTimeout)
	}
}

// errNoTerminal is what commands that need a person say without one.
var errNoTerminal = errors.New("no controlling terminal")

// controllingTerminal opens the process's controlling terminal. A tool's
// process has none (the spawn layer starts each in a new session), so the
// open fails there whatever its stdin or stdout are.
func controllingTerminal() (*os.File, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, errNoTerminal
	}
	return f, nil
}

// askTTY asks a yes/no question on the terminal itself; only "y" or "yes" is yes.
func askTTY(tty *os.File, question string) bool {
	fmt.Fprint(tty, question)
	line, _ := bufio.NewReader(tty).ReadString('\n')
	ans := strings.ToLower(strings.TrimSpace(line))
	return ans == "y" || ans == "yes"
}

// readSecretValue reads a value for `vault set`: all of stdin when it is
// not a terminal (one trailing newline dropped, as `echo` adds it), else a
// prompt with echo off.
func (a *app) readSecretValue(name string) (string, error) {
	if tty := a.stdinTerminal(); tty != nil {
		fmt.Fprintf(a.stderr, "Value for %s (typing is not shown): ", name)
		b, err := term.ReadPassword(int(tty.Fd()))
		fmt.Fprintln(a.stderr)
		if err != nil {
			return "", fmt.Errorf("read the value: %w", err)
		}
		return string(b), nil
	}
	const max = 1 << 20
	b, err := io.ReadAll(io.LimitReader(a.stdin, max+1))
	if err != nil {
		return "", fmt.Errorf("read the value from stdin: %w", err)
	}
	if len(b) > max {
		return "", fmt.Errorf("the value on stdin is longer than %d bytes; nothing was stored", max)
	}
	s := string(b)
	if strings.HasSuffix(s, "\r\n") {
		s = s[:len(s)-2]
	} else {
		s = strings.TrimSuffix(s, "\n")
	}
	return s, nil
}

func (a *app) vaultSet(name string) error {
	if err := vault.CheckName(name); err != nil {
		return &exitError{exitUsage, err}
	}
	lv, err := a.openVault()
	if err != nil {
		return err
	}
	value, err := a.readSecretValue(name)
	if err != nil {
		return err
	}
	if value == "" {
		return errors.New("no value given; nothing was stored (to remove a secret: hush vault rm " + name + ")")
	}
	if err := lv.Set(name, value); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "stored %s in the vault (%s)\n", name, describeBackend(a.currentBackend(), a.proxy.Backend()))
	if lv.Origin(name) == "environment" {
		fmt.Fprintf(a.stderr, "hush: warning: %s is also set in the environment hush was started with, and that value wins over the vault; unset it in your shell to use the stored one\n", name)
	}
	return nil
}

func (a *app) vaultList() error {
	lv, err := a.openVault()
	if err != nil {
		return err
	}
	origins, err := lv.Origins()
	if err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(origins))
	stored, err := a.proxy.Names()
	if err != nil {
		return err
	}
	inVault := map[string]bool{}
	for _, n := range stored {
		inVault[n] = true
	}
	dotEnv := ""
	if dir, err := a.projectDir(); err == nil {
		dotEnv = filepath.Join(dir, ".env")
	}
	if len(names) == 0 {
		fmt.Fprintln(a.stdout, "no secrets")
	} else {
		out := bufio.NewWriter(a.stdout)
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tFROM")
		for _, n := range names {
			from := origins[n]
			switch {
			case from == "environment" && inVault[n]:
				from += " (also in the vault; the environment wins)"
			case from == ".env":
				from += " (" + dotEnv + "; move it with `hush vault import`)"
			}
			fmt.Fprintf(tw, "%s\t%s\n", n, from)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.stdout, "backend: %s\n", describeBackend(a.currentBackend(), a.proxy.Backend()))
	return nil
}

func (a *app) vaultRm(name string) error {
	lv, err := a.openVault()
	if err != nil {
		return err
	}
	stored, err := a.proxy.Names()
	if err != nil {
		return err
	}
	if !slices.Contains(stored, name) {
		switch lv.Origin(name) {
		case "environment":
			return fmt.Errorf("%s is not in the vault: it comes from the environment hush was started with; unset it in your shell", name)
		case ".env":
			return fmt.Errorf("%s is not in the vault: it comes from the project's .env file; remove it there (or import the file and delete it)", name)
		}
		return fmt.Errorf("no secret %s in the vault", name)
	}
	if err := lv.Delete(name); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "removed %s from the vault (%s)\n", name, describeBackend(a.currentBackend(), a.proxy.Backend()))
	if o := lv.Origin(name); o != "" {
		fmt.Fprintf(a.stderr, "hush: note: %s is still set in the %s\n", name, o)
	}
	return nil
}

type importOptions struct {
	deleteSource, renameSource, overwrite bool
}

func (a *app) vaultImport(path string, opts importOptions) error {
	abs, err := filepath.Abs(path)
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
	if _, err := a.openVault(); err != nil {
		return err
	}
	rep := vault.Import(a.proxy, entries, opts.overwrite)
	where := describeBackend(a.currentBackend(), a.proxy.Backend())
	if len(rep.Imported) > 0 {
		fmt.Fprintf(a.stdout, "copied into the vault (%s): %s\n", where, strings.Join(rep.Imported, ", "))
	}
	if len(rep.Already) > 0 {
		fmt.Fprintf(a.stdout, "already in the vault with the same value: %s\n", strings.Join(rep.Already, ", "))
	}
	for _, n := range slices.Sorted(maps.Keys(rep.Kept)) {
		fmt.Fprintf(a.stdout, "not imported: %s: %s\n", n, rep.Kept[n])
	}
	for _, n := range slices.Sorted(maps.Keys(rep.Refused)) {
		fmt.Fprintf(a.stdout, "refused: %s\n", rep.Refused[n])
	}
	if len(entries) == 0 {
		fmt.Fprintf(a.stdout, "%s holds no entries\n", abs)
	}
	return a.disposeSource(abs, rep, opts)
}

// disposeSource deletes or renames the imported file, or says it is still there.
func (a *app) disposeSource(path string, rep vault.ImportReport, opts importOptions) error {
	renamed := path + ".imported"
	for i := 2; ; i++ {
		if _, err := os.Lstat(renamed); errors.Is(err, fs.ErrNotExist) {
			break
		}
		renamed = fmt.Sprintf("%s.imported-%d", path, i)
	}
	action := ""
	switch {
	case opts.deleteSource:
		action = "delete"
	case opts.renameSource:
		action = "rename"
	case a.stdinTerminal() != nil:
		var choices []huh.Option[string]
		if rep.Safe() {
			choices = append(choices, huh.NewOption("Delete "+path+" (every entry is in the vault)", "delete"))
		}
		choices = append(choices,
			huh.NewOption("Rename it to "+filepath.Base(renamed)+" (hush stops reading it)", "rename"),
			huh.NewOption("Keep it (hush keeps reading it, and tools can read the file)", "keep"))
		action = choices[0].Value
		a.resolveBackground()
		form := huh.NewForm(huh.NewGroup(huh.NewSelect[string]().Title("What about " + path + "?").Options(choices...).Value(&action))).
			WithInput(a.stdin).WithOutput(a.stdout).WithAccessible(a.ambient["ACCESSIBLE"] != "").WithShowHelp(false)
		if err := form.RunWithContext(context.Background()); err != nil {
			action = "keep"
		}
	}
	switch action {
	case "delete":
		if !rep.Safe() {
			return fmt.Errorf("not deleting %s: %d entr(ies) are not in the vault (listed above); fix them, or keep the file aside with --rename-source", path, len(rep.Refused)+len(rep.Kept))
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("delete %s: %w", path, err)
		}
		fmt.Fprintf(a.stdout, "deleted %s\n", path)
	case "rename":
		if err := os.Rename(path, renamed); err != nil {
			return fmt.Errorf("rename %s: %w", path, err)
		}
		_ = os.Chmod(renamed, 0o600)
		fmt.Fprintf(a.stdout, "renamed %s to %s (hush no longer reads it; delete it when you no longer need it)\n", path, renamed)
	default:
		fmt.Fprintf(a.stdout, "%s is still there (import copies, it does not move): hush still reads it; delete it, or use --delete-source or --rename-source\n", path)
	}
	return nil
}

func (a *app) vaultBackendShow() error {
	if _, err := a.openVault(); err != nil {
		return err
	}
	names, err := a.proxy.Names()
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "backend: %s, %d secret(s)\n", describeBackend(a.currentBackend(), a.proxy.Backend()), len(names))
	for _, n := range a.vaultRegistry().Names() {
		fmt.Fprintf(a.stdout, "  %-8s %s\n", n, backendDescription(n))
	}
	fmt.Fprintln(a.stdout, "switch with: hush vault backend NAME")
	return nil
}

func (a *app) vaultBackendSwitch(name string, yes bool) error {
	if _, err := a.openVault(); err != nil {
		return err
	}
	cur := a.currentBackend()
	if name == cur {
		fmt.Fprintf(a.stdout, "already using the %s backend\n", name)
		return nil
	}
	reg := a.vaultRegistry()
	if !slices.Contains(reg.Names(), name) {
		return fmt.Errorf("unknown vault backend %q (known: %s)", name, strings.Join(reg.Names(), ", "))
	}
	names, err := a.proxy.Names()
	if err != nil {
		return err
	}
	if len(names) > 0 {
		tty, err := controllingTerminal()
		if err != nil {
			return &exitError{exitFailure, fmt.Errorf("moving %d secret(s) to another backend needs you at a terminal (%v); run `hush vault backend %s` in your terminal", len(names), err, name)}
		}
		defer tty.Close()
		if !yes && !askTTY(tty, fmt.Sprintf("Move %d secret(s) from %s to %s? [y/N] ", len(names), cur, name)) {
			fmt.Fprintln(a.stdout, "nothing was changed")
			return nil
		}
	}
	rep, err := a.moveToBackend(reg, name, nil, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "moved %d secret(s) to %s; config.toml now says [vault] backend = %q\n",
		len(rep.Moved), describeBackend(name, a.proxy.Backend()), name)
	if w := rep.Warning(cur); w != "" {
		fmt.Fprintf(a.stderr, "hush: warning: %s\n", w)
	}
	return nil
}

// moveToBackend opens backend name from reg and moves every secret of the
// live backend into it (plus extra, e.g. a key typed in setup). The config
// change — [vault] backend = name, plus any other tables — is the commit
// point. Afterwards the proxy forwards to the new backend, so everything
// holding the vault (the layered view, the redactor's source) follows.
func (a *app) moveToBackend(reg *vault.Registry, name string, extra map[string]string, settings []config.Setting) (vault.MoveReport, error) {
	if err := a.init(); err != nil {
		return vault.MoveReport{}, err
	}
	if _, err := a.openVault(); err != nil {
		return vault.MoveReport{}, err
	}
	target, err := reg.Open(name, a.dirs.Data)
	if err != nil {
		return vault.MoveReport{}, err
	}
	settings = append(slices.Clone(settings), config.Setting{Table: "vault", Key: "backend", Value: name})
	cfgPath := filepath.Join(a.dirs.Config, config.FileName)
	commit := func() error {
		_, err := config.UpdateConfig(cfgPath, settings...)
		return err
	}
	rep, err := vault.Move(a.proxy.Backend(), target, extra, commit)
	if err != nil {
		if c, ok := target.(io.Closer); ok {
			_ = c.Close()
		}
		return rep, err
	}
	a.proxy.Swap(target)
	a.cfg.Vault.Backend = name
	return rep, nil
}

func (a *app) vaultReveal(name string) error {
	tty, ttyErr := controllingTerminal()
	var audit *auditlog.Log
	if a.init() == nil {
		audit = auditlog.Open(filepath.Join(a.dirs.Data, auditlog.FileName))
		audit.Notice = a.warn
	}
	const subject = "hush vault reveal"
	if ttyErr != nil {
		_, _ = executor.Audited(revealGate{}, audit, "").Decide(context.Background(), executor.Request{GateID: executor.GateVaultRead + name, Subject: subject})
		return &exitError{exitFailure, errors.New("vault reveal needs a controlling terminal and a person to confirm, and there is none here; tools run without one, so a tool cannot read the vault through hush")}
	}
	defer tty.Close()
	lv, err := a.openVault()
	if err != nil {
		return err
	}
	if _, err := lv.Get(name); err != nil {
		return err // no such secret: nothing to ask about
	}
	gate := revealGate{tty: tty, question: fmt.Sprintf("Show the value of %s (from the %s) on this terminal? [y/N] ", name, lv.Origin(name))}
	value, err := executor.GatedVault(context.Background(), executor.Audited(gate, audit, ""), subject, 0, lv).Get(name)
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
	tty      *os.File
	question string
}

func (g revealGate) Decide(_ context.Context, req executor.Request) (executor.Verdict, error) {
	if g.tty == nil {
		return executor.Verdict{Decision: executor.Deny, Source: "no terminal", Message: "no controlling terminal"}, nil
	}
	if askTTY(g.tty, g.question) {
		return executor.Verdict{Decision: executor.Allow, Source: "prompt"}, nil
	}
	return executor.Verdict{Decision: executor.Deny, Source: "prompt", Message: "not shown"}, nil
}
