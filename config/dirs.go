package config

import (
	"errors"
	"path/filepath"
)

// Dirs are where hush keeps its configuration and its data.
type Dirs struct {
	Config string // config.toml, mcp.json
	Data   string // vault.env, audit.jsonl, background logs
}

// ResolveDirs picks the directories from an environment snapshot (hush's
// in-memory copy, never os.Getenv): HUSH_CONFIG_DIR and HUSH_DATA_DIR win,
// then the XDG variables (ignored when relative, as the XDG spec says), then
// the XDG defaults under HOME.
func ResolveDirs(env map[string]string) (Dirs, error) {
	home := env["HOME"]
	pick := func(own, xdg, fallback string) (string, error) {
		if v := env[own]; v != "" {
			return filepath.Abs(v)
		}
		if v := env[xdg]; v != "" && filepath.IsAbs(v) {
			return filepath.Join(v, "hush"), nil
		}
		// A relative HOME would place the vault under the working directory,
		// usually the project, which is where it must never be.
		if home == "" || !filepath.IsAbs(home) {
			return "", errors.New("cannot place hush's files: HOME is not set to an absolute path; set " + own)
		}
		return filepath.Join(home, fallback, "hush"), nil
	}
	cfg, err := pick("HUSH_CONFIG_DIR", "XDG_CONFIG_HOME", ".config")
	if err != nil {
		return Dirs{}, err
	}
	data, err := pick("HUSH_DATA_DIR", "XDG_DATA_HOME", filepath.Join(".local", "share"))
	if err != nil {
		return Dirs{}, err
	}
	return Dirs{Config: cfg, Data: data}, nil
}
