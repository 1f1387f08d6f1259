package ui

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/sys/unix"
)

// gatedModel holds the chat's model at the Shift-Enter message (either
// form it may take) until release is closed, and says when it has taken
// a key whose runes contain last.
type gatedModel struct {
	*model
	reached, release, sawLast chan struct{}
	last                      string
	held                      bool
}

func (g *gatedModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k, isKey := msg.(tea.KeyMsg)
	s, isStringer := msg.(fmt.Stringer)
	if !g.held && ((isKey && k.Type == tea.KeyCtrlJ) || (!isKey && isStringer && strings.HasPrefix(s.String(), "?CSI"))) {
		g.held = true
		close(g.reached)
		<-g.release
	}
	_, cmd := g.model.Update(msg)
	if isKey && strings.Contains(string(k.Runes), g.last) {
		close(g.sawLast)
	}
	return g, cmd
}

// TestShiftEnterSurvivesTheNextRead: a Shift-Enter the chat has not
// handled yet when the next keys are read still adds its line. bubbletea
// passes an unknown sequence on as a slice of its read buffer, which the
// next read overwrote: "one", Shift-Enter, "three…" typed fast was sent as
// "onethree…" (TestChatShiftEnterAddsALine failed so under load). Here the
// model is held at the Shift-Enter until the next read has happened.
func TestShiftEnterSurvivesTheNextRead(t *testing.T) {
	t.Parallel()
	for _, seq := range []string{"\x1b[13;2u", "\x1b[27;2;13~"} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		c := New(Config{In: r, Out: io.Discard})
		const next = "three-and-then-some-more"
		g := &gatedModel{model: newModel(c), reached: make(chan struct{}), release: make(chan struct{}), sawLast: make(chan struct{}), last: "more"}
		p := c.program(g)
		final := make(chan tea.Model, 1)
		go func() { m, _ := p.Run(); final <- m }()
		if _, err := w.Write([]byte("one" + seq)); err != nil {
			t.Fatal(err)
		}
		<-g.reached
		if _, err := w.Write([]byte(next)); err != nil {
			t.Fatal(err)
		}
		// The program's reader has read it once the pipe is empty
		// (TIOCINQ: the bytes a read would get).
		for {
			n, err := unix.IoctlGetInt(int(r.Fd()), unix.TIOCINQ)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		close(g.release)
		<-g.sawLast
		p.Quit()
		m := (<-final).(*gatedModel)
		if got := m.ta.Value(); got != "one\n"+next {
			t.Errorf("%q: the editor holds %q, want %q", seq, got, "one\n"+next)
		}
		w.Close()
		r.Close()
	}
}

func TestShiftEnterToCtrlJ(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"one\x1b[13;2utwo\x1b[27;2;13~three": "one\ntwo\nthree",
		"\x1b[13;2u":                         "\n",
		"plain":                              "plain",
		"\x1b[13;5u\x1b[27;2;1":              "\x1b[13;5u\x1b[27;2;1", // Ctrl-Enter, a split sequence: left alone
		"\x1b\x1b[27;2;13~\x1b":              "\x1b\n\x1b",
	} {
		b := []byte(in)
		if got := string(b[:shiftEnterToCtrlJ(b)]); got != want {
			t.Errorf("shiftEnterToCtrlJ(%q) = %q, want %q", in, got, want)
		}
	}
}
