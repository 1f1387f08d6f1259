package wizard

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// BackgroundTimeout is how long ResolveBackground waits for the terminal.
// A local terminal answers in well under a millisecond, ssh in a round trip;
// one that never answers costs this once, not termenv's 5 s per query.
const BackgroundTimeout = 150 * time.Millisecond

var resolveOnce sync.Once

// ResolveBackground asks the terminal on in/out once for its background
// colour (OSC 11, with a cursor-position report after it, which every
// terminal answers, so a terminal without OSC 11 ends the wait at once),
// waits at most timeout, and tells lipgloss whether it is dark, so the
// forms' colours suit it. Only commands that draw forms call it: hush asks
// the terminal nothing at start-up (tools.RestoreTerm). Without an answer
// the forms keep the dark-background colours.
func ResolveBackground(in, out *os.File, termName string, timeout time.Duration) {
	resolveOnce.Do(func() {
		if dark, ok := queryBackground(in, out, termName, timeout); ok {
			lipgloss.SetHasDarkBackground(dark)
		}
	})
}

func queryBackground(in, out *os.File, termName string, timeout time.Duration) (dark, ok bool) {
	fd := int(in.Fd())
	if !term.IsTerminal(fd) || !term.IsTerminal(int(out.Fd())) {
		return false, false
	}
	// screen and tmux may sit between several terminals; dumb ones do not
	// speak escapes (termenv's rule).
	if termName == "" || termName == "dumb" || strings.HasPrefix(termName, "screen") || strings.HasPrefix(termName, "tmux") {
		return false, false
	}
	old, err := term.MakeRaw(fd)
	if err != nil {
		return false, false
	}
	defer term.Restore(fd, old)
	if _, err := out.WriteString("\x1b]11;?\x07\x1b[6n"); err != nil {
		return false, false
	}
	var got []byte
	buf := make([]byte, 256)
	deadline := time.Now().Add(timeout)
	for !cursorReport(got) {
		left := time.Until(deadline)
		if left <= 0 {
			// A late answer would land in the next prompt's input.
			_ = unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
			return false, false
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			continue
		}
		r, err := unix.Read(fd, buf)
		if err != nil || r <= 0 {
			return false, false
		}
		got = append(got, buf[:r]...)
		if len(got) > 4096 {
			return false, false
		}
	}
	return parseBackground(got)
}

// cursorReport reports whether b holds the answer to ESC[6n: ESC [ row ; col R.
func cursorReport(b []byte) bool {
	for i := bytes.Index(b, []byte("\x1b[")); i >= 0; {
		j := i + 2
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == ';') {
			j++
		}
		if j < len(b) && b[j] == 'R' && j > i+2 {
			return true
		}
		next := bytes.Index(b[i+2:], []byte("\x1b["))
		if next < 0 {
			return false
		}
		i += 2 + next
	}
	return false
}

// parseBackground reads an OSC 11 answer, ESC ] 11 ; rgb:RRRR/GGGG/BBBB
// ended by BEL or ESC \, and reports whether the colour is dark.
func parseBackground(b []byte) (dark, ok bool) {
	i := bytes.Index(b, []byte("\x1b]11;"))
	if i < 0 {
		return false, false
	}
	s := string(b[i+5:])
	if end := strings.IndexAny(s, "\x07\x1b"); end >= 0 {
		s = s[:end]
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "rgba:"), "rgb:")
	parts := strings.Split(s, "/")
	if len(parts) < 3 {
		return false, false
	}
	var c [3]float64
	for k := 0; k < 3; k++ {
		p := parts[k]
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil || len(p) == 0 || len(p) > 4 {
			return false, false
		}
		c[k] = float64(v) / float64(uint64(1)<<(4*len(p))-1)
	}
	// Relative luminance (Rec. 709), close enough to lipgloss's HSL
	// lightness for telling a dark background from a light one.
	l := 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
	return l < 0.5, true
}
