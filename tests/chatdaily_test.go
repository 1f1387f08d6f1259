package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The chat as a daily driver: a stream that cannot hang, usage with
// telemetry on, a conversation redrawn on --continue, tool lines for
// people, @path completion and /model's picker.

// TestChatStalledStreamIsRetriedOnce: a server that sends two chunks and
// goes quiet is given up on after model.idle_timeout; before any tool ran
// the request is sent once more, saying so (the fake server counts two
// requests), and the second answer is shown.
func TestChatStalledStreamIsRetriedOnce(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		var stalled atomic.Bool
		model := newRoutedModel(t, func(prompt string, answers int) (step, bool) {
			if stalled.CompareAndSwap(false, true) {
				return step{text: "partial answer that never ends", stall: true}, true
			}
			return step{text: "the recovered answer"}, true
		})
		w.fakeModelConfig(model, "idle_timeout = \"2s\"\n")
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("go\r")
		tm.expect("openai: retrying (2/3) after the stream stalled for 2s; the answer starts over", 30*time.Second)
		tm.expect("the recovered answer", 30*time.Second)
		tm.quit()
		if n := model.Requests(); n != 2 {
			t.Errorf("the fake server saw %d requests, want 2 (one retry)", n)
		}
	})
}

// TestChatStalledStreamAfterAToolEndsTheTurn: once a tool ran in the turn
// a stall is not retried: the turn ends with one sentence naming the
// server and the seconds, and the prompt is back.
func TestChatStalledStreamAfterAToolEndsTheTurn(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		model := newRoutedModel(t, func(prompt string, answers int) (step, bool) {
			switch {
			case prompt == "go" && answers == 0:
				return step{calls: []fakeCall{{"read", map[string]any{"path": "README"}}}}, true
			case prompt == "go":
				return step{text: "half of an answer", stall: true}, true
			}
			return step{text: "back again"}, true
		})
		w.fakeModelConfig(model, "idle_timeout = \"2s\"\n")
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("go\r")
		host := strings.TrimPrefix(model.srv.URL, "http://")
		tm.expect("the model server at "+host+" stopped sending for 2s in the middle of its answer", 30*time.Second)
		tm.send("still here\r") // the prompt is back: the next turn runs
		tm.expect("back again", 30*time.Second)
		tm.quit()
		if n := model.Requests(); n != 3 {
			t.Errorf("the fake server saw %d requests, want 3 (the read, the stall not retried, the next turn)", n)
		}
		if strings.Contains(tm.Screen(), "retrying") {
			t.Errorf("a stall after a tool ran was retried:\n%s", tm.Screen())
		}
	})
}

// TestChatShowsUsageWithTelemetry: with [telemetry] set, the status line
// still counts the turn's and the session's tokens, whole also at 60
// columns.
func TestChatShowsUsageWithTelemetry(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		rcv := newOTLPReceiver(t)
		model := newFakeModel(t, step{text: "counted"})
		w.fakeModelConfig(model, fmt.Sprintf("[telemetry]\nendpoint = %q\n", rcv.srv.URL))
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("count me\r")
		tm.expect("counted", 20*time.Second)
		// At 60 columns the directory and the cached count give way; the
		// counts are whole.
		want := fmt.Sprintf("turn %d in / %d out · session %d tokens", fakePromptTokens, fakeCompletionTokens, fakePromptTokens+fakeCompletionTokens)
		if cols >= 140 {
			want = fmt.Sprintf("turn %d in / %d out (%d cached) · session %d tokens", fakePromptTokens, fakeCompletionTokens, fakeCachedTokens,
				fakePromptTokens+fakeCompletionTokens)
		}
		tm.expect(want, 10*time.Second)
		tm.quit()
	})
}

// TestChatContinueRedrawsTheConversation: `hush chat --continue` shows the
// earlier turn — the prompt, the model's text rendered, one line for its
// tool call — above the prompt.
func TestChatContinueRedrawsTheConversation(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		model := newRoutedModel(t, func(prompt string, answers int) (step, bool) {
			if prompt == "look at the readme" && answers == 0 {
				return step{calls: []fakeCall{{"read", map[string]any{"path": "README"}}}}, true
			}
			if prompt == "look at the readme" {
				return step{text: "The readme says **a project**."}, true
			}
			return step{text: "second session answer"}, true
		})
		chatConfig(w, model)
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("look at the readme\r")
		tm.expect("The readme says a project.", 20*time.Second)
		tm.quit()

		tm2 := startPTYSize(t, w, 40, cols, "chat", "--continue")
		tm2.expect("(1 earlier turn(s) shown; the model remembers them)", 20*time.Second)
		sc := tm2.Screen()
		iPrompt, iTool, iText := strings.Index(sc, "› look at the readme"), strings.Index(sc, "● Read README (1–1)"), strings.Index(sc, "The readme says a project.")
		if iPrompt < 0 || iTool < iPrompt || iText < iTool {
			t.Errorf("the redrawn turn is not prompt, tool line, text in order (%d, %d, %d):\n%s", iPrompt, iTool, iText, sc)
		}
		if strings.Contains(sc, "**a project**") {
			t.Errorf("the model's Markdown was redrawn raw:\n%s", sc)
		}
		tm2.quit()
	})
}

