// Package userfile is how hush reads a file it reads for the user — the
// project's .env family, config.toml, mcp.json, a replay file, the envfile
// vault: a regular file only, of bounded size, read in a way a
// cancellation stops.
//
// A .env that was a symlink to /dev/zero grew hush to 11.7 GB in 16 s; a
// .env that was a named pipe hung it forever, deaf to Ctrl-C. Here a
// symlink is followed once, to a regular file, or refused; anything that is
// not a regular file (a pipe, a device, a socket, a directory) is refused
// before a byte is read; a file larger than its limit is refused with a
// sentence saying so.
//
// It is a leaf (the standard library and x/sys only), so config, vault,
// the provider package, the session and the file tools share it. Errors
// name the file and what it is, never its bytes.
package userfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Limits of the files hush reads. Each is far above what a real file of
// its kind holds and far below what would hurt.
const (
	DotEnvLimit  = 1 << 20  // a .env file
	ConfigLimit  = 1 << 20  // config.toml, a project's config, mcp.json, trusted-projects.json
	ReplayLimit  = 64 << 20 // a replay file (recorded model turns, tool output included)
	VaultLimit   = 64 << 20 // the envfile vault
	DefaultLimit = 1 << 20
)

// ErrNotRegular is returned (wrapped) for a path that is not a regular
// file, or a symlink to one.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned (wrapped) for a file over its limit.
var ErrTooLarge = errors.New("file too large")

// Errors: a missing file wraps fs.ErrNotExist; a refused one is a sentence
// starting "it is …" that the caller prefixes with the file's name.

// Open opens path for reading if it is a regular file, or a symlink to one
// (one level: a symlink to a symlink is refused), at most limit bytes long.
// A missing file is an error wrapping fs.ErrNotExist.
func Open(path string, limit int64) (*os.File, error) {
	target := path
	fi, err := os.Lstat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // what the user asked for
		}
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		link, err := os.Readlink(path)
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		target = link
		ti, err := os.Lstat(target)
		if err != nil {
			return nil, fmt.Errorf("it is a symlink to %s, which cannot be read: %w", target, err)
		}
		if !ti.Mode().IsRegular() {
			return nil, refuse(ErrNotRegular, "it is a symlink to %s, which is %s; hush reads only regular files", target, kind(ti.Mode()))
		}
	} else if !fi.Mode().IsRegular() {
		return nil, refuse(ErrNotRegular, "it is %s; hush reads only regular files", kind(fi.Mode()))
	}
	// O_NOFOLLOW: what was checked above is what is opened, even if the
	// path is swapped for a symlink meanwhile; O_NONBLOCK: a named pipe
	// swapped in cannot make the open wait for a writer (fstat refuses it).
	f, err := os.OpenFile(target, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, refuse(ErrNotRegular, "it is %s; hush reads only regular files", kind(st.Mode()))
	}
	if st.Size() > limit {
		f.Close()
		return nil, tooLarge(limit)
	}
	return f, nil
}

// Read returns the contents of path (see Open). It stops, with ctx's
// error, when ctx is done, and refuses a file that grows past limit while
// it is read.
func Read(ctx context.Context, path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(ctx, f, limit)
}

// NotRegular is the refusal of a file of mode m, for readers that open a
// file their own way.
func NotRegular(m fs.FileMode) error {
	return refuse(ErrNotRegular, "it is %s; hush reads only regular files", kind(m))
}

// TooLarge is the refusal of a file over limit bytes.
func TooLarge(limit int64) error { return tooLarge(limit) }

func tooLarge(limit int64) error {
	return refuse(ErrTooLarge, "it is larger than %s, more than hush reads from a file of its kind", size(limit))
}

// refusal is a sentence about a file that is not read, for the caller to
// put after the file's name ("read PATH: it is a named pipe …"); it
// matches its reason with errors.Is.
type refusal struct {
	msg    string
	reason error
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.reason }

func refuse(reason error, format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...), reason: reason}
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// kind names a file type in a sentence.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symlink (only one level of symlink is followed)"
	}
	return "not a regular file"
}
