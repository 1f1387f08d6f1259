package files

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// walkTree makes a repository that exercises the walker: nested
// .gitignore files with a negation, an ignored directory, .git, symlinks
// to a file, to a directory outside and to the vault, a masked .env, a
// directory too large for one getdents read holding more matches than
// glob lists (2×MaxGlobResults+, with mtimes that tie), and a directory
// nobody may list (locked/). It returns the fixture and the paths glob
// **/*.go must find, relative to the project.
func walkTree(t *testing.T) (*fixture, []string) {
	f := newFixture(t)
	var want []string
	add := func(rel string) {
		f.write(rel, "package x\n")
		want = append(want, rel)
	}
	if err := os.MkdirAll(filepath.Join(f.dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(".git/hooks.go", "package x\n")
	f.write(".gitignore", "build/\n*_gen.go\n!keep_gen.go\n")
	add("main.go")
	add("keep_gen.go")
	f.write("x_gen.go", "package x\n")
	f.write("build/out.go", "package x\n")
	f.write(".env", "A=canary\n")
	f.write("README.md", "x\n")
	for i := range 40 {
		d := fmt.Sprintf("d%02d", i)
		add(d + "/a.go")
		add(fmt.Sprintf("%s/s%d/b.go", d, i%3))
		f.write(d+"/notes.txt", "x\n")
		if i%10 == 0 {
			f.write(d+"/.gitignore", "b.go\n")
			want = slices.DeleteFunc(want, func(p string) bool { return strings.HasPrefix(p, d+"/") && strings.HasSuffix(p, "/b.go") })
			add(d + "/c.go")
		}
	}
	big := filepath.Join(f.dir, "big")
	if err := os.MkdirAll(big, 0o755); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", 60)
	base := time.Now().Add(-time.Hour)
	for i := range 2*MaxGlobResults + 500 {
		rel := fmt.Sprintf("big/%s%05d.go", long, i)
		add(rel)
		ts := base.Add(time.Duration(i%97) * time.Second) // ties: 97 distinct mtimes
		if err := os.Chtimes(filepath.Join(f.dir, rel), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	f.write(filepath.Join(f.outside, "o.go"), "package x\n")
	for link, to := range map[string]string{"link.go": filepath.Join(f.dir, "main.go"), "outside": f.outside,
		"vault.go": filepath.Join(f.vault, "vault.env"), "d01/up": f.dir} {
		if err := os.Symlink(to, filepath.Join(f.dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	f.write("locked/l.go", "package x\n")
	f.write("locked/deep/m.go", "package x\n")
	if err := os.Chmod(filepath.Join(f.dir, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(f.dir, "locked"), 0o755) })
	return f, want
}

// newestFirst is glob's order computed independently: lstat each path,
// newest first, ties by path, the first MaxGlobResults.
func newestFirst(t *testing.T, dir string, rels []string) []string {
	type m struct {
		rel string
		mod time.Time
	}
	var ms []m
	for _, r := range rels {
		fi, err := os.Lstat(filepath.Join(dir, r))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m{r, fi.ModTime()})
	}
	slices.SortFunc(ms, func(a, b m) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(a.rel, b.rel)
	})
	var out []string
	for _, x := range ms[:min(len(ms), MaxGlobResults)] {
		out = append(out, x.rel)
	}
	return out
}

// The parallel walk finds what a single goroutine finds, in the same
// order, and both are what the tree holds: ignores honoured, no symlink
// followed, .git and the masked skipped, the big directory read whole.
func TestGlobParallelIsSerial(t *testing.T) {
	f, want := walkTree(t)
	if os.Geteuid() == 0 {
		// root lists locked/ anyway.
		want = append(want, "locked/l.go", "locked/deep/m.go")
	}
	expect := newestFirst(t, f.dir, want)
	for _, parallel := range []int{1, 3, 16, 0} {
		hits, total, w := globWalk(context.Background(), f.check, "**/*.go", f.dir, parallel)
		var got []string
		for _, h := range hits {
			got = append(got, h.rel)
		}
		if total != len(want) || !slices.Equal(got, expect) {
			t.Errorf("parallel=%d: %d files (want %d), listing equal: %v; first differences: %v",
				parallel, total, len(want), slices.Equal(got, expect), firstDiff(got, expect))
		}
		if n := w.masked.Load(); n != 0 {
			t.Errorf("parallel=%d: %d masked, want 0 (vault.go is a symlink, never followed)", parallel, n)
		}
	}
	// Through the tool: the same listing and an honest status.
	out, _, res, err := f.call(Glob{Check: f.check}, GlobParams{Pattern: "**/*.go"})
	if err != nil {
		t.Fatal(err)
	}
	if out != strings.Join(expect, "\n")+"\n" {
		t.Errorf("glob's listing differs: %v", firstDiff(strings.Split(strings.TrimSuffix(out, "\n"), "\n"), expect))
	}
	status := fmt.Sprintf("%d files match **/*.go; the newest %d are listed: narrow the pattern or path", len(want), MaxGlobResults)
	if os.Geteuid() != 0 {
		status += "; could not list locked (permission denied): it was skipped"
	}
	if res.Status != status {
		t.Errorf("status = %q\nwant     %q", res.Status, status)
	}
}

func firstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("at %d got %q, want %q", i, g, w)
		}
	}
	return "none"
}

// A directory the user may not list costs one note and nothing else:
// glob and grep list the rest. Run as root (who may list anything), the
// test runs itself again as nobody.
func TestWalkUnreadableDir(t *testing.T) {
	if dir := os.Getenv("HUSH_FILES_TEST_UNREADABLE"); dir != "" {
		unreadableCalls(t, dir, os.Getenv("HUSH_FILES_TEST_VAULT"))
		return
	}
	f := newFixture(t)
	f.write("a.go", "package a // needle\n")
	f.write("locked/b.go", "package b // needle\n")
	f.write("locked2/c.go", "package c // needle\n")
	f.write("sub/d.go", "package d // needle\n")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(f.dir, "sub/d.go"), old, old); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"locked", "locked2"} {
		if err := os.Chmod(filepath.Join(f.dir, d), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(filepath.Join(f.dir, d), 0o755) })
	}
	if os.Geteuid() != 0 {
		unreadableCalls(t, f.dir, f.vault)
		return
	}
	// As nobody: the test binary and the tree must be reachable.
	for d := f.dir; d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			if !strings.HasPrefix(d, os.TempDir()) || d == os.TempDir() {
				t.Skipf("%s is not reachable by nobody", d)
			}
			if err := os.Chmod(d, fi.Mode().Perm()|0o055); err != nil {
				t.Fatal(err)
			}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(f.outside, "files.test")
	copyFile(t, exe, bin)
	cmd := exec.Command(bin, "-test.run", "^TestWalkUnreadableDir$", "-test.v")
	cmd.Env = []string{"HUSH_FILES_TEST_UNREADABLE=" + f.dir, "HUSH_FILES_TEST_VAULT=" + f.vault}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWalkUnreadableDir") {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
}