// TestChatToolLinesAreForPeople: an edit is shown as `Edit path +1 −1`
// and a grep with its match count, not as their JSON arguments.
func TestChatToolLinesAreForPeople(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		if err := os.MkdirAll(filepath.Join(w.project, "wordcount"), 0o700); err != nil {
			t.Fatal(err)
		}
		w.write(filepath.Join(w.project, "wordcount", "wc.py"), "def count_words(s):\n    return len(s.split())\n\nprint(count_words('a b'))\n")
		model := newFakeModel(t,
			step{calls: []fakeCall{{"edit", map[string]any{"path": "wordcount/wc.py", "old": "len(s.split())", "new": "len(s.split()) or 0"}}}},
			step{calls: []fakeCall{{"grep", map[string]any{"pattern": "count_words"}}}},
			step{text: "all done"})
		w.fakeModelConfig(model, "[[rules]]\ngate = \"tool.run:edit\"\nsubject = \"edit\"\ndecision = \"allow\"\n")
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("fix it\r")
		tm.expect("all done", 20*time.Second)
		tm.expect("● Edit wordcount/wc.py +1 −1", 5*time.Second)
		tm.expect(`● Grep "count_words" · 2 matches`, 5*time.Second)
		tm.quit()
		if sc := tm.Screen(); strings.Contains(sc, `{"path"`) || strings.Contains(sc, `"old":`) {
			t.Errorf("a tool call was shown as JSON:\n%s", sc)
		}
	})
}

// TestChatAtCompletesAProjectPath: @wc and Tab complete to the project's
// wordcount/wc.py, whose text reaches the model with the prompt; an
// @.env is refused and its value never reaches the server (read on the
// raw request bodies).
func TestChatAtCompletesAProjectPath(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		if err := os.MkdirAll(filepath.Join(w.project, "wordcount"), 0o700); err != nil {
			t.Fatal(err)
		}
		w.write(filepath.Join(w.project, "wordcount", "wc.py"), "def count_words(s):\n    return len(s.split())\n")
		// .gitignore'd files are not offered.
		w.write(filepath.Join(w.project, ".gitignore"), "build/\n")
		if err := os.MkdirAll(filepath.Join(w.project, "build"), 0o700); err != nil {
			t.Fatal(err)
		}
		w.write(filepath.Join(w.project, "build", "wcx.py"), "generated\n")
		model := newFakeModel(t, step{text: "read it"}, step{text: "no env for me"})
		chatConfig(w, model)
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("explain @wc")
		tm.send("\t")
		tm.expect("› explain @wordcount/wc.py", 20*time.Second)
		tm.send("\r")
		tm.expect("attached @wordcount/wc.py (2 lines)", 20*time.Second)
		tm.expect("read it", 20*time.Second)
		tm.send("and @.env please\r")
		tm.expect("@.env not attached", 20*time.Second)
		tm.expect("no env for me", 20*time.Second)
		tm.quit()
		got := model.Received()
		if !strings.Contains(got, `\u003cfile path=\"wordcount/wc.py\"\u003e\ndef count_words(s):`) &&
			!strings.Contains(got, `<file path=\"wordcount/wc.py\">\ndef count_words(s):`) {
			t.Errorf("the attached file did not reach the model:\n%s", got)
		}
		if strings.Contains(got, w.canaries["dotenv"]) {
			t.Errorf("the .env reached the model")
		}
		if strings.Contains(tm.Screen(), "build/wcx.py") {
			t.Errorf("a .gitignore'd file was offered:\n%s", tm.Screen())
		}
	})
}

// TestChatModelPickerListsTheServersModels: /model without a name lists
// the server's models (GET /v1/models); the one picked is what the next
// request asks for.
func TestChatModelPickerListsTheServersModels(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		model := newFakeModel(t, step{text: "answered by the small one"})
		model.models = []string{"fake-large", "fake-small"}
		chatConfig(w, model)
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("/model\r")
		tm.expect("Use which model?", 20*time.Second)
		tm.expect("fake-large", 5*time.Second)
		tm.expect("fake-small", 5*time.Second)
		tm.send("small")
		tm.send("\r")
		tm.expect("model: fake-small (from the next turn)", 20*time.Second)
		tm.send("hello\r")
		tm.expect("answered by the small one", 20*time.Second)
		tm.quit()
		if got := model.Received(); !strings.Contains(got, `"model":"fake-small"`) {
			t.Errorf("the next request did not ask for fake-small:\n%s", got)
		}
	})
}

// TestChatCtrlGOpensTheEditor: Ctrl-G runs $EDITOR on the prompt's text in
// the foreground; what it saved is the prompt. Its environment is the core
// allowlist: no planted canary is in it (its raw env dump is read), while
// HOME is (the positive control).
func TestChatCtrlGOpensTheEditor(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		dump := filepath.Join(w.home, "editor-env")
		script := filepath.Join(w.home, "editor.sh")
		w.write(script, fmt.Sprintf("#!/bin/sh\nenv > %q\nprintf 'from the editor' > \"$1\"\n", dump))
		if err := os.Chmod(script, 0o700); err != nil {
			t.Fatal(err)
		}
		w.env = append(w.env, "EDITOR="+script)
		model := newFakeModel(t, step{text: "edited prompt received"})
		chatConfig(w, model)
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("draft")
		tm.send("\x07") // Ctrl-G
		tm.expect("› from the editor", 20*time.Second)
		tm.send("\r")
		tm.expect("edited prompt received", 20*time.Second)
		tm.quit()
		env := readFile(t, dump)
		w.assertNoCanary("the editor's environment", env)
		if !strings.Contains(env, "HOME="+w.home) {
			t.Errorf("the editor's environment lacks HOME:\n%s", env)
		}
		if p := model.userPrompts(); len(p) != 1 || p[0][0] != "from the editor" {
			t.Errorf("the model was sent %q", p)
		}
	})
}

// atSizes runs f on a terminal of 60 and of 140 columns, in parallel.
func atSizes(t *testing.T, f func(t *testing.T, cols uint16)) {
	for _, cols := range sizes {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			f(t, cols)
		})
	}
}
