package atomicfile

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
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

// TestRemoveStale: the temp file of a writer that was killed goes, one of
// a writer still running stays, and WriteFile's temp files are 0600.
func TestRemoveStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A process that has exited: its pid names no process any more.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	stale := filepath.Join(dir, ".vault.env.tmp-"+strconv.Itoa(dead)+"-123")
	live := filepath.Join(dir, ".vault.env.tmp-"+strconv.Itoa(os.Getppid())+"-456")
	old := filepath.Join(dir, ".config.toml.tmp-789")
	fresh := filepath.Join(dir, ".mcp.json.tmp-1011")
	other := filepath.Join(dir, "vault.env")
	for _, p := range []string{stale, live, old, fresh, other} {
		if err := os.WriteFile(p, []byte("A=secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	got := RemoveStale(dir)
	sort.Strings(got)
	if want := []string{filepath.Base(old), filepath.Base(stale)}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("removed %q, want %q", got, want)
	}
	for _, p := range []string{live, fresh, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	// WriteFile's temp file: 0600, named with the writer's pid.
	var seen os.FileMode
	err := WriteFile(filepath.Join(dir, "x.toml"), []byte("a"), func(tmp string) error {
		fi, err := os.Stat(tmp)
		if err != nil {
			return err
		}
		seen = fi.Mode().Perm()
		if !strings.HasPrefix(filepath.Base(tmp), ".x.toml.tmp-"+strconv.Itoa(os.Getpid())+"-") {
			t.Errorf("temp file %s does not carry the pid", tmp)
		}
		return nil
	})
	if err != nil || seen != 0o600 {
		t.Errorf("WriteFile: %v, temp file mode %v", err, seen)
	}
}

// TestWriteFileModeKeepsTheMode: the file tools' write keeps a script
// executable and leaves no temp file; WriteFile's default stays 0600.
func TestWriteFileModeKeepsTheMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "run.sh")
	if err := WriteFileMode(p, []byte("#!/bin/sh\n"), 0o755, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, %v; want 0755", fi.Mode(), err)
	}
	if err := WriteFile(p, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("WriteFile's mode = %v, want 0600", fi.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the dir holds %d entries, want only the file", len(entries))
	}
}
