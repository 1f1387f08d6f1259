package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hanwen/go-fuse/v2/fs"
)

// mountEnvLayer mounts the .env layer over host at a directory of the
// test's (as hush's child does in the sandbox, but here by go-fuse itself,
// which needs root), unmounted when the test ends.
func mountEnvLayer(t *testing.T, host string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting FUSE outside a sandbox needs root")
	}
	if err := FuseStatus(); err != nil {
		t.Fatalf("this machine must give FUSE: %v", err)
	}
	root, err := newEnvRoot(host)
	if err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(t.TempDir(), "m")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := envOptions()
	opts.MountOptions.DirectMount = true
	srv, err := fs.Mount(mnt, root, opts)
	if err != nil {
		t.Fatalf("mount the layer: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount the layer: %v", err)
		}
	})
	return mnt
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEnvLayerHidesTheFamily: through the layer, no .env-family name
// exists at any depth — not listed, not readable, not creatable, nothing
// renamed or linked to one — while every other file is the host's, both
// ways. The positive control reads the same names on the host.
func TestEnvLayerHidesTheFamily(t *testing.T) {
	host := t.TempDir()
	c := canary(t)
	for _, f := range []string{".env", ".env.local", ".envrc", "sub/.env", "sub/deep/.env.production", ".env.d/x"} {
		writeFile(t, filepath.Join(host, f), c+"\n")
	}
	writeFile(t, filepath.Join(host, "README"), "VISIBLE\n")
	writeFile(t, filepath.Join(host, "sub/main.go"), "package main\n")
	m := mountEnvLayer(t, host)

	for _, f := range []string{".env", ".env.local", ".envrc", "sub/.env", "sub/deep/.env.production", ".env.d/x", ".env.d"} {
		if b, err := os.ReadFile(filepath.Join(host, f)); f != ".env.d" && !strings.Contains(string(b), c) {
			t.Fatalf("control: %s on the host does not hold the canary: %v", f, err)
		}
		if b, err := os.ReadFile(filepath.Join(m, f)); err == nil || strings.Contains(string(b), c) {
			t.Errorf("%s is readable through the layer: %q", f, b)
		}
		if _, err := os.Lstat(filepath.Join(m, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists through the layer: %v", f, err)
		}
	}
	names := func(d string) string {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	if got := names(m); got != "README sub" {
		t.Errorf("the layer's root lists %q, want README sub", got)
	}
	if got := names(filepath.Join(m, "sub")); got != "deep main.go" {
		t.Errorf("the layer's sub lists %q, want deep main.go", got)
	}
	if b, err := os.ReadFile(filepath.Join(m, "README")); err != nil || string(b) != "VISIBLE\n" {
		t.Errorf("README through the layer: %q %v", b, err)
	}

	// Nothing of the family can be made, whatever the way.
	planted := "PLANTED=1\n"
	attempts := map[string]func() error{
		"create":  func() error { return os.WriteFile(filepath.Join(m, ".env.new"), []byte(planted), 0o644) },
		"mkdir":   func() error { return os.Mkdir(filepath.Join(m, ".env.dir"), 0o755) },
		"symlink": func() error { return os.Symlink("README", filepath.Join(m, "sub/.envrc")) },
		"link":    func() error { return os.Link(filepath.Join(m, "README"), filepath.Join(m, "sub/.env.hard")) },
		"rename":  func() error { return os.Rename(filepath.Join(m, "README"), filepath.Join(m, ".env")) },
		"unlink":  func() error { return os.Remove(filepath.Join(m, ".env")) },
		"rename-from": func() error {
			return os.Rename(filepath.Join(m, "sub/.env"), filepath.Join(m, "sub/stolen"))
		},
	}
	for name, f := range attempts {
		if err := f(); err == nil {
			t.Errorf("%s of a .env-family name through the layer succeeded", name)
		}
	}
	for _, f := range []string{".env.new", ".env.dir", "sub/.envrc", "sub/.env.hard", "sub/stolen"} {
		if _, err := os.Lstat(filepath.Join(host, f)); err == nil {
			t.Errorf("%s was made on the host through the layer", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(host, ".env")); !strings.Contains(string(b), c) {
		t.Errorf("the host's .env changed through the layer: %q", b)
	}

	// Ordinary work passes through, both ways.
	if err := os.WriteFile(filepath.Join(m, "new.txt"), []byte("made\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(m, "new.txt"), filepath.Join(m, "sub/moved.txt")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(host, "sub/moved.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("a file made and renamed through the layer is not on the host: %q %v", b, err)
	}
	writeFile(t, filepath.Join(host, "hostmade.txt"), "host\n")
	if b, err := os.ReadFile(filepath.Join(m, "hostmade.txt")); err != nil || string(b) != "host\n" {
		t.Errorf("a file the host made is not seen through the layer: %q %v", b, err)
	}
}

// TestEnvLayerSurvivesRenameSaves is the editor's save, twenty times,
// under readers rereading .env, sub/.env and .envrc through the layer;
// none sees a value. The control: the same reads on the host see every
// one.
func TestEnvLayerSurvivesRenameSaves(t *testing.T) {
	host := t.TempDir()
	files := []string{".env", "sub/.env", ".envrc"}
	for _, f := range files {
		writeFile(t, filepath.Join(host, f), "EMPTY=\n")
	}
	m := mountEnvLayer(t, host)
	c := canary(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var leaked, reads int
	for _, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				b, _ := os.ReadFile(filepath.Join(m, f))
				mu.Lock()
				reads++
				if strings.Contains(string(b), c) {
					leaked++
				}
				mu.Unlock()
			}
		}()
	}
	seen := 0
	for i := 0; i < 20; i++ {
		for _, f := range files {
			p := filepath.Join(host, f)
			writeFile(t, p+".tmp", "TOKEN="+c+"\n")
			if err := os.Rename(p+".tmp", p); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(p); strings.Contains(string(b), c) {
				seen++
			}
		}
	}
	close(stop)
	wg.Wait()
	if seen != 20*len(files) {
		t.Fatalf("control: the host's own reads saw the value %d times of %d", seen, 20*len(files))
	}
	if reads == 0 {
		t.Fatal("the readers never ran")
	}
	if leaked > 0 {
		t.Errorf("%d of %d reads through the layer saw a value saved by rename", leaked, reads)
	}
}

// TestEnvLayerFollowsNoHostLink: another call of the same session, with a
// layer of its own, replaces a directory this layer already knows by a
// link to a directory outside the project. Nothing done through this
// layer below that name may then reach outside: no create, truncate,
// chmod, unlink or listing there. The control: before the swap, the same
// operations work on the project's own directory.
func TestEnvLayerFollowsNoHostLink(t *testing.T) {
	host := t.TempDir()
	outside := t.TempDir()
	c := canary(t)
	writeFile(t, filepath.Join(outside, "x"), c+"\n")
	writeFile(t, filepath.Join(outside, "victim"), c+"\n")
	writeFile(t, filepath.Join(host, "a/x"), "mine\n")
	writeFile(t, filepath.Join(host, "a/victim"), "mine\n")
	m := mountEnvLayer(t, host)
	// Control, and the layer learns a, a/x and a/victim.
	if err := os.Chmod(filepath.Join(m, "a/x"), 0o640); err != nil {
		t.Fatalf("control: chmod through the layer: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(host, "a/x")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("control: chmod through the layer did not reach the project: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(m, "a/victim")); err != nil {
		t.Fatal(err)
	}
	// The other call's swap, on the host.
	if err := os.Rename(filepath.Join(host, "a"), filepath.Join(host, "a2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(host, "a")); err != nil {
		t.Fatal(err)
	}
	_ = os.Truncate(filepath.Join(m, "a/x"), 0)
	_ = os.Chmod(filepath.Join(m, "a/x"), 0o777)
	_ = os.WriteFile(filepath.Join(m, "a/planted"), []byte("planted"), 0o644)
	_ = os.Remove(filepath.Join(m, "a/victim"))
	ents, _ := os.ReadDir(filepath.Join(m, "a"))
	for _, e := range ents {
		if e.Name() == "victim" || e.Name() == "x" {
			if _, err := os.Stat(filepath.Join(host, "a2", e.Name())); err != nil {
				t.Errorf("the layer listed %s from outside the project", e.Name())
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "x")); err != nil || string(b) != c+"\n" {
		t.Errorf("a truncate through the layer reached outside the project: %q %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(outside, "x")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a chmod through the layer reached outside the project: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Errorf("a create through the layer made a file outside the project")
	}
	if _, err := os.Stat(filepath.Join(outside, "victim")); err != nil {
		t.Errorf("an unlink through the layer removed a file outside the project: %v", err)
	}
}
