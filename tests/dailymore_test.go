package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// More of issue 24's daily driver, each at 60 and 140 columns: the
// spinner's clock, a cut preview and Ctrl-O, read and glob lines, and the
// resume picker's filter.

// TestChatSpinnerCountsSecondsThenSaysWriting: while the model is silent
// the spinner says how long it has thought and how to stop; once text
// streams it no longer says "thinking".
func TestChatSpinnerCountsSecondsThenSaysWriting(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		var words []string
		for i := range 60 {
			words = append(words, fmt.Sprintf("word%02d", i))
		}
		model := newFakeModel(t, step{text: strings.Join(words, " ") + " word-end", think: 1500 * time.Millisecond, delay: 60 * time.Millisecond})
		chatConfig(w, model)
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("think\r")
		tm.expect("thinking… 1s · Ctrl-C stops", 20*time.Second)
		tm.expect("writing… ", 20*time.Second)
		at := strings.Index(tm.Screen(), "writing… ")
		tm.expect("word-end", 20*time.Second)
		if after := tm.Screen()[at:]; strings.Contains(after, "thinking…") {
			t.Errorf("the spinner said thinking again once text streamed:\n%s", after)
		}
		tm.quit()
	})
}

var hiddenLines = regexp.MustCompile(`… \+(\d+) lines \(Ctrl-O shows them\)`)

// TestChatCutPreviewAndCtrlO: a tool's output longer than the preview is
// cut with a line saying how many lines are hidden; Ctrl-O prints exactly
// those lines.
func TestChatCutPreviewAndCtrlO(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		model := newFakeModel(t,
			step{calls: []fakeCall{{"bash", map[string]any{"script": "seq 1001 1040"}}}},
			step{text: "counted to forty"})
		w.fakeModelConfig(model, "[[rules]]\ngate = \"tool.run:bash\"\nsubject = \"bash\"\ndecision = \"allow\"\n")
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("count\r")
		tm.expect("counted to forty", 20*time.Second)
		before := tm.Screen()
		m := hiddenLines.FindStringSubmatch(before)
		if m == nil {
			t.Fatalf("no \"… +N lines\" under the cut preview:\n%s", before)
		}
		var hidden int
		fmt.Sscan(m[1], &hidden)
		shown := 0
		for i := 1001; i <= 1040; i++ {
			if strings.Contains(before, fmt.Sprintf("│ %d", i)) {
				shown++
			}
		}
		if shown+hidden != 40 || hidden == 0 {
			t.Fatalf("%d lines shown and %d said hidden, of 40:\n%s", shown, hidden, before)
		}
		tm.send("\x0f")
		tm.expect(fmt.Sprintf("the last tool output, %d more lines:", hidden), 10*time.Second)
		tm.expect("│ 1040", 10*time.Second)
		after := tm.Screen()[len(before):]
		if n := regexp.MustCompile(`│ 10[0-4][0-9]`).FindAllString(after, -1); len(n) != hidden {
			t.Errorf("Ctrl-O printed %d output lines, want the %d hidden:\n%s", len(n), hidden, after)
		}
		tm.quit()
	})
}

// TestChatReadAndGlobLines: a read is shown as `Read path (first–last)`
// and a glob with its file count, not as their JSON arguments.
func TestChatReadAndGlobLines(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		if err := os.MkdirAll(filepath.Join(w.project, "wordcount"), 0o700); err != nil {
			t.Fatal(err)
		}
		w.write(filepath.Join(w.project, "wordcount", "wc.py"), "def count_words(s):\n    return len(s.split())\n\nprint(count_words('a b'))\n")
		w.write(filepath.Join(w.project, "setup.py"), "print('setup')\n")
		model := newFakeModel(t,
			step{calls: []fakeCall{{"read", map[string]any{"path": "wordcount/wc.py"}}}},
			step{calls: []fakeCall{{"glob", map[string]any{"pattern": "**/*.py"}}}},
			step{text: "looked around"})
		chatConfig(w, model)
		tm := startPTYSize(t, w, 40, cols, "chat")
		tm.expect("› ", 20*time.Second)
		tm.send("look\r")
		tm.expect("looked around", 20*time.Second)
		tm.expect("● Read wordcount/wc.py (1–4)", 5*time.Second)
		tm.expect("● Glob **/*.py · 2 files", 5*time.Second)
		if sc := tm.Screen(); strings.Contains(sc, `{"path"`) || strings.Contains(sc, `{"pattern"`) {
			t.Errorf("a tool line shows raw JSON:\n%s", sc)
		}
		tm.quit()
	})
}

// TestResumePickerFiltersAsYouType: typing at the --resume picker narrows
// the list, and Enter resumes the session the filter left (not the
// latest, which is first).
func TestResumePickerFiltersAsYouType(t *testing.T) {
	t.Parallel()
	atSizes(t, func(t *testing.T, cols uint16) {
		w := newWorld(t)
		model := newFakeModel(t, step{text: "noted"}, step{text: "resumed answer"})
		w.fakeModelConfig(model, "")
		for _, p := range []string{"alpha session prompt", "beta session prompt"} {
			if _, stderr, code := runJSON(t, w, "run", "--json", p); code != 0 {
				t.Fatalf("run: %d %s", code, stderr)
			}
			time.Sleep(1100 * time.Millisecond) // distinct start times
		}
		tm := startPTYSize(t, w, 40, cols, "chat", "--resume")
		tm.expect("Resume which session?", 20*time.Second)
		// At 60 columns a row wraps where its session id's length says:
		// the prompt's first word is on the row whatever the pid.
		tm.expect("beta", 5*time.Second)
		tm.send("alpha")
		time.Sleep(300 * time.Millisecond)
		tm.send("\r")
		tm.expect("(1 earlier turn(s) shown; the model remembers them)", 20*time.Second)
		sc := tm.Screen()
		redraw := sc[strings.LastIndex(sc, "Resume which session?"):]
		if !strings.Contains(redraw, "› alpha session prompt") || strings.Contains(redraw, "› beta session prompt") {
			t.Errorf("the filter did not resume the alpha session:\n%s", redraw)
		}
		tm.quit()
	})
}
