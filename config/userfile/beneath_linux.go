package userfile

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openBeneath opens rel below root with the kernel resolving it: a
// symlink that leads out of root, an absolute one, a ".." above it or a
// /proc link to an open file fails the open itself (EXDEV, ELOOP), with
// nothing opened outside. It is errNoOpenat2 where openat2 is missing
// (before Linux 5.6) or refused (a container's seccomp profile).
func openBeneath(root, rel string) (*os.File, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	for try := 0; ; try++ {
		fd, err := unix.Openat2(dir, rel, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), root+"/"+rel), nil
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN) && try < 8:
			// EAGAIN: a rename raced the check that ".." stays below
			// root; the kernel asks for another try.
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			return nil, errNoOpenat2
		case errors.Is(err, unix.EXDEV):
			return nil, outside(root)
		case errors.Is(err, unix.ELOOP):
			return nil, refuse(ErrOutside, "it leads through a link of /proc or too many symlinks; hush reads a project's files only inside the project")
		}
		return nil, &os.PathError{Op: "open", Path: root + "/" + rel, Err: err}
	}
}

// fdPath is where the kernel says f is.
func fdPath(f *os.File) (string, error) {
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
}
