package files

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
)

// openChecked opens a file the call named, resolved and checked as real,
// and makes sure the file opened is that one: a symlink swapped in between
// the check and the open (by a tool running in the background) would
// otherwise redirect the read. The last component is opened without
// following a link, and on Linux the descriptor's own path is compared.
// O_NONBLOCK keeps a FIFO put at the path from blocking the open (the
// caller refuses what is not a regular file); a regular file ignores it.
func openChecked(real, name string) (*os.File, error) {
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, unwrapPathError(err))
	}
	if runtime.GOOS == "linux" {
		got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
		if err == nil && filepath.Clean(got) != real {
			f.Close()
			return nil, fmt.Errorf("refused: %s changed while it was being opened (it now leads to %s); nothing was read", name, got)
		}
	}
	return f, nil
}

// openWalked opens a file a walk found as a regular file; a symlink put in
// its place since is not followed.
func openWalked(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// readRegular reads a whole regular file, at most max bytes, refusing
// anything else (a FIFO or device put at the path would block or never
// end) and a symlink in the last component.
func readRegular(path, name string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", name, fi.Mode().Type())
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %s; write and edit handle files up to %s", name, size(fi.Size()), size(max))
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}
