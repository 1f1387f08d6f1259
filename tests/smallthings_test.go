package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestApprovalCommandKeepsItsGutterAt60Columns: a 260-character command
// on a 60- and a 140-column terminal is wrapped by hush to the width, each
// row behind the │ gutter (the continuation rows indented), none starting
// at the left edge, none wider than the screen; the rows put together are
// the whole command.
func TestApprovalCommandKeepsItsGutterAt60Columns(t *testing.T) {
	t.Parallel()
	long := "echo gutter-start"
	for i := 0; len(long) < 240; i++ {
		long += " && echo step-" + strings.Repeat(string(rune('a'+i%26)), 6)
	}
	long += " && echo gutter-end"
	for _, cols := range sizes {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			model := newFakeModel(t, step{calls: []fakeCall{{"bash", map[string]any{"script": long}}}}, step{text: "long done"})
			chatConfig(w, model)
			tm := startPTYSize(t, w, 40, cols, "chat")
			tm.expect("› ", 20*time.Second)
			tm.send("run it\r")
			tm.expect("[n] Deny", 20*time.Second)
			rows := commandRows(t, tm.Screen())
			var joined strings.Builder
			for i, r := range rows {
				if !strings.HasPrefix(r, "  │ ") {
					t.Errorf("row %d of the command is not behind the gutter: %q", i, r)
				}
				if i > 0 && !strings.HasPrefix(r, "  │   ") {
					t.Errorf("continuation row %d is not indented: %q", i, r)
				}
				if n := len([]rune(r)); n > int(cols) {
					t.Errorf("row %d is %d columns wide at %d: %q", i, n, cols, r)
				}
				joined.WriteString(strings.TrimPrefix(strings.TrimPrefix(r, "  │ "), "  "))
			}
			// The first row holds cols-4 characters, each further one cols-6.
			want := 1 + (len(long)-(int(cols)-4)+int(cols)-7)/(int(cols)-6)
			if len(rows) != want || joined.String() != long {
				t.Fatalf("%d rows (want %d), together:\n%q\nwant %q\nscreen:\n%s", len(rows), want, joined.String(), long, tm.Screen())
			}
			tm.send("n")
			tm.expect("long done", 20*time.Second)
			tm.quit()
		})
	}
}

// commandRows is the rows of the last approval's command on screen: from
// the row after "command (…" to the row before the "in <dir>" line.
func commandRows(t *testing.T, screen string) []string {
	t.Helper()
	at := strings.LastIndex(screen, "command (1 line")
	if at < 0 {
		t.Fatalf("no command on screen:\n%s", screen)
	}
	lines := strings.Split(strings.ReplaceAll(screen[at:], "\r", ""), "\n")
	var rows []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "  in ") {
			return rows
		}
		rows = append(rows, l)
	}
	t.Fatalf("no end of the command on screen:\n%s", screen)
	return nil
}

// TestSetupAsksAgainForARejectedKey: a key the server refuses (HTTP 401)
// is asked for again at once, not carried to the model question; the key
// typed next is checked and saved, the refused one is not. Neither is
// ever shown on the screen.
func TestSetupAsksAgainForARejectedKey(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		w.unsetEnv("OPENAI_API_KEY")
		bad, good := canary("badkey"), canary("goodkey")
		var mu sync.Mutex
		var sent []string
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/models" {
				http.NotFound(rw, r)
				return
			}
			mu.Lock()
			sent = append(sent, r.Header.Get("Authorization"))
			mu.Unlock()
			if r.Header.Get("Authorization") != "Bearer "+good {
				http.Error(rw, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
				return
			}
			rw.Header().Set("Content-Type", "application/json")
			fmt.Fprint(rw, `{"object":"list","data":[{"id":"keyed-model","object":"model"}]}`)
		}))
		t.Cleanup(srv.Close)
		tm := startPTYSize(t, w, 40, cols, "setup")
		tm.expect("(1/5) Which kind of model server?", 20*time.Second)
		tm.send("\r")
		tm.expect("(2/5) Where is it?", 10*time.Second)
		tm.send("\x1b[B\x1b[B\x1b[B\r") // Another URL…
		tm.expect("(2/5) Base URL", 10*time.Second)
		tm.send(srv.URL + "/v1\r")
		tm.expect("(3/5) API key", 10*time.Second)
		time.Sleep(200 * time.Millisecond)
		tm.send(bad + "\r")
		tm.expect("rejected the key (HTTP 401)", 10*time.Second)
		tm.expect("Type the key again", 5*time.Second)
		tm.expectAfter("Type the key again", "(3/5) API key", 10*time.Second)
		if strings.Contains(tm.Screen()[strings.LastIndex(tm.Screen(), "Type the key again"):], "(4/5)") {
			t.Fatalf("a rejected key went on to the model question:\n%s", tm.Screen())
		}
		time.Sleep(200 * time.Millisecond)
		tm.send(good + "\r")
		tm.expect("the key works", 10*time.Second)
		tm.expect("(4/5) Model", 10*time.Second)
		tm.send("\r")
		tm.expect("(5/5) Where should hush keep secrets?", 10*time.Second)
		tm.send("\r")
		if code := tm.wait(20 * time.Second); code != 0 {
			t.Fatalf("exit %d\n%s", code, tm.Screen())
		}
		configHas(t, w, "base_url", srv.URL+"/v1", "model", "keyed-model")
		vault, _ := os.ReadFile(filepath.Join(w.dataDir, "vault.env"))
		if !strings.Contains(string(vault), good) || strings.Contains(string(vault), bad) {
			t.Errorf("vault.env after setup holds the refused key or not the accepted one")
		}
		mu.Lock()
		defer mu.Unlock()
		if len(sent) != 2 || sent[0] != "Bearer "+bad || sent[1] != "Bearer "+good {
			t.Errorf("the server was asked %d time(s); want the refused key, then the accepted one", len(sent))
		}
		if sc := tm.Raw(); strings.Contains(sc, bad) || strings.Contains(sc, good) {
			t.Error("a typed key reached the screen")
		}
	})
}

