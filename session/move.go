package session

import (
	"path/filepath"
	"slices"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
)

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
