package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
)

// TestOpenVaultLayers: the backend's secrets, the project's legacy .env
// (with a warning naming it) and credential-named process variables are
// all secrets; an innocuous process variable is not.
func TestOpenVaultLayers(t *testing.T) {
	t.Parallel()
	data, project := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(project, ".env"), []byte("DOTENV_TOKEN=ghp_canaryDotenv51abcdefghijklmnopqrstuvwx\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ambient := map[string]string{"PATH": "/usr/bin", "GITHUB_TOKEN": "ghp_canaryProcess52abcdefghijklmnopqrstuvw"}
	v, err := OpenVault(config.Config{}, vault.NewRegistry(), data, ambient, project)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Proxy.Set("STORED_KEY", "ghp_canaryStored53abcdefghijklmnopqrstuvwx"); err != nil {
		t.Fatal(err)
	}
	all, err := v.All()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"DOTENV_TOKEN": "ghp_canaryDotenv51abcdefghijklmnopqrstuvwx", "GITHUB_TOKEN": "ghp_canaryProcess52abcdefghijklmnopqrstuvw", "STORED_KEY": "ghp_canaryStored53abcdefghijklmnopqrstuvwx"} {
		if all[name] != want {
			t.Errorf("%s = %q, want %q", name, all[name], want)
		}
	}
	if _, ok := all["PATH"]; ok {
		t.Error("PATH counts as a secret")
	}
	if w := strings.Join(v.Warnings, "\n"); !strings.Contains(w, ".env (1)") || !strings.Contains(w, "hush vault import") {
		t.Errorf("warnings = %q, want one naming the project's .env", v.Warnings)
	}
	if _, err := OpenVault(config.Config{Vault: config.VaultConfig{Backend: "nope"}}, vault.NewRegistry(), data, ambient, project); err == nil {
		t.Error("an unknown backend opened")
	}
}
