package session

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/config/atomicfile"
	"github.com/hushcli/hush/tools"
)

// LoadConfig is what every command that touches hush's files does first:
// resolve the dirs from ambient, remove the temp files a killed hush left
// (they hold whole files, the vault's too), read and check config.toml
// (backends against the vault registry), merge the project's
// .hush/config.toml at dir as the trust store allows, and say on errW what
// was left out and which settings put secrets at risk.
func LoadConfig(ambient map[string]string, dir string, errW io.Writer) (config.Dirs, config.Config, error) {
	dirs, err := config.ResolveDirs(ambient)
	if err != nil {
		return dirs, config.Config{}, err
	}
	for _, d := range []string{dirs.Data, dirs.Config} {
		if gone := atomicfile.RemoveStale(d); len(gone) > 0 {
			fmt.Fprintf(errW, "hush: removed %d temporary file(s) a killed hush left in %s (%s)\n", len(gone), d, strings.Join(gone, ", "))
		}
	}
	cfgPath := filepath.Join(dirs.Config, config.FileName)
	cfg, err := config.Load(cfgPath)
	if err == nil {
		err = config.CheckBackend(cfg, cfgPath, VaultRegistry(ambient).Names())
	}
	if err != nil {
		return dirs, cfg, err
	}
	merged, note, err := config.WithProject(cfg, config.NewTrustStore(dirs.Config), dir)
	if err != nil {
		return dirs, cfg, err
	}
	if note != "" {
		fmt.Fprintf(errW, "hush: %s\n", note)
	}
	for _, w := range tools.LiteralSecrets(merged, nil) {
		fmt.Fprintln(errW, "hush: warning: "+w)
	}
	if on := merged.Unsafe.Any(); len(on) > 0 {
		fmt.Fprintf(errW, "hush: WARNING: [unsafe] in config.toml switches protections off (%s): tools may see secrets; remove it\n", strings.Join(on, ", "))
	}
	return dirs, merged, nil
}
