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
