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
	"strings"
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
	// Net is a connection through hush's egress proxy (gate
	// net.connect:HOST): where to, what the call held, and how much went
	// each way.
	Net *Net `json:"net,omitempty"`
}

// Net is one connection a host tool made through hush's egress proxy. It
// names secrets; it never holds a value, a path or a body.
type Net struct {
	Method   string   `json:"method"`
	Host     string   `json:"host"`
	Port     int      `json:"port"`
	Secrets  []string `json:"secrets,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Sent     int64    `json:"sent"`
	Received int64    `json:"received"`
	Error    string   `json:"error,omitempty"`
}

// appendJSON appends exactly what json.Marshal(e) returns (a test holds
// the two equal). It runs for every gate decision, and encoding/json's
// reflection cost about 10 µs of each tool call on a cache the tool's
// process had just evicted.
func (e Entry) appendJSON(b []byte) ([]byte, error) {
	if y := e.Time.Year(); y < 0 || y > 9999 || e.Net != nil {
		return json.Marshal(e) // for its error, or a connection's record
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
//
// Each record is one write(2) of one whole line. A file whose last line is
// torn (a crash mid-write, a truncation) is closed off with a newline when
// it is opened, so the next record starts a line of its own and every
// later record stays readable; Notice is told. A write the disk cannot
// take (it is full) is undone — the partial line cut off again — and
// reported as an error, so the decision it records is not taken.
type Log struct {
	// Notice, if set, is told of damage found and repaired (one sentence).
	Notice func(string)

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
	if err := a.writeLine(line); err != nil {
		a.closeLocked()
		return fmt.Errorf("audit: %w", &fs.PathError{Op: "write", Path: a.path, Err: err})
	}
	if a.mirror != nil {
		a.mirror(e) // only what the file holds: a decision not recorded is not taken
	}
	return nil
}

// writeLine appends line with a single write(2): with O_APPEND a whole
// line lands at once, never interleaved with another process's. A short
// write (the disk filled up part-way) is cut off again, so no partial line
// is left for the next record to be glued to.
func (a *Log) writeLine(line []byte) error {
	var n int
	var err error
	for {
		n, err = syscall.Write(a.fd, line)
		if err != syscall.EINTR {
			break
		}
	}
	if err == nil && n == len(line) {
		return nil
	}
	if n > 0 {
		var st syscall.Stat_t
		if syscall.Fstat(a.fd, &st) == nil && st.Size >= int64(n) && a.endsWith(st.Size, line[:n]) {
			_ = syscall.Ftruncate(a.fd, st.Size-int64(n))
		}
	}
	if err == nil {
		err = syscall.ENOSPC // a short write: the file system took only part
	}
	return err
}

// endsWith reports whether the file's last bytes, before size, are b: the
// partial line this process just wrote, and nobody's record after it.
func (a *Log) endsWith(size int64, b []byte) bool {
	got := make([]byte, len(b))
	n, err := syscall.Pread(a.fd, got, size-int64(len(b)))
	return err == nil && n == len(b) && string(got) == string(b)
}

// closeTornLine ends the file's last line with a newline if it has none:
// the part of a record whose write was cut short. The records before it
// stay as they are, and the next starts a line of its own.
func (a *Log) closeTornLine(fd int, size int64) {
	if size == 0 {
		return
	}
	last := make([]byte, 1)
	if n, err := syscall.Pread(fd, last, size-1); err != nil || n != 1 || last[0] == '\n' {
		return
	}
	if _, err := syscall.Write(fd, []byte("\n")); err != nil {
		return
	}
	if a.Notice != nil {
		a.Notice(fmt.Sprintf("the last line of %s was torn (a write cut short, %s); it was closed off and is skipped when the log is read, and every other record is kept", a.path, "or a truncated file"))
	}
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
	a.closeTornLine(fd, st.Size)
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

// openAppend opens path (created 0600) for write(2) with O_APPEND (and for
// reading its end, to find and cut off a torn line), so
// entries of concurrent hush processes never interleave. It uses the
// syscall package rather than os.OpenFile because on Linux an os.File for a
// regular file costs four more system calls (the netpoller trying fcntl
// and epoll_ctl on it).
func openAppend(path string) (int, error) {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// Damage is what Read skipped: lines that are not an audit entry (a torn
// write, an edit), by line number.
type Damage struct {
	Lines []int
}

// Describe says what was skipped, in one sentence; "" when nothing was.
func (d Damage) Describe(path string) string {
	if len(d.Lines) == 0 {
		return ""
	}
	nums := make([]string, 0, min(len(d.Lines), 10))
	for _, n := range d.Lines[:min(len(d.Lines), 10)] {
		nums = append(nums, strconv.Itoa(n))
	}
	more := ""
	if len(d.Lines) > 10 {
		more = fmt.Sprintf(" and %d more", len(d.Lines)-10)
	}
	what := "line"
	if len(d.Lines) > 1 {
		what = "lines"
	}
	return fmt.Sprintf("%s: skipped %d damaged %s (not an audit entry: %s%s); every other record is shown", path, len(d.Lines), what, strings.Join(nums, ", "), more)
}

// Read reads every entry of the log at path; a missing log is empty. A
// line that does not parse is skipped and counted in Damage, by number,
// never the end of the reading: one torn line must not hide every record
// after it.
func Read(path string) ([]Entry, Damage, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Damage{}, nil
	}
	if err != nil {
		return nil, Damage{}, err
	}
	defer f.Close()
	return decode(f)
}

// maxLine bounds one line; a longer one is damage, not an entry.
const maxLine = 1 << 20

func decode(r io.Reader) ([]Entry, Damage, error) {
	var out []Entry
	var d Damage
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(line) > 0 {
			var e Entry
			if len(line) > maxLine || json.Unmarshal(line, &e) != nil || e.Gate == "" || e.Time.IsZero() {
				d.Lines = append(d.Lines, n)
			} else {
				out = append(out, e)
			}
		}
		if err == io.EOF {
			return out, d, nil
		}
		if err != nil {
			return out, d, err
		}
	}
}

// readLine returns the next line without its newline, keeping at most
// maxLine+1 bytes of an overlong one (enough to know it is too long).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) <= maxLine {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		return line, err
	}
}
