package sandbox

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The /tmp/dbus-* sockets and /tmp/ssh-* agent directories (strayBuses), kept up to date from inotify
// events on /tmp instead of listed again on each plan. /tmp holds hundreds
// of entries and, on a busy machine, changes every second or so (builds,
// editors, other tools): tmpBuses' mtime check then listed it again on
// most sandboxed calls, which was most of the Go side of a sandboxed start.
// The watch is made before the first listing, so nothing made in between
// is missed; each event for a dbus-* name is checked again with lstat; an
// overflowed queue, or a /tmp that is no longer the directory watched
// (removed, moved, mounted over), starts over with a new watch and a full
// listing.

type tmpBusWatch struct {
	sync.Mutex
	fd       int // the inotify descriptor; 0: none
	dev, ino uint64
	socks    map[string]bool // base names of the dbus-* sockets and ssh-* dirs
	list     []string        // their paths, sorted
	buf      []byte
}

var tmpWatch tmpBusWatch

// watchedTmpBuses returns the /tmp/dbus-* sockets, or false when /tmp
// cannot be watched (no inotify instance left, no /tmp), where tmpBuses
// falls back to its mtime check.
func watchedTmpBuses() ([]string, bool) {
	w := &tmpWatch
	w.Lock()
	defer w.Unlock()
	var st unix.Stat_t
	if err := unix.Stat("/tmp", &st); err != nil {
		w.stop()
		return nil, false
	}
	if w.fd > 0 && (st.Dev != w.dev || st.Ino != w.ino || !w.drain()) {
		w.stop()
	}
	if w.fd == 0 && !w.start() {
		return nil, false
	}
	return w.list, true
}

func (w *tmpBusWatch) stop() {
	if w.fd > 0 {
		unix.Close(w.fd)
	}
	w.fd, w.socks, w.list = 0, nil, nil
}

// start watches /tmp — the directory itself, through a descriptor, so the
// inode watched is the one whose identity is kept — and then lists it.
func (w *tmpBusWatch) start() bool {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return false
	}
	dir, err := unix.Open("/tmp", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(fd)
		return false
	}
	defer unix.Close(dir)
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		unix.Close(fd)
		return false
	}
	const events = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	if _, err := unix.InotifyAddWatch(fd, "/proc/self/fd/"+strconv.Itoa(dir), events); err != nil {
		unix.Close(fd)
		return false
	}
	w.fd, w.dev, w.ino = fd, st.Dev, st.Ino
	w.socks = map[string]bool{}
	for _, p := range listTmpBuses() {
		w.socks[filepath.Base(p)] = true
	}
	w.rebuild()
	if w.buf == nil {
		w.buf = make([]byte, 16<<10)
	}
	return true
}

// drain reads the events queued since the last plan and checks each
// dbus-* and ssh-* name again. It returns false when the watch must start over.
func (w *tmpBusWatch) drain() bool {
	changed := false
	for {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			break
		}
		if err != nil || n <= 0 {
			return false
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameAt := off + unix.SizeofInotifyEvent
			off = nameAt + int(ev.Len)
			if ev.Mask&(unix.IN_Q_OVERFLOW|unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0 || off > n {
				return false
			}
			name := w.buf[nameAt:off]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if !tmpMaskName(string(name)) {
				continue
			}
			var st unix.Stat_t
			isSock := unix.Lstat("/tmp/"+string(name), &st) == nil && tmpMasked(string(name), unixMode(st.Mode))
			if isSock != w.socks[string(name)] {
				changed = true
				if isSock {
					w.socks[string(name)] = true
				} else {
					delete(w.socks, string(name))
				}
			}
		}
	}
	if changed {
		w.rebuild()
	}
	return true
}

// unixMode is the type bits of a stat's mode, as tmpMasked reads them.
func unixMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFDIR:
		return fs.ModeDir
	}
	return 0
}

func (w *tmpBusWatch) rebuild() {
	w.list = make([]string, 0, len(w.socks))
	for name := range w.socks {
		w.list = append(w.list, "/tmp/"+name)
	}
	sort.Strings(w.list)
}
