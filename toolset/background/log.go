package background

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// logFile is one process's output on disk, addressed by logical byte offset
// from the first byte the process wrote, so a reader polling with "offset"
// keeps its place across rotations.
//
// A piped log (the usual case) is written by hush and rotated: the current
// segment is path, the previous one path.1, and each holds at most segCap
// bytes, so a process never has more than 2×segCap bytes on disk. A direct
// log (a process kept past hush's exit) is the process's own stdout and
// stderr; hush cannot rotate what it does not write, so it only reads it.
type logFile struct {
	path   string
	direct bool

	mu        sync.Mutex
	f         *os.File // current segment, open for writing; nil once closed
	segCap    int64
	curStart  int64 // logical offset of the current segment's first byte
	prevStart int64 // logical offset of path.1's first byte (== curStart when none)
	total     int64
	err       error // first write error; later writes are dropped
}

func createLog(path string, segCap int64, direct bool) (*logFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create output log: %w", err)
	}
	return &logFile{path: path, direct: direct, f: f, segCap: segCap}, nil
}

// Write appends p, rotating when the current segment is full. It never
// fails: a log that cannot be written must not kill the process writing to
// it through a broken pipe; the first error is reported on read instead.
func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 && l.err == nil && l.f != nil {
		room := l.segCap - (l.total - l.curStart)
		if room <= 0 {
			l.rotate()
			continue
		}
		chunk := p
		if int64(len(chunk)) > room {
			chunk = chunk[:room]
		}
		w, err := l.f.Write(chunk)
		l.total += int64(w)
		p = p[w:]
		if err != nil {
			l.err = err
		}
	}
	return n, nil
}

func (l *logFile) rotate() {
	if err := l.f.Close(); err != nil {
		l.err = err
		return
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil {
		l.err = err
		return
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		l.err = err
		l.f = nil
		return
	}
	l.f = f
	l.prevStart = l.curStart
	l.curStart = l.total
}

// closeWrite closes hush's handle; reads keep working.
func (l *logFile) closeWrite() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// size is the number of bytes the process has written so far.
func (l *logFile) size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.direct {
		if fi, err := os.Stat(l.path); err == nil {
			return fi.Size()
		}
	}
	return l.total
}

// read returns up to limit bytes from logical offset off, or from the oldest
// byte still on disk when off is older; start is where the data begins.
func (l *logFile) read(off int64, limit int) (data []byte, start, size int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, 0, 0, fmt.Errorf("output log %s: %w", l.path, l.err)
	}
	size, prevStart, curStart := l.total, l.prevStart, l.curStart
	if l.direct {
		fi, err := os.Stat(l.path)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("output log: %w", err)
		}
		size = fi.Size()
	}
	start = min(max(off, prevStart), size)
	want := min(int64(limit), size-start)
	buf := make([]byte, 0, want)
	pos := start
	// From path.1 first, then the current segment.
	if pos < curStart && want > 0 {
		n := min(want, curStart-pos)
		b, err := readRange(l.path+".1", pos-prevStart, n)
		if err != nil {
			return nil, 0, 0, err
		}
		buf = append(buf, b...)
		pos += int64(len(b))
		want -= int64(len(b))
	}
	if want > 0 {
		b, err := readRange(l.path, pos-curStart, want)
		if err != nil {
			return nil, 0, 0, err
		}
		buf = append(buf, b...)
	}
	return buf, start, size, nil
}

func readRange(path string, off, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read output log: %w", err)
	}
	defer f.Close()
	b := make([]byte, n)
	got, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read output log: %w", err)
	}
	return b[:got], nil
}

// remove deletes the log's files.
func (l *logFile) remove() {
	l.closeWrite()
	for _, p := range []string{l.path, l.path + ".1"} {
		_ = os.Remove(p)
	}
}
