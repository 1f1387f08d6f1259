//go:build !linux

package files

import (
	"os"

	"golang.org/x/sys/unix"
)

// read lists the open directory fd into r through os.File.ReadDir (which
// takes the types from the listing where the system gives them).
func (r *dirReader) read(fd int, path string) error {
	r.ents = r.ents[:0]
	nfd, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(nfd), path)
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return err
	}
	for _, de := range des {
		typ := typeOther
		switch t := de.Type(); {
		case t.IsDir():
			typ = typeDir
		case t.IsRegular():
			typ = typeFile
		}
		r.ents = append(r.ents, dent{name: de.Name(), typ: typ})
	}
	return nil
}

// lstat is fstatat on entry i relative to fd, not following a link.
func (r *dirReader) lstat(fd, i int) (mode uint32, mtime int64, err error) {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, r.ents[i].name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, 0, err
	}
	return uint32(st.Mode), st.Mtim.Nano(), nil
}
