package transcript

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// File is a session's transcript opened for writing by the one hush
// process that holds its lock. Each Write is one entry, one write(2). The
// first write that fails (a full disk, a quota) ends the file's writing:
// a short write is cut off again and every later Write returns the same
// error without touching the file, so the transcript never holds an entry
// after a hole. Notice, if set, is told once.
type File struct {
	// Notice is told the first failure, once.
	Notice func(error)

	mu     sync.Mutex
	f      *os.File
	lock   *flock.Flock
	failed error
}

// ErrStorage wraps the error of every write after a transcript could not
// be written.
var ErrStorage = errors.New("the transcript could not be written")

// Write writes one entry.
func (w *File) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed != nil {
		return 0, w.failed
	}
	n, err := w.f.Write(p)
	if err == nil {
		return n, nil
	}
	if n > 0 && n < len(p) {
		if st, serr := w.f.Stat(); serr == nil && st.Size() >= int64(n) {
			_ = w.f.Truncate(st.Size() - int64(n))
		}
	}
	w.failed = fmt.Errorf("%w (%s): %v; this session's later messages are not saved", ErrStorage, w.f.Name(), err)
	if w.Notice != nil {
		w.Notice(w.failed)
	}
	return n, w.failed
}

// Failed is the error that ended writing, nil while it works.
func (w *File) Failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

// Name is the transcript's path.
func (w *File) Name() string { return w.f.Name() }

// Close closes the file and releases the session's lock. It may be called
// more than once.
func (w *File) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if w.f != nil {
		err = w.f.Close()
		w.f = nil
	}
	if w.lock != nil {
		// The lock file goes with the lock (not one left per session
		// ever opened); a hush that opened it meanwhile finds its lock on
		// a removed file and takes the one at the path instead (lock).
		_ = os.Remove(w.lock.Path())
		_ = w.lock.Unlock()
		w.lock = nil
	}
	if w.failed == nil {
		w.failed = errors.New("the transcript is closed")
	}
	return err
}

// BusyError is Reopen's error for a session another hush process has
// open.
type BusyError struct {
	ID  string
	PID int // 0 when unknown
}

func (e *BusyError) Error() string {
	who := "another hush"
	if e.PID > 0 {
		who = fmt.Sprintf("another hush (pid %d)", e.PID)
	}
	return fmt.Sprintf("session %s is open in %s: add --fork to continue it as a new session, or --wait to wait until it is closed", e.ID, who)
}

// lockPath is the lock file of the transcript at path.
func lockPath(path string) string { return path + ".lock" }

// Lock modes for Reopen.
type LockMode int

const (
	// NoWait fails with a *BusyError when another process holds the session.
	NoWait LockMode = iota
	// Wait waits until the other process closes it (or ctx ends).
	Wait
)

// lock takes the session's lock and records this process's pid in it.
func lock(ctx context.Context, path, id string, mode LockMode) (*flock.Flock, error) {
	for tries := 0; ; tries++ {
		l := flock.New(lockPath(path), flock.SetPermissions(0o600))
		var ok bool
		var err error
		if mode == Wait {
			ok, err = l.TryLockContext(ctx, 100*time.Millisecond)
		} else {
			ok, err = l.TryLock()
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("lock the session %s: %w", id, err)
		}
		if !ok {
			pid := 0
			if b, err := os.ReadFile(lockPath(path)); err == nil && len(b) < 32 {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			return nil, &BusyError{ID: id, PID: pid}
		}
		// The holder before removes the file as it closes (File.Close): a
		// lock taken on the file it removed guards nothing, since the
		// next hush creates and locks a new one. Held is what the path
		// names, or it is taken again.
		held, herr := l.Stat()
		now, nerr := os.Stat(lockPath(path))
		if herr != nil || nerr != nil || !os.SameFile(held, now) {
			_ = l.Unlock()
			if tries < 20 {
				continue
			}
			return nil, fmt.Errorf("lock the session %s: its lock file keeps changing", id)
		}
		// The pid is for the message another hush shows; the lock itself is
		// the flock, released by the kernel when this process ends.
		_ = os.WriteFile(lockPath(path), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
		return l, nil
	}
}

// Create starts the transcript of a new session: it creates the file
// (0600, its directory 0700), takes its lock and writes the session line.
func Create(dataDir string, h Header) (*File, error) {
	path := Path(dataDir, h.ID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the transcript directory: %w", err)
	}
	l, err := lock(context.Background(), path, h.ID, NoWait)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		_ = l.Unlock()
		return nil, fmt.Errorf("create the transcript: %w", err)
	}
	w := &File{f: f, lock: l}
	if _, err := w.Write(Line(Entry{Type: TypeSession, SessionID: h.ID, Project: h.Project, Provider: h.Provider, Model: h.Model, ForkedFrom: h.ForkedFrom})); err != nil {
		w.Close()
		return nil, fmt.Errorf("write the transcript: %w", err)
	}
	return w, nil
}

// Reopen takes the lock of session s (failing with a *BusyError, or
// waiting, as mode says), reads s again — the process that held it may
// have added turns — and opens it to add turns, recording that the
// session was resumed.
func Reopen(ctx context.Context, s *Session, mode LockMode) (*File, error) {
	l, err := lock(ctx, s.Path, s.ID, mode)
	if err != nil {
		return nil, err
	}
	fresh, err := Load(s.Path)
	if err != nil {
		_ = l.Unlock()
		return nil, err
	}
	*s = *fresh
	f, err := os.OpenFile(s.Path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		_ = l.Unlock()
		return nil, fmt.Errorf("open the transcript: %w", err)
	}
	w := &File{f: f, lock: l}
	if s.torn {
		// The last line was cut by a crash: end it, so the next entry
		// starts a line of its own.
		_, _ = f.Write([]byte("\n"))
	}
	if _, err := w.Write(Line(Entry{Type: TypeResumed, SessionID: s.ID})); err != nil {
		w.Close()
		return nil, fmt.Errorf("write the transcript: %w", err)
	}
	return w, nil
}

// Fork starts session h as a copy of from's conversation (its summary and
// turns, repaired as resuming restores them), without taking from's lock,
// and returns it opened like Reopen: from is replaced by the fork read back.
func Fork(dataDir string, from *Session, h Header) (*File, error) {
	h.ForkedFrom = from.ID
	if h.Project == "" {
		h.Project = from.Project
	}
	w, err := Create(dataDir, h)
	if err != nil {
		return nil, err
	}
	write := func(e Entry) error {
		_, err := w.Write(Line(e))
		return err
	}
	if from.Summary != "" {
		if err := write(Entry{Type: TypeSummary, SessionID: h.ID, Text: from.Summary, ThroughTurn: from.SummaryThrough, KeptTurns: len(from.Turns)}); err != nil {
			w.Close()
			return nil, err
		}
	}
	for _, t := range from.Turns {
		for _, m := range t.Messages {
			if err := write(MessageEntry(h.ID, t.N, m)); err != nil {
				w.Close()
				return nil, err
			}
		}
	}
	fresh, err := Load(w.Name())
	if err != nil {
		w.Close()
		return nil, err
	}
	// Turns continue after the source's, so the numbers stay unique.
	fresh.LastTurn = max(fresh.LastTurn, from.LastTurn)
	*from = *fresh
	return w, nil
}
