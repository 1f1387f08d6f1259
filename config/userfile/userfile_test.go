package userfile_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hushcli/hush/config/userfile"
)

func TestRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("A=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	chain := filepath.Join(dir, "chain")
	zero := filepath.Join(dir, "zero")
	fifo := filepath.Join(dir, "fifo")
	big := filepath.Join(dir, "big")
	for _, l := range [][2]string{{"regular", link}, {"link", chain}, {"/dev/zero", zero}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		limit      int64
		want       string // "" means the contents
		is         error
	}{
		{"regular file", regular, 100, "", nil},
		{"symlink to a regular file", link, 100, "", nil},
		{"symlink to a symlink", chain, 100, "it is a symlink to " + link + ", which is a symlink (only one level of symlink is followed); hush reads only regular files", userfile.ErrNotRegular},
		{"symlink to /dev/zero", zero, 100, "it is a symlink to /dev/zero, which is a character device; hush reads only regular files", userfile.ErrNotRegular},
		{"named pipe", fifo, 100, "it is a named pipe (FIFO); hush reads only regular files", userfile.ErrNotRegular},
		{"directory", dir, 100, "it is a directory; hush reads only regular files", userfile.ErrNotRegular},
		{"too large", big, 1024, "it is larger than 1 KiB, more than hush reads from a file of its kind", userfile.ErrTooLarge},
		{"missing", filepath.Join(dir, "none"), 100, "", fs.ErrNotExist},
	} {
		data, err := userfile.Read(context.Background(), c.path, c.limit)
		switch {
		case c.is == nil && c.want == "":
			if err != nil || string(data) != "A=1\n" {
				t.Errorf("%s: %q, %v", c.name, data, err)
			}
		case !errors.Is(err, c.is):
			t.Errorf("%s: error %v, want one wrapping %v", c.name, err, c.is)
		case c.want != "" && err.Error() != c.want:
			t.Errorf("%s: error\n%s\nwant\n%s", c.name, err, c.want)
		}
	}
}

func TestReadHonoursCancellation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 1<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := userfile.Read(ctx, path, 2<<20); !errors.Is(err, context.Canceled) {
		t.Errorf("Read after cancel: %v", err)
	}
}

// TestOpenIn plants what a hostile tool would put at a project's
// AGENTS.md and checks each is refused at once, without a byte of what it
// leads to; the control is a regular file, directly and through a symlink
// that stays in the project. Both ways of resolving are tried: the
// kernel's (openat2) and the one used where openat2 is missing.
func TestOpenIn(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "proj")
	secret := filepath.Join(base, "vault.env")
	mustWrite := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(secret, "SECRET=canary-beneath\n")
	mustWrite(filepath.Join(root, "docs", "rules.md"), "rules\n")
	links := map[string]string{
		"in":     "docs/rules.md",
		"out":    secret,
		"outrel": "../vault.env",
		"zero":   "/dev/zero",
		"tty":    "/dev/tty",
		"proc":   "/proc/self/root" + secret,
		"viadir": "sub/../../vault.env",
		"dirout": base,
	}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, way := range []struct {
		name string
		open func(root, path string) (*os.File, string, error)
	}{{"openat2", userfile.OpenIn}, {"resolved", userfile.OpenInResolved}} {
		for _, c := range []struct {
			path string
			want string // the contents, or the error's sentence
			is   error
		}{
			{"docs/rules.md", "rules\n", nil},
			{"in", "rules\n", nil},
			{"out", "it leads outside " + root + " through a symlink; hush reads a project's files only inside the project", userfile.ErrOutside},
			{"outrel", "it leads outside " + root + " through a symlink; hush reads a project's files only inside the project", userfile.ErrOutside},
			{"viadir", "", userfile.ErrOutside},
			{"zero", "", userfile.ErrOutside},
			{"tty", "", userfile.ErrOutside},
			{"proc", "", userfile.ErrOutside},
			{"dirout/vault.env", "", userfile.ErrOutside},
			{"../vault.env", "it is not inside " + root + "; hush reads a project's files only inside the project", userfile.ErrOutside},
			{secret, "", userfile.ErrOutside},
			{"fifo", "it is a named pipe (FIFO); hush reads only regular files", userfile.ErrNotRegular},
			{"sub", "it is a directory; hush reads only regular files", userfile.ErrNotRegular},
			{"missing", "", fs.ErrNotExist},
		} {
			f, real, err := way.open(root, c.path)
			if c.is == nil {
				if err != nil {
					t.Errorf("%s %s: %v", way.name, c.path, err)
					continue
				}
				data := make([]byte, 64)
				n, _ := f.Read(data)
				f.Close()
				if string(data[:n]) != c.want || real != filepath.Join(realRoot, "docs", "rules.md") {
					t.Errorf("%s %s: read %q from %s", way.name, c.path, data[:n], real)
				}
				continue
			}
			if err == nil {
				data := make([]byte, 64)
				n, _ := f.Read(data)
				f.Close()
				t.Errorf("%s %s: opened %s, read %q", way.name, c.path, real, data[:n])
				continue
			}
			if !errors.Is(err, c.is) {
				t.Errorf("%s %s: error %v, want one wrapping %v", way.name, c.path, err, c.is)
			} else if c.want != "" && err.Error() != c.want {
				t.Errorf("%s %s: error\n%s\nwant\n%s", way.name, c.path, err, c.want)
			}
			if strings.Contains(err.Error(), "canary-beneath") {
				t.Errorf("%s %s: the error carries the secret: %v", way.name, c.path, err)
			}
		}
	}
}
