package files

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The layout of struct linux_dirent64, the same on every architecture:
// u64 inode, s64 offset, u16 record length, u8 type, then the name,
// NUL-terminated.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// read lists the open directory fd with getdents64 into r: the types come
// from d_type, and nothing is stat'ed or allocated per name. (os.ReadDir
// allocates two objects per name and os.Open registers each directory
// with the poller, which fails: over the 50,000-file tree that was a
// third of glob's time outside the stats.)
func (r *dirReader) read(fd int, _ string) error {
	r.buf = r.buf[:0]
	r.ents = r.ents[:0]
	for {
		if cap(r.buf)-len(r.buf) < 8<<10 {
			r.buf = slices.Grow(r.buf, max(32<<10, cap(r.buf)))
		}
		n, err := unix.Getdents(fd, r.buf[len(r.buf):cap(r.buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			break
		}
		r.buf = r.buf[:len(r.buf)+n]
	}
	names := string(r.buf) // the directory's names: one allocation
	for off := 0; off+direntName < len(r.buf); {
		reclen := int(binary.NativeEndian.Uint16(r.buf[off+direntReclen:]))
		if reclen <= direntName || off+reclen > len(r.buf) {
			break // not a record: the kernel never does this
		}
		ino := binary.NativeEndian.Uint64(r.buf[off:])
		typ := r.buf[off+direntType]
		start := off + direntName
		n := bytes.IndexByte(r.buf[start:off+reclen], 0)
		off += reclen
		if n <= 0 || ino == 0 {
			continue
		}
		name := names[start : start+n]
		if name == "." || name == ".." {
			continue
		}
		r.ents = append(r.ents, dent{name: name, typ: direntTypes[typ], off: start})
	}
	return nil
}

var direntTypes = [256]uint8{
	unix.DT_UNKNOWN: typeUnknown,
	unix.DT_REG:     typeFile,
	unix.DT_DIR:     typeDir,
	unix.DT_LNK:     typeOther,
	unix.DT_FIFO:    typeOther,
	unix.DT_SOCK:    typeOther,
	unix.DT_CHR:     typeOther,
	unix.DT_BLK:     typeOther,
	unix.DT_WHT:     typeOther,
}

// lstat is statx on entry i relative to fd, not following a link, asking
// for the type and mtime only; the name is passed from the listing's
// buffer where it is already NUL-terminated (unix.Statx would copy it).
// A kernel without statx (before 4.11, or a seccomp filter that refuses
// it) gets fstatat.
func (r *dirReader) lstat(fd, i int) (mode uint32, mtime int64, err error) {
	var stx unix.Statx_t
	_, _, e := unix.Syscall6(unix.SYS_STATX, uintptr(fd), uintptr(unsafe.Pointer(&r.buf[r.ents[i].off])),
		unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_MTIME, uintptr(unsafe.Pointer(&stx)), 0)
	switch e {
	case 0:
		return uint32(stx.Mode), stx.Mtime.Sec*1e9 + int64(stx.Mtime.Nsec), nil
	case unix.ENOSYS, unix.EPERM:
		var st unix.Stat_t
		if err := unix.Fstatat(fd, r.ents[i].name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return 0, 0, err
		}
		return uint32(st.Mode), st.Mtim.Nano(), nil
	}
	return 0, 0, e
}
