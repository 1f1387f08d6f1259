package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	amb := map[string]string{"HOME": root, "HUSH_CONFIG_DIR": filepath.Join(root, "c"), "HUSH_DATA_DIR": filepath.Join(root, "d")}
	project := filepath.Join(root, "p")
	for _, d := range []string{amb["HUSH_CONFIG_DIR"], amb["HUSH_DATA_DIR"], filepath.Join(project, ".hush")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(amb["HUSH_CONFIG_DIR"], config.FileName)
	write(cfgPath, "[model]\nprovider = \"openai\"\n[unsafe]\nsecrets_in_argv = true\n")
	// An untrusted project may only add deny and ask rules.
	write(filepath.Join(project, config.ProjectFile), "[[rules]]\ngate = \"tool.run:bash\"\ndecision = \"allow\"\n")
	var errOut bytes.Buffer
	dirs, cfg, err := LoadConfig(amb, project, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	if dirs.Config != amb["HUSH_CONFIG_DIR"] || cfg.Model.Provider != "openai" {
		t.Errorf("dirs %+v, model %+v", dirs, cfg.Model)
	}
	for _, r := range cfg.Rules {
		if r.Decision == "allow" {
			t.Errorf("an untrusted project's allow rule applies: %+v", r)
		}
	}
	if !strings.Contains(errOut.String(), "hush: WARNING: [unsafe] in config.toml switches protections off (secrets_in_argv)") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
	write(cfgPath, "[vault]\nbackend = \"dotenv\"\n")
	if _, _, err := LoadConfig(amb, project, &errOut); !errors.Is(err, config.ErrConfig) || !strings.Contains(err.Error(), `vault.backend "dotenv": want envfile or keyring`) {
		t.Errorf("an unknown backend: %v", err)
	}
}
