package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
)

// ImportOptions say how `hush vault import` treats existing values and
// what it does with the file afterwards.
type ImportOptions struct {
	DeleteSource, RenameSource, Overwrite bool
	// Choose asks what to do with the file (vault.KeepSource, DeleteSource
	// or RenameSource) when neither flag is given; nil keeps it. safe says
	// every entry is in the vault.
	Choose func(path, renamed string, safe bool) string
}

// ImportLegacyFile copies every entry of the legacy file at path (.env,
// .envrc …) into the vault open returns, reads each back, and then keeps,
// deletes or renames the file as opts say.
func ImportLegacyFile(path string, open func() (vault.Commands, error), opts ImportOptions) error {
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
	vc, err := open()
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

// MoveTo moves every secret into backend name (vault.Proxy's
// SwitchBackend), with the config change in configDir — [vault] backend =
// name, plus any other settings — as the commit point.
func (v *Vault) MoveTo(reg *vault.Registry, name string, dirs config.Dirs, extra map[string]string, settings []config.Setting) (vault.MoveReport, error) {
	settings = append(slices.Clone(settings), config.Setting{Table: "vault", Key: "backend", Value: name})
	return v.Proxy.SwitchBackend(reg, name, dirs.Data, extra, func() error {
		_, err := config.UpdateConfig(filepath.Join(dirs.Config, config.FileName), settings...)
		return err
	})
}

// VaultCommands is vault.Commands on the opened vault.
func (e *Env) VaultCommands() (vault.Commands, error) {
	lv, err := e.Vault()
	if err != nil {
		return vault.Commands{}, err
	}
	return vault.Commands{Layered: lv, Proxy: e.proxy, Backend: e.Backend(), Out: e.Stdout, Err: e.Stderr}, nil
}

// VaultSet is `hush vault set NAME`: the value comes from stdin when piped,
// else from a hidden prompt (vault.ReadValue), never from the command line.
func (e *Env) VaultSet(name string) error {
	if err := vault.CheckName(name); err != nil {
		return &UsageError{err}
	}
	vc, err := e.VaultCommands()
	if err != nil {
		return err
	}
	value, err := vault.ReadValue(e.Stdin, e.Stderr, name)
	if err != nil {
		return err
	}
	return vc.Set(name, value)
}

// VaultList is `hush vault list`: names, where each comes from, never values.
func (e *Env) VaultList() error {
	vc, err := e.VaultCommands()
	if err != nil {
		return err
	}
	return vc.List()
}

// VaultRm is `hush vault rm NAME`.
func (e *Env) VaultRm(name string) error {
	vc, err := e.VaultCommands()
	if err != nil {
		return err
	}
	return vc.Remove(name)
}

// VaultImport is `hush vault import PATH` (ImportLegacyFile); at a
// terminal, without --delete-source or --rename-source, it asks what to do
// with the file.
func (e *Env) VaultImport(path string, opts ImportOptions) error {
	if e.Terminal() != nil {
		opts.Choose = func(abs, renamed string, safe bool) string {
			e.ResolveBackground()
			return wizard.ChooseDisposal(e.Stdin, e.Stdout, e.accessible(), abs, renamed, safe)
		}
	}
	return ImportLegacyFile(path, e.VaultCommands, opts)
}

// VaultBackendShow is `hush vault backend`: the backend in use and where it
// keeps secrets.
func (e *Env) VaultBackendShow() error {
	vc, err := e.VaultCommands()
	if err != nil {
		return err
	}
	return vc.ShowBackend(e.Registry())
}

// VaultBackendSwitch is `hush vault backend NAME`: it moves every secret to
// backend name after the person at the controlling terminal confirms (yes
// skips the question, not the terminal), with [vault] backend in
// config.toml as the commit point.
func (e *Env) VaultBackendSwitch(name string, yes bool) error {
	return e.vaultBackendSwitch(name, func(n int, from string) (bool, error) {
		tty, err := wizard.ControllingTerminal()
		if err != nil {
			return false, fmt.Errorf("moving %d secret(s) to another backend needs you at a terminal (%v); run `hush vault backend %s` in your terminal", n, err, name)
		}
		defer tty.Close()
		return yes || wizard.AskTTY(tty, fmt.Sprintf("Move %d secret(s) from %s to %s? [y/N] ", n, from, name)), nil
	})
}

// vaultBackendSwitch is VaultBackendSwitch with confirm in place of the
// terminal: it is asked with the number of secrets and the current backend.
func (e *Env) vaultBackendSwitch(name string, confirm func(n int, from string) (bool, error)) error {
	vc, err := e.VaultCommands()
	if err != nil {
		return err
	}
	err = vc.Switch(e.Registry(), name, e.dirs.Data, func(n int) (bool, error) { return confirm(n, vc.Backend) }, func() error {
		_, err := config.UpdateConfig(filepath.Join(e.dirs.Config, config.FileName), config.Setting{Table: "vault", Key: "backend", Value: name})
		return err
	})
	e.cfg.Vault.Backend = vc.Backend
	return err
}

// VaultReveal is `hush vault reveal NAME` (RevealOnTerminal); the reveal is
// recorded in the audit log when the config could be loaded.
func (e *Env) VaultReveal(name string) error {
	dataDir := ""
	if e.Load() == nil {
		dataDir = e.dirs.Data
	}
	return RevealOnTerminal(context.Background(), dataDir, e.Warn, e.Vault, name)
}