// dataFiles lists every file under the data dir (relative paths).
func dataFiles(t *testing.T, w *world) map[string]bool {
	t.Helper()
	files := map[string]bool{}
	err := filepath.WalkDir(w.dataDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(w.dataDir, p)
			files[rel] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRunNoSaveWritesNoSession: `hush run --no-save` answers as a run does
// but leaves nothing in the data dir's transcripts (no file, no lock), so
// `hush sessions list` shows none; the positive control, the same run
// without the flag, writes one. With --continue the session is read (the
// model gets its earlier turn) and left byte for byte as it was.
func TestRunNoSaveWritesNoSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newRoutedModel(t, func(prompt string, answers int) (step, bool) {
		return step{text: "answer to " + prompt}, answers == 0
	})
	w.fakeModelConfig(model, "")
	transcripts := func() []string {
		var out []string
		for f := range dataFiles(t, w) {
			if strings.HasPrefix(f, "transcripts"+string(filepath.Separator)) {
				out = append(out, f)
			}
		}
		return out
	}
	out, code := runHushWithin(t, w, 30*time.Second, "run", "--no-save", "first-unsaved")
	if code != 0 || !strings.Contains(out, "answer to first-unsaved") {
		t.Fatalf("run --no-save: exit %d\n%s", code, out)
	}
	if got := transcripts(); len(got) != 0 {
		t.Fatalf("run --no-save wrote %v", got)
	}
	if out, _ := runHushWithin(t, w, 20*time.Second, "sessions", "list"); !strings.Contains(out, "No sessions yet") {
		t.Errorf("sessions list after run --no-save:\n%s", out)
	}
	out, code = runHushWithin(t, w, 30*time.Second, "run", "--json", "--no-save", "json-unsaved")
	if code != 0 || strings.Contains(out, `"transcript"`) || len(transcripts()) != 0 {
		t.Fatalf("run --json --no-save: exit %d, transcripts %v\n%s", code, transcripts(), out)
	}

	// The control: without the flag, a session is kept.
	if out, code := runHushWithin(t, w, 30*time.Second, "run", "saved-turn"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	saved := transcripts()
	var jsonl string
	for _, f := range saved {
		if strings.HasSuffix(f, ".jsonl") {
			jsonl = filepath.Join(w.dataDir, f)
		}
	}
	if jsonl == "" {
		t.Fatalf("run without --no-save kept no transcript: %v", saved)
	}
	before := readFile(t, jsonl)
	if !strings.Contains(before, "saved-turn") || strings.Contains(w.transcripts(), "unsaved") {
		t.Fatalf("the transcripts hold the wrong turns:\n%s", w.transcripts())
	}

	// --continue --no-save: the earlier turn reaches the model, nothing is
	// added to the session.
	out, code = runHushWithin(t, w, 30*time.Second, "run", "--continue", "--no-save", "continued-unsaved")
	if code != 0 || !strings.Contains(out, "answer to continued-unsaved") {
		t.Fatalf("run --continue --no-save: exit %d\n%s", code, out)
	}
	if !strings.Contains(model.Received(), "answer to saved-turn") {
		t.Errorf("the continued session's earlier turn did not reach the model")
	}
	if after := readFile(t, jsonl); after != before {
		t.Errorf("run --continue --no-save changed the session:\n%s", after)
	}
	if got := transcripts(); len(got) != len(saved) {
		t.Errorf("files under transcripts/ went from %v to %v", saved, got)
	}
	if out, code := runHushWithin(t, w, 20*time.Second, "run", "--no-save", "--continue", "--fork", "x"); code != 2 || !strings.Contains(out, "--no-save writes no session") {
		t.Errorf("--no-save --fork: exit %d\n%s", code, out)
	}
}

// TestNoStaleSpinnerLines: after a turn that thought, ran a tool for a
// while and answered, no "thinking…", "running bash…" or "Ctrl-C stops"
// line is left on the terminal (tmux's screen and scrollback).
func TestNoStaleSpinnerLines(t *testing.T) {
	t.Parallel()
	for _, cols := range []int{60, 140} {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			model := newFakeModel(t,
				step{calls: []fakeCall{{"bash", map[string]any{"script": "sleep 1.5; echo tool-finished"}}}},
				step{text: "all done here", delay: 50 * time.Millisecond},
			)
			w.fakeModelConfig(model, "[[rules]]\ngate = \"tool.run:bash\"\nsubject = \"bash\"\ndecision = \"allow\"\n")
			tm := startTmux(t, w, cols, 30, "chat")
			tm.expect("› ", 20*time.Second)
			tm.send("go\r")
			tm.expect("running bash", 20*time.Second)
			tm.expect("all done here", 20*time.Second)
			time.Sleep(500 * time.Millisecond)
			all := tm.Screen(true)
			for _, stale := range []string{"thinking…", "running bash…", "writing…", "· Ctrl-C stops"} {
				if strings.Contains(all, stale) {
					t.Errorf("%q is still on the terminal after the turn:\n%s", stale, all)
				}
			}
			if !strings.Contains(all, "tool-finished") {
				t.Errorf("the tool's output is not on the terminal (the control):\n%s", all)
			}
		})
	}
}
