package vault_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/vault"
)

func TestReadValue(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"v": "v", "v\n": "v", "v\r\n": "v", "v\n\n": "v\n", " v \n": " v ", "": ""} {
		got, err := vault.ReadValue(strings.NewReader(in), &bytes.Buffer{}, "X")
		if err != nil || got != want {
			t.Errorf("ReadValue(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := vault.ReadValue(strings.NewReader(strings.Repeat("x", vault.MaxValue+1)), &bytes.Buffer{}, "X"); err == nil {
		t.Error("an over-long value was accepted")
	}
}

func TestImportedNameDoesNotOverwrite(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), ".env")
	if got := vault.ImportedName(p); got != p+".imported" {
		t.Errorf("ImportedName = %q", got)
	}
	if err := os.WriteFile(p+".imported", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := vault.ImportedName(p); got != p+".imported-2" {
		t.Errorf("ImportedName beside an earlier import = %q", got)
	}
}

func TestSwitchBackend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	from := newMem("A", "1")
	proxy := vault.NewProxy(from)
	reg := vault.NewRegistry()
	if _, err := proxy.SwitchBackend(reg, "nope", dir, nil, func() error { return nil }); err == nil || !strings.Contains(err.Error(), `unknown vault backend "nope"`) {
		t.Errorf("unknown backend: %v", err)
	}
	committed := false
	rep, err := proxy.SwitchBackend(reg, "envfile", dir, map[string]string{"B": "2"}, func() error { committed = true; return nil })
	if err != nil || !committed {
		t.Fatalf("SwitchBackend = %v, committed %v", err, committed)
	}
	if _, ok := proxy.Backend().(*vault.EnvFile); !ok || len(rep.Moved) != 1 {
		t.Errorf("the proxy forwards to %T; moved %v", proxy.Backend(), rep.Moved)
	}
	for n, want := range map[string]string{"A": "1", "B": "2"} {
		if v, err := proxy.Get(n); err != nil || v != want {
			t.Errorf("%s = %q, %v", n, v, err)
		}
	}
	if got := vault.Describe("envfile", proxy.Backend()); got != "envfile ("+filepath.Join(dir, vault.EnvFileName)+")" {
		t.Errorf("Describe = %q", got)
	}
}
