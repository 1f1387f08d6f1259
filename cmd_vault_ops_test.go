package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/vault"
)

func newVaultCmds(t *testing.T) (vaultCmds, *vault.EnvFile, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	ef := vault.NewEnvFile(filepath.Join(t.TempDir(), vault.EnvFileName))
	proxy := vault.NewProxy(ef)
	l := &vault.Layered{Backend: proxy, DotEnv: map[string]string{"FROM_DOTENV": "d", "FROM_SUB": "s"},
		DotEnvFrom: map[string]string{"FROM_DOTENV": "/p/.env", "FROM_SUB": "/p/sub/.env"},
		Process:    map[string]string{"SHADOWED_TOKEN": "env", "ENV_TOKEN": "e"}, IsCredential: func(name string) bool { return strings.HasSuffix(name, "_TOKEN") }}
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return vaultCmds{Layered: l, Proxy: proxy, Backend: "envfile", Out: out, Err: errOut}, ef, out, errOut
}

func TestVaultCmdsSetListRemove(t *testing.T) {
	t.Parallel()
	c, ef, out, errOut := newVaultCmds(t)
	where := "envfile: " + ef.Path()
	if err := c.Set("EMPTY", ""); err == nil || !strings.Contains(err.Error(), "nothing was stored") {
		t.Errorf("Set of an empty value = %v", err)
	}
	if err := c.Set("SHADOWED_TOKEN", "stored-value"); err != nil {
		t.Fatal(err)
	}
	if got, _ := ef.Get("SHADOWED_TOKEN"); got != "stored-value" {
		t.Errorf("stored %q", got)
	}
	if out.String() != "stored SHADOWED_TOKEN in the vault ("+where+")\n" || !strings.Contains(errOut.String(), "wins over the vault") {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
	out.Reset()
	if err := c.List(); err != nil {
		t.Fatal(err)
	}
	want := "NAME            FROM\n" +
		"ENV_TOKEN       environment\n" +
		"FROM_DOTENV     .env (/p/.env; move it with `hush vault import`)\n" +
		"FROM_SUB        .env (/p/sub/.env; move it with `hush vault import`)\n" +
		"SHADOWED_TOKEN  environment (also in the vault; the environment wins)\n" +
		"backend: envfile (" + ef.Path() + ")\n"
	if out.String() != want {
		t.Errorf("list =\n%s\nwant\n%s", out, want)
	}
	if strings.Contains(out.String()+errOut.String(), "stored-value") {
		t.Error("a value was printed")
	}
	for name, want := range map[string]string{
		"ENV_TOKEN":   "ENV_TOKEN is not in the vault: it comes from the environment",
		"FROM_DOTENV": "FROM_DOTENV is not in the vault: it comes from /p/.env;",
		"FROM_SUB":    "FROM_SUB is not in the vault: it comes from /p/sub/.env;",
		"NOPE":        "no secret NOPE in the vault",
	} {
		if err := c.Remove(name); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Remove(%s) = %v, want %q", name, err, want)
		}
	}
	out.Reset()
	errOut.Reset()
	if err := c.Remove("SHADOWED_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if _, err := ef.Get("SHADOWED_TOKEN"); err == nil {
		t.Error("still stored")
	}
	if !strings.HasPrefix(out.String(), "removed SHADOWED_TOKEN") || errOut.String() != "hush: note: SHADOWED_TOKEN is still set in the environment\n" {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
}

func TestVaultCmdsImportFileAndDisposeSource(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		action  string
		entries map[string]string
		wantErr bool
		left    string // "kept", "gone", "renamed"
	}{
		{vault.DeleteSource, map[string]string{"A": "1"}, false, "gone"},
		{vault.DeleteSource, map[string]string{"A": "1", "BAD.NAME": "x"}, true, "kept"},
		{vault.RenameSource, map[string]string{"A": "1", "BAD.NAME": "x"}, false, "renamed"},
		{vault.KeepSource, map[string]string{"A": "1"}, false, "kept"},
	} {
		c, ef, out, _ := newVaultCmds(t)
		src := filepath.Join(t.TempDir(), ".env")
		if err := os.WriteFile(src, []byte("A=1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		rep := c.ImportFile(src, tt.entries, false)
		if v, _ := ef.Get("A"); v != "1" {
			t.Errorf("A = %q", v)
		}
		if !strings.HasPrefix(out.String(), "copied into the vault (envfile: ") {
			t.Errorf("output %q", out)
		}
		err := c.DisposeSource(src, rep, tt.action)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s %v: err = %v", tt.action, tt.entries, err)
		}
		_, srcErr := os.Stat(src)
		_, renErr := os.Stat(src + ".imported")
		left := map[bool]string{true: "kept", false: map[bool]string{true: "renamed", false: "gone"}[renErr == nil]}[srcErr == nil]
		if left != tt.left {
			t.Errorf("%s %v: the source is %s, want %s", tt.action, tt.entries, left, tt.left)
		}
	}
}

func TestVaultCmdsSwitch(t *testing.T) {
	t.Parallel()
	c, _, out, _ := newVaultCmds(t)
	if err := c.Layered.Set("A", "1"); err != nil {
		t.Fatal(err)
	}
	reg := vault.NewRegistry()
	reg.Register("other", func(dir string) (vault.Vault, error) { return vault.NewEnvFile(filepath.Join(dir, "other.env")), nil })
	commits := 0
	dataDir := t.TempDir()
	move := func() (vault.MoveReport, error) {
		return c.Proxy.SwitchBackend(reg, "other", dataDir, nil, func() error { commits++; return nil })
	}
	if err := c.Switch(reg.Names(), "envfile", nil, move); err != nil || out.String() != "already using the envfile backend\n" {
		t.Errorf("same backend: %q, %v", out.String(), err)
	}
	if err := c.Switch(reg.Names(), "nope", nil, move); err == nil || !strings.HasPrefix(err.Error(), `unknown vault backend "nope"`) {
		t.Errorf("unknown: %v", err)
	}
	out.Reset()
	if err := c.Switch(reg.Names(), "other", func(n int) (bool, error) { return n != 1, nil }, move); err != nil || commits != 0 || out.String() != "nothing was changed\n" {
		t.Errorf("declined: %q, %v, %d commits", out.String(), err, commits)
	}
	if err := c.Switch(reg.Names(), "other", func(int) (bool, error) { return true, nil }, move); err != nil || commits != 1 || c.Backend != "other" {
		t.Fatalf("confirmed: %v, %d commits, backend %q", err, commits, c.Backend)
	}
	if v, err := c.Proxy.Get("A"); err != nil || v != "1" {
		t.Errorf("A after the switch = %q, %v", v, err)
	}
}
