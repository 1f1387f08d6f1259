package ui

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hushcli/hush/executor/outbuf"
)

// HistoryLimit is how many prompts the history file keeps.
const HistoryLimit = 1000

// History is the prompts typed in chat, kept across sessions in a 0600
// file of JSON strings, one per line. Every entry passes Redact before it
// is stored, so a key pasted into a prompt is not kept on disk.
type History struct {
	Path string
	// Redact scrubs known secrets from a prompt; required.
	Redact func(string) string

	mu      sync.Mutex
	entries []string
}

// Load reads the file; a missing file is an empty history. A line that is
// not a JSON string is skipped.
func (h *History) Load() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := os.Open(h.Path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read chat history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			// Recalled into the prompt and drawn: a hand-edited file holds
			// no escape that reaches the terminal.
			h.entries = append(h.entries, outbuf.Sanitize(s))
		}
	}
	if n := len(h.entries); n > HistoryLimit {
		h.entries = h.entries[n-HistoryLimit:]
	}
	return nil
}

// Entries returns the prompts, oldest first.
func (h *History) Entries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.entries...)
}

// Add records a prompt (redacted) in memory and on disk. A prompt equal to
// the last one is not repeated.
func (h *History) Add(prompt string) error {
	prompt = h.Redact(prompt)
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.entries); n > 0 && h.entries[n-1] == prompt {
		return nil
	}
	h.entries = append(h.entries, prompt)
	rewrite := len(h.entries) > HistoryLimit+HistoryLimit/10
	if rewrite {
		h.entries = h.entries[len(h.entries)-HistoryLimit:]
	}
	if err := os.MkdirAll(filepath.Dir(h.Path), 0o700); err != nil {
		return fmt.Errorf("save chat history: %w", err)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	lines := []string{prompt}
	if rewrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		lines = h.entries
	}
	f, err := os.OpenFile(h.Path, flags, 0o600)
	if err != nil {
		return fmt.Errorf("save chat history: %w", err)
	}
	// A file created earlier with a wider mode is narrowed.
	_ = f.Chmod(0o600)
	w := bufio.NewWriter(f)
	for _, l := range lines {
		b, _ := json.Marshal(l)
		w.Write(append(b, '\n'))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("save chat history: %w", err)
	}
	return f.Close()
}
