package userfile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrOutside is returned (wrapped) for a path that leads out of the
// directory it was to be read in: a symlink out, "..", or one of /proc's
// links to an open file.
var ErrOutside = errors.New("outside its directory")

// OpenIn opens path — root itself or a path below it, relative to root
// or absolute — the way hush opens a file it reads on a project's behalf
// (AGENTS.md, a .gitignore, the project's config): resolved without ever
// leaving root (a symlink may lead elsewhere in root, never out of it, and
// never through /proc's links to open files), opened without blocking (a
// named pipe has no writer to wait for, a terminal does not become hush's),
// and a regular file only, checked on the descriptor opened. It returns
// the file and the path it opened with every symlink resolved, which the
// caller passes to its mask check. A missing file wraps fs.ErrNotExist.
//
// On Linux 5.6 and later the kernel resolves the path (openat2 with
// RESOLVE_BENEATH and RESOLVE_NO_MAGICLINKS), so a symlink swapped in
// while it resolves cannot lead out either; elsewhere, or where a seccomp
// profile refuses openat2, the path is resolved first, checked to lie in
// root, and the last component opened without following a link.
func OpenIn(root, path string) (*os.File, string, error) { return openIn(root, path, true) }

// openIn is OpenIn; kernel false resolves as where openat2 is missing.
func openIn(root, path string, kernel bool) (*os.File, string, error) {
	root = filepath.Clean(root)
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	path = filepath.Clean(path)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, "", refuse(ErrOutside, "it is not inside %s; hush reads a project's files only inside the project", root)
	}
	var f *os.File
	err = errNoOpenat2
	if kernel {
		f, err = openBeneath(root, rel)
	}
	if errors.Is(err, errNoOpenat2) {
		f, err = openResolved(root, path)
	}
	if err != nil {
		return nil, "", err
	}
	real, err := openedPath(f, path)
	if err != nil {
		f.Close()
		return nil, "", err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, "", err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, "", NotRegular(st.Mode())
	}
	return f, real, nil
}

// ReadIn is Read for a path that must lie in root (see OpenIn): its
// contents, at most limit bytes, and the path read with symlinks resolved.
func ReadIn(ctx context.Context, root, path string, limit int64) ([]byte, string, error) {
	f, real, err := OpenIn(root, path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	data, err := readAll(ctx, f, limit)
	return data, real, err
}

// errNoOpenat2 says the kernel (or a seccomp profile) offers no openat2.
var errNoOpenat2 = errors.New("openat2 is not available")

// outside is the refusal of a path that resolves out of root.
func outside(root string) error {
	return refuse(ErrOutside, "it leads outside %s through a symlink; hush reads a project's files only inside the project", root)
}

// openResolved is OpenIn where the kernel cannot resolve beneath a
// directory: every symlink resolved, the result checked to lie in root,
// and the last component opened without following a link.
func openResolved(root, path string) (*os.File, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, outside(root)
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	// A directory renamed or a link swapped between the resolve and the
	// open leaves the descriptor elsewhere: where /proc says where it is,
	// it must still be in root.
	if got, err := fdPath(f); err == nil {
		if rel, err := filepath.Rel(realRoot, got); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			f.Close()
			return nil, outside(root)
		}
	}
	return f, nil
}

// openedPath is where f is, symlinks resolved: from /proc where it says,
// else path resolved.
func openedPath(f *os.File, path string) (string, error) {
	if got, err := fdPath(f); err == nil {
		return got, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	return real, nil
}

// readAll reads f to its end, stopping when ctx is done and refusing more
// than limit bytes.
func readAll(ctx context.Context, f *os.File, limit int64) ([]byte, error) {
	var out []byte
	if st, err := f.Stat(); err == nil {
		if st.Size() > limit {
			return nil, tooLarge(limit)
		}
		out = make([]byte, 0, st.Size()+1)
	}
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if int64(len(out)) > limit {
			return nil, tooLarge(limit)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
