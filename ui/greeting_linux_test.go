package ui

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// modeAtBanner is the chat's terminal output: it records the terminal's
// mode at the moment the banner is written.
type modeAtBanner struct {
	*os.File
	once  sync.Once
	shown chan struct{}
	mode  *unix.Termios
}

func (w *modeAtBanner) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "Ctrl-D exits") {
		w.once.Do(func() {
			w.mode, _ = unix.IoctlGetTermios(int(w.Fd()), unix.TCGETS)
			close(w.shown)
		})
	}
	return w.File.Write(p)
}

// TestBannerShowsOnceTheChatReadsKeys: when the banner is on the screen,
// the terminal is already in the chat's raw mode, so a prompt typed as
// soon as it shows is sent by its Enter. The banner was written before the
// chat's program took the terminal: keys typed then were echoed by the
// terminal, and Enter reached the chat as a line feed (ICRNL), which adds
// a line, so the prompt was never sent (TestChatTurnWithBackgroundAndMCP-
// LeaksNothing timed out so on a loaded machine).
func TestBannerShowsOnceTheChatReadsKeys(t *testing.T) {
	t.Parallel()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, ptmx) }()
	out := &modeAtBanner{File: tty, shown: make(chan struct{})}
	prompts := make(chan string, 1)
	c := New(Config{In: tty, Out: out, Model: "m", Intro: "Loaded AGENTS.md.",
		Turn: func(_ context.Context, p string) error { prompts <- p; return nil }})
	done := make(chan error, 1)
	go func() { done <- c.Run() }()
	select {
	case <-out.shown:
	case <-time.After(20 * time.Second):
		t.Fatal("no banner")
	}
	if m := out.mode; m == nil || m.Lflag&(unix.ICANON|unix.ECHO) != 0 || m.Iflag&unix.ICRNL != 0 {
		t.Errorf("the banner was written with the terminal in line mode (%+v): keys typed then are not the chat's", m)
	}
	// Positive control: the prompt typed at once is sent.
	if _, err := ptmx.Write([]byte("hello\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-prompts:
		if p != "hello" {
			t.Errorf("sent %q, want hello", p)
		}
	case <-time.After(20 * time.Second):
		t.Error("the prompt typed as the banner showed was not sent")
	}
	_, _ = ptmx.Write([]byte("\x04"))
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Ctrl-D did not end the chat")
	}
}
