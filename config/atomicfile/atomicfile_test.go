package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesWholeAndPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "vault.env")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new\n"), nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new\n" {
		t.Fatalf("file = %q, %v; want %q", got, err, "new\n")
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	assertNoTemp(t, dir, "vault.env")
}

// TestWriteFileCheckFailureKeepsTheOldFile: a check that refuses the new
// content (config.toml that does not load) changes nothing.
func TestWriteFileCheckFailureKeepsTheOldFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	refuse := errors.New("does not load")
	var seen string
	err := WriteFile(path, []byte("broken\n"), func(tmp string) error {
		b, _ := os.ReadFile(tmp)
		seen = string(b)
		return refuse
	})
	if !errors.Is(err, refuse) {
		t.Fatalf("err = %v, want the check's", err)
	}
	if seen != "broken\n" {
		t.Errorf("check saw %q, want the new content", seen)
	}
	if got, _ := os.ReadFile(path); string(got) != "old\n" {
		t.Errorf("file = %q after a refused check, want the old content", got)
	}
	assertNoTemp(t, dir, "config.toml")
}

func TestWriteFileMissingDir(t *testing.T) {
	t.Parallel()
	err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "f"), []byte("x"), nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want not-exist (WriteFile creates no directories)", err)
	}
}

func assertNoTemp(t *testing.T, dir, base string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != base {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
