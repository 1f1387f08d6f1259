package ui

import (
	"io"
	"os"
	"regexp"
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
	// shown is the width of each line of the live area on the screen, as
	// the renderer's last frame drew it (tracked from what it writes: the
	// view the chat returned last may not be drawn yet).
	shown []int
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
	r.track(p)
	return r.w.Write(p)
}

var (
	frameStart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\x1b\[[0-9]*A`) }) // up to the live area's first line
	frameEnd   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[[0-9]*D$`) }) // back to the start of its last line
)

// track notes the live area a frame write of bubbletea's renderer leaves
// on the screen: after the lines printed above it (each ending in CR LF),
// one segment per line of the frame — a line drawn (the chat's view lines
// all start by clearing their row, clearRows) or a bare LF for a line the
// renderer left as it was. Other writes (cursor, paste mode) change none.
func (r *reflowOut) track(p []byte) {
	if !frameEnd().Match(p) {
		return
	}
	segs := strings.Split(frameStart().ReplaceAllString(string(p), ""), "\n")
	start := len(segs) - 1
	for start > 0 {
		seg := strings.TrimPrefix(segs[start-1], "\r")
		if seg != "" && !strings.HasPrefix(seg, ansi.EraseEntireLine) {
			break // a printed line
		}
		start--
	}
	widths := make([]int, 0, len(segs)-start)
	for i, seg := range segs[start:] {
		seg = strings.TrimPrefix(seg, "\r")
		w := ansi.StringWidth(seg)
		if !strings.HasPrefix(seg, ansi.EraseEntireLine) && w == 0 && i < len(r.shown) {
			w = r.shown[i] // left as it was
		}
		widths = append(widths, w)
	}
	r.shown = widths
}

// resized is told that the terminal went from oldW to newW columns, the
// cursor at the start of the live area's last line.
func (r *reflowOut) resized(oldW, newW int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if newW <= 0 || oldW <= 0 || newW >= oldW || len(r.shown) == 0 {
		return // lines drawn narrower than the terminal do not reflow
	}
	up := 0
	for _, w := range r.shown[:len(r.shown)-1] {
		w = min(w, oldW) // the renderer cut it there
		up += max(1, (w+newW-1)/newW)
	}
	// Up to the old live area's first row, clear it and all below, and
	// back down to where the renderer thinks its last line starts.
	fix := "\r"
	if up > 0 {
		fix += ansi.CursorUp(up)
	}
	fix += ansi.EraseScreenBelow
	if n := len(r.shown) - 1; n > 0 {
		fix += ansi.CursorDown(n)
	}
	r.fix = fix
}

// clearRows makes each line of s clear its row before it is drawn. A
// terminal that reflows counts as text every cell written since the row
// was last cleared from its start, also the old text that "erase to the
// end of the line" blanked: a short line drawn over a long one took rows
// that nothing could count after a narrowing.
func clearRows(s string) string {
	return ansi.EraseEntireLine + strings.ReplaceAll(s, "\n", "\n"+ansi.EraseEntireLine)
}
