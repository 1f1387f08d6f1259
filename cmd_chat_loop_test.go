package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/session/sessiontest"
)

func TestChatLoopPlainRunsTurnsAndCloses(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	closed, started := 0, 0
	gotPrompter := executor.Prompter(nil)
	c := chatLoop{
		Stdin: strings.NewReader("hello\n"), Stdout: &out, Stderr: &out,
		Ambient: map[string]string{}, Redact: func(s string) string { return s },
		Start: func(p executor.Prompter, ev executor.Events) (*executor.Agent, func(), error) {
			started++
			gotPrompter = p
			a := sessiontest.OneTurnAgent(t, `{"steps":[{"text":"hi from the model"}]}`)
			a.Session = "s-test"
			a.Events = ev
			return a, func() { closed++ }, nil
		},
		Instructions:      func() string { return "Loaded AGENTS.md." },
		ResolveBackground: func() { t.Error("no terminal: no background query") },
		Find:              func(string, bool) (*transcript.Session, error) { return nil, os.ErrNotExist },
	}
	if err := c.Plain(false, func(os.Signal) { t.Error("exit without a signal") }); err != nil {
		t.Fatal(err)
	}
	if started != 1 || closed != 1 || gotPrompter != nil {
		t.Errorf("started %d, closed %d, prompter %v: want one session, closed, no prompter", started, closed, gotPrompter)
	}
	for _, want := range []string{"hush chat — ", "Loaded AGENTS.md.", "(input is not a terminal: requests that would be asked are denied)",
		"Session s-test (/resume picks another", "hi from the model"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestChatLoopPlainStartErrorIsReturned(t *testing.T) {
	t.Parallel()
	want := os.ErrPermission
	c := chatLoop{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Ambient: map[string]string{},
		Start: func(executor.Prompter, executor.Events) (*executor.Agent, func(), error) { return nil, nil, want }}
	if err := c.Plain(false, nil); err != want {
		t.Errorf("err %v, want %v", err, want)
	}
}

// syncBuffer is a bytes.Buffer the PTY reader fills while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q:\n%q", want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestChatLoopTerminalRunsATurnOnARealPTY(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	go io.Copy(out, ptmx) //nolint:errcheck // ends when the pty closes
	closed := 0
	c := chatLoop{
		Stdin: tty, Stdout: tty, Stderr: io.Discard,
		Ambient: map[string]string{"NO_COLOR": "1", "HOME": t.TempDir()},
		Dirs:    config.Dirs{Data: t.TempDir(), Config: t.TempDir()}, Dir: t.TempDir(),
		Model:  session.Model{Name: "replay-model"},
		Redact: func(s string) string { return s },
		Start: func(p executor.Prompter, ev executor.Events) (*executor.Agent, func(), error) {
			if p == nil {
				t.Error("the terminal chat asks on the terminal: want a prompter")
			}
			a := sessiontest.OneTurnAgent(t, `{"steps":[{"text":"hi from the model"}]}`)
			a.Session = "s-pty"
			a.Events = ev
			return a, func() { closed++ }, nil
		},
		Instructions:      func() string { return "" },
		ResolveBackground: func() {},
	}
	type result struct {
		sig os.Signal
		err error
	}
	done := make(chan result, 1)
	go func() {
		sig, err := c.Terminal(tty)
		done <- result{sig, err}
	}()
	waitFor(t, out, "Session s-pty")
	if _, err := ptmx.Write([]byte("hello\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, out, "hi from the model")
	if _, err := ptmx.Write([]byte{4}); err != nil { // Ctrl-D at an empty prompt exits
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.sig != nil || r.err != nil {
			t.Errorf("Ctrl-D: signal %v, err %v; want a clean exit", r.sig, r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Ctrl-D did not end the chat:\n%q", out.String())
	}
	if closed != 1 {
		t.Errorf("the session was closed %d times, want 1", closed)
	}
}
