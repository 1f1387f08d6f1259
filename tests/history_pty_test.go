package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTwoChatsKeepEveryPrompt: two hush chats in one data dir, side by
// side in their own terminals, each type 150 prompts (waiting for each
// answer) into a history file that starts past its trimming size, so the
// rewrite that trims it runs while the other chat appends. All 300
// prompts are in the file at the end (chat B erased 101 of chat A's 150
// when each chat rewrote the file from its own memory). Controls: the
// file was trimmed (the old entries before the prompts are gone), and the
// two chats really typed at the same time.
func TestTwoChatsKeepEveryPrompt(t *testing.T) {
	t.Parallel()
	const perChat, limit = 150, 1000 // ui.HistoryLimit
	w := newWorld(t)
	model := newRoutedModel(t, func(prompt string, k int) (step, bool) {
		return step{text: "ok " + strings.TrimPrefix(prompt, "typed ") + "."}, true
	})
	chatConfig(w, model)
	path := filepath.Join(w.dataDir, "history.jsonl")
	var old strings.Builder
	pad := strings.Repeat("p", 250)
	for i := range limit + 90 {
		fmt.Fprintf(&old, "\"old %d %s\"\n", i, pad)
	}
	if err := os.WriteFile(path, []byte(old.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	spans := map[string][2]time.Time{}
	t.Run("chats", func(t *testing.T) {
		for _, who := range []string{"A", "B"} {
			t.Run(who, func(t *testing.T) {
				t.Parallel()
				tm := startPTY(t, w, "chat")
				tm.expect("› ", 20*time.Second)
				start := time.Now()
				for i := range perChat {
					tm.send(fmt.Sprintf("typed %s-%d\r", who, i))
					tm.expect(fmt.Sprintf("ok %s-%d.", who, i), 30*time.Second)
				}
				end := time.Now()
				tm.quit()
				mu.Lock()
				spans[who] = [2]time.Time{start, end}
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	have := map[string]bool{}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e string
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("history line %d is not a JSON string: %q", n+1, sc.Text())
		}
		have[e] = true
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, who := range []string{"A", "B"} {
		for i := range perChat {
			if have[fmt.Sprintf("typed %s-%d", who, i)] {
				kept++
			}
		}
	}
	if kept != 2*perChat {
		t.Errorf("the history keeps %d of the %d prompts typed", kept, 2*perChat)
	}
	if have["old 0 "+pad] || n > limit+limit/10 {
		t.Errorf("the history was never trimmed (%d entries, the oldest still there: %v)", n, have["old 0 "+pad])
	}
	a, b := spans["A"], spans["B"]
	if !a[0].Before(b[1]) || !b[0].Before(a[1]) {
		t.Errorf("the chats did not type at the same time: A %v–%v, B %v–%v", a[0], a[1], b[0], b[1])
	}
	t.Logf("%d entries in the history; A typed for %s, B for %s", n, a[1].Sub(a[0]), b[1].Sub(b[0]))
}