func unreadableCalls(t *testing.T, dir, vault string) {
	if _, err := os.ReadDir(filepath.Join(dir, "locked")); err == nil {
		t.Fatal("locked/ is readable: the test cannot test anything")
	}
	f := &fixture{t: t, dir: dir, vault: vault, check: testCheck(vault)}
	for _, tt := range []struct {
		tool          interface{ Name() string }
		args          any
		out, status   string
		wantSubstring bool
	}{
		{Glob{Check: f.check}, GlobParams{Pattern: "**/*.go"}, "a.go\nsub/d.go\n",
			"2 files match **/*.go; could not list 2 directories (locked: permission denied, and 1 more): they were skipped", false},
		{Glob{Check: f.check}, GlobParams{Pattern: "*.go", Path: "locked"}, "",
			"no files match *.go; could not list locked (permission denied): it was skipped", false},
		{Grep{Check: f.check}, GrepParams{Pattern: "needle"}, "a.go:1:package a // needle\nsub/d.go:1:package d // needle\n",
			"2 matching lines in 2 files; could not list 2 directories (locked: permission denied, and 1 more): they were skipped", false},
	} {
		var out string
		var status string
		var err error
		switch tool := tt.tool.(type) {
		case Glob:
			o, _, res, e := f.call(tool, tt.args)
			out, status, err = o, res.Status, e
		case Grep:
			o, _, res, e := f.call(tool, tt.args)
			out, status, err = o, res.Status, e
		}
		if err != nil || out != tt.out || status != tt.status {
			t.Errorf("%s %+v: err %v\nout %q status %q\nwant   %q        %q", tt.tool.Name(), tt.args, err, out, status, tt.out, tt.status)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// On a file system that does not give types in its listings (DT_UNKNOWN),
// the walker stats each entry, without following a link, to learn it.
func TestDirReaderUnknownTypes(t *testing.T) {
	f := newFixture(t)
	f.write("file.go", "x")
	f.write("dir/x.go", "x")
	if err := os.Symlink("file.go", filepath.Join(f.dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(f.dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := openDir(f.dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	var r dirReader
	if err := r.read(fd, f.dir); err != nil {
		t.Fatal(err)
	}
	listed := map[string]uint8{}
	for i := range r.ents {
		listed[r.ents[i].name] = r.typ(fd, i)
		r.ents[i].typ = typeUnknown
	}
	want := map[string]uint8{"file.go": typeFile, "dir": typeDir, "link.go": typeOther, "fifo": typeOther}
	for name, typ := range want {
		if listed[name] != typ {
			t.Errorf("listing: %s is type %d, want %d", name, listed[name], typ)
		}
	}
	if len(listed) != len(want) {
		t.Errorf("listed %v, want %v", listed, want)
	}
	for i := range r.ents {
		name := r.ents[i].name
		if got := r.typ(fd, i); got != want[name] {
			t.Errorf("stat'ed: %s is type %d, want %d", name, got, want[name])
		}
		if !r.ents[i].statted {
			t.Errorf("%s: the type was not stat'ed", name)
		}
	}
	fi, _ := os.Lstat(filepath.Join(f.dir, "file.go"))
	for i := range r.ents {
		if r.ents[i].name == "file.go" {
			if mtime, err := r.stat(fd, i); err != nil || mtime != fi.ModTime().UnixNano() {
				t.Errorf("stat: mtime %d err %v, want %d", mtime, err, fi.ModTime().UnixNano())
			}
		}
	}
}
