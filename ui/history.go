package ui

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/gofrs/flock"
	"github.com/hushcli/hush/config/userfile"
	"github.com/hushcli/hush/executor/outbuf"
)

// HistoryLimit is how many prompts the history file keeps.
const HistoryLimit = 1000

// History is the prompts typed in chat, kept across sessions in a 0600
// file of JSON strings, one per line. Every entry passes Redact before it
// is stored, so a key pasted into a prompt is not kept on disk.
//
// Several chats share the file: each prompt is appended with one write
// (O_APPEND) under an exclusive flock on <file>.lock, and trimming the
// file to HistoryLimit rewrites it, under the same lock, from what is on
// disk then — every other chat's appends included — never from this
// chat's memory.
type History struct {
	Path string
	// Redact scrubs known secrets from a prompt; required.
	Redact func(string) string

	mu      sync.Mutex
	entries []string
}

// historyLineLimit bounds one line read back (a prompt longer than this is
// skipped, never held whole).
const historyLineLimit = 1 << 20

// Load reads the file; a missing file is an empty history. A line that is
// not a JSON string is skipped.
func (h *History) Load() error {
	entries, err := readHistory(h.Path)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = entries
	if n := len(h.entries); n > HistoryLimit {
		h.entries = h.entries[n-HistoryLimit:]
	}
	return nil
}

// readHistory reads the file the way hush reads its own files: a regular
// file only, opened non-blocking, lines bounded.
func readHistory(path string) ([]string, error) {
	f, err := userfile.Open(path, 64<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read chat history %s: %w", path, err)
	}
	defer f.Close()
	var entries []string
	// A line over the limit is skipped as it streams past, and reading
	// goes on after it (bufio.Scanner stopped there, and a trim then
	// rewrote the file without every prompt after it).
	br := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > historyLineLimit {
				long, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		var s string
		if !long && json.Unmarshal(line, &s) == nil && s != "" {
			// Recalled into the prompt and drawn: a hand-edited file holds
			// no escape that reaches the terminal.
			entries = append(entries, outbuf.Sanitize(s))
		}
		line, long = line[:0], false
		if err != nil {
			break // io.EOF, or a read error: what was read is kept
		}
	}
	return entries, nil
}

// Entries returns the prompts, oldest first.
func (h *History) Entries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.entries...)
}

// Add records a prompt (redacted) in memory and on disk. A prompt equal to
// the last one this chat added is not repeated.
func (h *History) Add(prompt string) error {
	prompt = h.Redact(prompt)
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.entries); n > 0 && h.entries[n-1] == prompt {
		return nil
	}
	h.entries = append(h.entries, prompt)
	if len(h.entries) > HistoryLimit {
		h.entries = h.entries[len(h.entries)-HistoryLimit:]
	}
	if err := os.MkdirAll(filepath.Dir(h.Path), 0o700); err != nil {
		return fmt.Errorf("save chat history: %w", err)
	}
	lock := flock.New(h.Path+".lock", flock.SetPermissions(0o600))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("save chat history: %w", err)
	}
	defer lock.Unlock()
	f, err := os.OpenFile(h.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("save chat history: %w", err)
	}
	// A file created earlier with a wider mode is narrowed.
	_ = f.Chmod(0o600)
	b, _ := json.Marshal(prompt)
	_, err = f.Write(append(b, '\n'))
	size := int64(0)
	if st, serr := f.Stat(); serr == nil {
		size = st.Size()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("save chat history: %w", err)
	}
	// Trimmed once the file is well past the limit (about 10% over, by
	// size), from what the file holds now.
	if size > historyTrimAt {
		if err := trimHistory(h.Path); err != nil {
			return fmt.Errorf("trim chat history: %w", err)
		}
	}
	return nil
}

// historyTrimAt is the size past which Add trims the file: a cheap test
// on every prompt instead of counting lines.
const historyTrimAt = 256 << 10

// trimHistory rewrites the file to its last HistoryLimit entries; the
// caller holds the lock. The rewrite is a new file renamed over the old
// one, so a reader never sees half of it.
func trimHistory(path string) error {
	entries, err := readHistory(path)
	if err != nil || len(entries) <= HistoryLimit+HistoryLimit/10 {
		return err
	}
	entries = entries[len(entries)-HistoryLimit:]
	var buf []byte
	for _, e := range entries {
		b, _ := json.Marshal(e)
		buf = append(append(buf, b...), '\n')
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".history-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
