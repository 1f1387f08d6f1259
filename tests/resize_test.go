package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestResizeMidStreamPrintsNothingTwice: a terminal narrowed from 140 to
// 60 columns while a turn streams (tmux reflows what it shows, as most
// terminals do) ends up with every word of the answer exactly once on the
// terminal, screen and scrollback together, and one status line: no row
// of the live area drawn at 140 columns is left behind above the redraw,
// and no block is printed twice.
func TestResizeMidStreamPrintsNothingTwice(t *testing.T) {
	t.Parallel()
	var paras []string
	var words []string
	for p := range 4 {
		var ws []string
		for i := range 50 {
			ws = append(ws, fmt.Sprintf("%c%02dz", 'a'+p, i))
		}
		words = append(words, ws...)
		paras = append(paras, strings.Join(ws, " "))
	}
	text := strings.Join(paras, "\n\n") + " answer-ends"
	w := newWorld(t)
	model := newFakeModel(t, step{text: text, delay: 20 * time.Millisecond})
	chatConfig(w, model)
	tm := startTmux(t, w, 140, 30, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("stream please\r")
	tm.expect("b10z", 20*time.Second) // the second block is on its way
	tm.run("resize-window", "-t", "hush", "-x", "60", "-y", "30")
	tm.expect("answer-ends", 30*time.Second)
	time.Sleep(500 * time.Millisecond)
	all := tm.Screen(true)
	for _, wd := range words {
		if n := strings.Count(all, wd); n != 1 {
			t.Errorf("%s is on the terminal %d times, want once", wd, n)
		}
	}
	if n := strings.Count(all, "fake · "); n != 1 {
		t.Errorf("%d status lines on the terminal, want 1", n)
	}
	if n := strings.Count(all, "stream please"); n != 1 {
		t.Errorf("the prompt is on the terminal %d times, want once", n)
	}
	if t.Failed() {
		t.Logf("terminal:\n%s", all)
	}
}
