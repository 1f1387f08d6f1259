package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
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
