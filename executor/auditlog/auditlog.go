// Package auditlog is hush's append-only record of permission decisions:
// which tool asked for which secret or run, what was decided, and why.
//
// It is a leaf: it imports no other hush package and no model provider, so
// its fuzz target compiles in seconds. It must never hold a secret value —
// a vault read is recorded by the secret's name, in the gate id.
package auditlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// FileName is the audit log in the data dir.
const FileName = "audit.jsonl"

// Decision is what the permission gate said about one request. The gate
// (package executor) uses this type as its own, so an entry records the
// gate's answer without the log depending on the gate.
type Decision string

const (
	Allow Decision = "allow"
	Deny  Decision = "deny"
	Ask   Decision = "ask"
)

// Entry is one gate decision. It never holds a secret value: a vault
// read is recorded by the secret's name, in the gate id.
type Entry struct {
	Time     time.Time `json:"time"`
	Session  string    `json:"session,omitempty"`
	Turn     int       `json:"turn"`
	Tool     string    `json:"tool"`
	Gate     string    `json:"gate"`
	Decision Decision  `json:"decision"`
	Source   string    `json:"source"`
	Rule     string    `json:"rule,omitempty"`
}

// appendJSON appends exactly what json.Marshal(e) returns (a test holds
// the two equal). It runs for every gate decision, and encoding/json's
// reflection cost about 10 µs of each tool call on a cache the tool's
// process had just evicted.
func (e Entry) appendJSON(b []byte) ([]byte, error) {
	if y := e.Time.Year(); y < 0 || y > 9999 {
		return json.Marshal(e) // for its error
	}
	b = append(b, `{"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if e.Session != "" {
		b = appendJSONString(append(b, `,"session":`...), e.Session)
	}
	b = strconv.AppendInt(append(b, `,"turn":`...), int64(e.Turn), 10)
	b = appendJSONString(append(b, `,"tool":`...), e.Tool)
	b = appendJSONString(append(b, `,"gate":`...), e.Gate)
	b = appendJSONString(append(b, `,"decision":`...), string(e.Decision))
	b = appendJSONString(append(b, `,"source":`...), e.Source)
	if e.Rule != "" {
		b = appendJSONString(append(b, `,"rule":`...), e.Rule)
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string. Tool names, gate ids and
// rules are plain ASCII; anything else is left to encoding/json, whose
// escaping (HTML characters, invalid UTF-8, U+2028) it then matches.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Log appends gate decisions to a JSON-lines file, opened O_APPEND so
// each entry lands whole even with several hush processes writing.
//
// The file stays open between records: opening and closing it cost about
// 15 µs of every tool call (measured after the tool's process exits, when
// the caches are cold). Before each record one stat(2) checks that path
// still names that file; if it was removed or rotated, the record goes to
// the file now at path (created if need be), never into the old one.
type Log struct {
	mu       sync.Mutex
	path     string
	now      func() time.Time
	fd       int
	dev, ino uint64 // fd's file, to notice when path names another
	open     bool   // fd is the log's file
	mirror   func(Entry)
}

// Mirror makes every recorded entry also go to f (the OpenTelemetry
// export), after it is written. Set it before the first Record.
func (a *Log) Mirror(f func(Entry)) {
	if a != nil {
		a.mu.Lock()
		a.mirror = f
		a.mu.Unlock()
	}
}

// Open returns the log at path (created 0600 on first write).
func Open(path string) *Log { return &Log{path: path, now: time.Now} }

// Path is the log's file.
func (a *Log) Path() string { return a.path }

// Record appends e, stamping its time.
func (a *Log) Record(e Entry) error {
	if a == nil {
		return nil
	}
	e.Time = a.now().UTC()
	line, err := e.appendJSON(make([]byte, 0, 256))
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	line = append(line, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.reopen(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := writeAll(a.fd, line); err != nil {
		a.closeLocked()
		return fmt.Errorf("audit: %w", &fs.PathError{Op: "write", Path: a.path, Err: err})
	}
	if a.mirror != nil {
		a.mirror(e) // only what the file holds: a decision not recorded is not taken
	}
	return nil
}

// reopen makes a.fd a descriptor of the file now at a.path, creating it (and
// its directory, 0700) if need be.
func (a *Log) reopen() error {
	var st syscall.Stat_t
	if a.open {
		if syscall.Stat(a.path, &st) == nil && uint64(st.Dev) == a.dev && uint64(st.Ino) == a.ino {
			return nil
		}
		a.closeLocked() // removed or rotated: start writing the file now at path
	}
	fd, err := openAppend(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(a.path), 0o700); err == nil {
			fd, err = openAppend(a.path)
		}
	}
	if err != nil {
		return err
	}
	if err := syscall.Fstat(fd, &st); err != nil {
		_ = syscall.Close(fd)
		return &fs.PathError{Op: "stat", Path: a.path, Err: err}
	}
	a.fd, a.dev, a.ino, a.open = fd, uint64(st.Dev), uint64(st.Ino), true
	return nil
}

// Close closes the log's file; a later Record opens it again.
func (a *Log) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closeLocked()
	return nil
}

func (a *Log) closeLocked() {
	if a.open {
		_ = syscall.Close(a.fd)
		a.open = false
	}
}

// openAppend opens path (created 0600) for write(2) with O_APPEND, so
// entries of concurrent hush processes never interleave. It uses the
// syscall package rather than os.OpenFile because on Linux an os.File for a
// regular file costs four more system calls (the netpoller trying fcntl
// and epoll_ctl on it).
func openAppend(path string) (int, error) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// Read reads every entry of the log at path; a missing log is empty.
// A line that does not parse is reported by number.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decode(f, path)
}

func decode(r io.Reader, name string) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("%s line %d: not an audit entry", name, n)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
