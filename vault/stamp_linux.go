package vault

import (
	"io/fs"
	"syscall"
)

func statStamp(path string) (fileStamp, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileStamp{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileStamp{
		dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}, nil
}
