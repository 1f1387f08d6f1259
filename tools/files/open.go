package files

import (
	"fmt"
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
func openChecked(real, name string) (*os.File, error) {
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
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
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
