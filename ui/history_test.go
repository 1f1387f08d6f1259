package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Two chats add 150 prompts each at once to a history that is already
// past its trimming size: the file is trimmed (so the test exercises the
// rewrite) and keeps all 300.
func TestTwoChatsLoseNoPrompt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	var old strings.Builder
	pad := strings.Repeat("p", 250)
	for i := range HistoryLimit + 90 {
		fmt.Fprintf(&old, "\"old %d %s\"\n", i, pad)
	}
	if err := os.WriteFile(path, []byte(old.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, who := range []string{"A", "B"} {
		h := &History{Path: path, Redact: func(s string) string { return s }}
		if err := h.Load(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 150 {
				if err := h.Add(fmt.Sprintf("chat %s prompt %d", who, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	entries, err := readHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > HistoryLimit+HistoryLimit/10 {
		t.Errorf("the file holds %d entries: it was never trimmed", len(entries))
	}
	have := map[string]bool{}
	for _, e := range entries {
		have[e] = true
	}
	lost := 0
	for _, who := range []string{"A", "B"} {
		for i := range 150 {
			if !have[fmt.Sprintf("chat %s prompt %d", who, i)] {
				lost++
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of 300 prompts lost", lost)
	}
}

// A line over the limit (a hand-edited file, a prompt pasted whole) is
// skipped and the prompts after it are still read, so a trim does not
// drop them. The control: the prompt before it is read too.
func TestHistorySkipsALongLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "history.jsonl")
	long := `"` + strings.Repeat("x", historyLineLimit+10) + `"`
	if err := os.WriteFile(path, []byte("\"before\"\n"+long+"\n\"after\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, err := readHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0] != "before" || entries[1] != "after" {
		t.Errorf("read %d entries: %.40q", len(entries), entries)
	}
}
