package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTwoChatsKeepEveryPrompt: two hush chats in one data dir, side by
// side in their own terminals, each type 150 prompts (waiting for each
// answer) into a history file that starts past its trimming size, so the
// rewrite that trims it runs while the other chat appends. All 300
// prompts are in the file at the end (chat B erased 101 of chat A's 150
// when each chat rewrote the file from its own memory). The control: the
// file was trimmed (the old entries before the prompts are gone).
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

	// One goroutine drives both terminals, a prompt to each in turn, so
	// the two chats' turns (and their history writes) overlap however
	// many tests run beside this one.
	chats := map[string]*term{"A": startPTY(t, w, "chat"), "B": startPTY(t, w, "chat")}
	for _, tm := range chats {
		tm.expect("› ", 20*time.Second)
	}
	start := time.Now()
	for i := range perChat {
		for _, who := range []string{"A", "B"} {
			chats[who].send(fmt.Sprintf("typed %s-%d\r", who, i))
		}
		for _, who := range []string{"A", "B"} {
			chats[who].expect(fmt.Sprintf("ok %s-%d.", who, i), 30*time.Second)
		}
	}
	took := time.Since(start)
	for _, tm := range chats {
		tm.quit()
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
	t.Logf("%d entries in the history; the chats typed for %s", n, took)
}
