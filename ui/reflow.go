package ui

import (
	"io"
	"os"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// A terminal narrowed while the chat is drawn reflows what it shows (tmux,
// VTE, kitty, iTerm2, Windows Terminal…): each row of the live area (the
// unfinished block, the spinner, the editor, the status line) wider than
// the new width becomes two or more rows. bubbletea's renderer knows none
// of that: it moves up as many rows as it drew lines and paints from
// there, so the top of the old live area stayed on the screen above the
// new one — half a block that was then printed again in full, a spinner
// line, an old status line. reflowOut puts the cursor at the true top of
// the old live area before the renderer's next write, and clears from
// there down.
//
// A terminal that does not reflow (xterm) keeps one row per line; there
// the clearing starts above the live area and blanks as many rows of the
// conversation above it as the narrowing would have added.
type reflowOut struct {
	w   io.Writer
	mu  sync.Mutex
	fix string // written before the next write, then forgotten
}

// reflowFile is reflowOut on the terminal's file: bubbletea reads the size
// and listens for resizes only on an output that is a terminal.
type reflowFile struct {
	*os.File
	r *reflowOut
}

func (f reflowFile) Write(p []byte) (int, error) { return f.r.Write(p) }

// newReflowOut wraps w; out is what to give the program.
func newReflowOut(w io.Writer) (r *reflowOut, out io.Writer) {
	r = &reflowOut{w: w}
	if f, ok := w.(*os.File); ok {
		return r, reflowFile{File: f, r: r}
	}
	return r, r
}

func (r *reflowOut) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fix != "" {
		if _, err := io.WriteString(r.w, r.fix); err != nil {
			return 0, err
		}
		r.fix = ""
	}
	return r.w.Write(p)
}

// resized is told that the terminal went from oldW to newW columns while
// frame (the view last drawn, oldH rows at most; 0 when unknown) was on
// the screen, the cursor at the start of its last line.
func (r *reflowOut) resized(frame string, oldW, oldH, newW int) {
	if newW <= 0 || oldW <= 0 || newW >= oldW || frame == "" {
		return // lines drawn narrower than the terminal do not reflow
	}
	lines := strings.Split(frame, "\n")
	if oldH > 0 && len(lines) > oldH {
		lines = lines[len(lines)-oldH:] // the renderer drops the top lines
	}
	up := 0
	for _, l := range lines[:len(lines)-1] {
		w := min(ansi.StringWidth(l), oldW) // the renderer cut it there
		up += max(1, (w+newW-1)/newW)
	}
	// Up to the old live area's first row, clear it and all below, and
	// back down to where the renderer thinks its last line starts.
	fix := "\r"
	if up > 0 {
		fix += ansi.CursorUp(up)
	}
	fix += ansi.EraseScreenBelow
	if n := len(lines) - 1; n > 0 {
		fix += ansi.CursorDown(n)
	}
	r.mu.Lock()
	r.fix = fix
	r.mu.Unlock()
}

// clearRows makes each line of s clear its row before it is drawn. A
// terminal that reflows counts as text every cell written since the row
// was last cleared from its start, also the old text that "erase to the
// end of the line" blanked: a short line drawn over a long one took rows
// that nothing could count after a narrowing.
func clearRows(s string) string {
	return ansi.EraseEntireLine + strings.ReplaceAll(s, "\n", "\n"+ansi.EraseEntireLine)
}
