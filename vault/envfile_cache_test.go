package vault_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hushcli/hush/vault"
)

// TestEnvFileRereadsEveryChange: the backend keeps its last parse and
// reuses it while the file's bytes are the same, so it must see every
// change, including an in-place edit that keeps the size and the inode
// (what a stat-based cache could miss), and must not let a caller's
// changes to a returned map reach the next read.
func TestEnvFileRereadsEveryChange(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), vault.EnvFileName)
	e := vault.NewEnvFile(path)
	write := func(content string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600) // in place: same inode
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(content); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	get := func(want string) {
		t.Helper()
		all, err := e.All()
		if err != nil {
			t.Fatal(err)
		}
		if got := all["TOKEN"]; got != want {
			t.Fatalf("TOKEN = %q, want %q", got, want)
		}
		all["TOKEN"] = "changed-by-the-caller"
		delete(all, "OTHER")
	}
	write("TOKEN=aaaa-1111\nOTHER=x\n")
	get("aaaa-1111")
	get("aaaa-1111") // the cached parse, unharmed by the caller
	write("TOKEN=bbbb-2222\nOTHER=x\n")
	get("bbbb-2222")
	if err := e.Set("TOKEN", "cccc-3333"); err != nil { // hush's own write: a rename
		t.Fatal(err)
	}
	get("cccc-3333")
	if v, err := e.Get("OTHER"); err != nil || v != "x" {
		t.Fatalf("OTHER = %q, %v", v, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if all, err := e.All(); err != nil || len(all) != 0 {
		t.Fatalf("after removal All = %d entries, %v", len(all), err)
	}
}
