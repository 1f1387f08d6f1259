package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
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

// TestOpenVaultMalformedDotEnvSaysWhatToDo: a malformed project .env opens
// the vault with its readable values as secrets and a warning naming the
// file and line, never the line's text; DotEnvFault, the refusal a session
// that runs tools gives, says how to go on.
func TestOpenVaultMalformedDotEnvSaysWhatToDo(t *testing.T) {
	t.Parallel()
	data, project := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(project, ".env"), []byte("GOOD_TOKEN=ghp_canaryGood54abcdefghijklmnop\nnot valid ghp_canaryBad55abcdefghijklmnop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := OpenVault(config.Config{}, vault.NewRegistry(), data, map[string]string{}, project)
	if err != nil {
		t.Fatalf("a malformed .env stopped the vault: %v", err)
	}
	line := filepath.Join(project, ".env") + " line 2: malformed .env file (the line is not shown, it may hold a secret)"
	if v.DotEnvFault == nil {
		t.Fatal("no DotEnvFault for a malformed .env")
	}
	msg := v.DotEnvFault.Error()
	if want := line + "; fix that line, or move the file out of the project"; !strings.HasPrefix(msg, want) || strings.Contains(msg, "canary") || strings.Contains(msg, "\n") {
		t.Errorf("DotEnvFault %q, want it to start %q and hold no value", msg, want)
	}
	w := strings.Join(v.Warnings, "\n")
	if !strings.Contains(w, line+"; hush uses the file's other values") || strings.Contains(w, "canary") {
		t.Errorf("warnings = %q", v.Warnings)
	}
	all, err := v.All()
	if err != nil {
		t.Fatal(err)
	}
	if all["GOOD_TOKEN"] != "ghp_canaryGood54abcdefghijklmnop" {
		t.Errorf("the readable value is not a secret: %v", all)
	}
}

// TestRedactBeforeAndAfterTheVault: before the vault is open, the start-up
// environment's credentials are scrubbed (a plain value is left alone, the
// control); after, the snapshot of the vault's values is.
func TestRedactBeforeAndAfterTheVault(t *testing.T) {
	t.Parallel()
	amb := map[string]string{"GITHUB_TOKEN": "ghp_redactcanary123456", "EDITOR": "vim-plain-value"}
	got := Redact(nil, amb, "a ghp_redactcanary123456 b vim-plain-value")
	if strings.Contains(got, "ghp_redactcanary123456") || !strings.Contains(got, "vim-plain-value") {
		t.Errorf("without a vault: %q", got)
	}
	cache := executor.NewSecretCache(func() (map[string]string, error) { return map[string]string{"STORED": "stored-canary-value-77"}, nil },
		func() (uint64, error) { return 1, nil })
	if got := Redact(cache, amb, "x stored-canary-value-77 y"); strings.Contains(got, "stored-canary-value-77") {
		t.Errorf("with the vault: %q", got)
	}
}
