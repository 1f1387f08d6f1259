package ui

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestReflowFixFollowsTheDrawnFrame: the rows the fix moves up are those
// of the live area the renderer last drew — its printed lines above left
// out, a line it left as it was counted at its earlier width — not of a
// view it has not drawn yet.
func TestReflowFixFollowsTheDrawnFrame(t *testing.T) {
	t.Parallel()
	el2 := ansi.EraseEntireLine
	line := func(n int) string { return el2 + strings.Repeat("x", n) }
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"first frame", []string{"\r" + line(100) + "\x1b[K\r\n" + line(10) + "\x1b[K\r\n" + line(130) + "\x1b[K\x1b[140D"},
			"\r\x1b[3A\x1b[J\x1b[2B"}, // 100 columns: 2 rows at 60, 10: 1
		{"printed lines above, then a frame", []string{
			"\r" + line(5) + "\x1b[K\x1b[140D",
			"printed one\x1b[K\r\n\x1b[K\r\n" + line(130) + "\r\n" + line(2) + "\x1b[K\x1b[140D"},
			"\r\x1b[3A\x1b[J\x1b[B"}, // 130 columns: 3 rows
		{"a line left as it was", []string{
			"\r" + line(125) + "\x1b[K\r\n" + line(10) + "\x1b[K\r\n" + line(3) + "\x1b[K\x1b[140D",
			"\x1b[2A\n" + line(70) + "\x1b[K\r\n" + line(4) + "\x1b[K\x1b[140D"},
			"\r\x1b[5A\x1b[J\x1b[2B"}, // 125 (kept): 3 rows, 70: 2
		{"suspended", []string{"\r" + line(125) + "\x1b[K\r\n" + line(3) + "\x1b[K\x1b[140D", "\x1b[1A \x1b[K\x1b[J\x1b[140D"},
			"\r\x1b[J"},
	} {
		r, _ := newReflowOut(io.Discard)
		for _, w := range tc.writes {
			_, _ = r.Write([]byte(w))
		}
		r.resized(140, 60)
		if r.fix != tc.want {
			t.Errorf("%s: fix %q, want %q", tc.name, r.fix, tc.want)
		}
	}
	// Wider, or no frame drawn yet: nothing to fix.
	r, _ := newReflowOut(io.Discard)
	r.resized(140, 60)
	_, _ = r.Write([]byte("\r" + line(100) + "\r\n" + line(1) + "\x1b[140D"))
	r.resized(60, 140)
	if r.fix != "" {
		t.Errorf("fix %q with no frame or a wider terminal", r.fix)
	}
}
