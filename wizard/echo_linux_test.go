package wizard_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/hushcli/hush/wizard"
)

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestSetupKeyPromptHidesTypingBeforeItAsks: line by line at a terminal,
// the echo is off when the API key's prompt is printed, so a key typed or
// pasted the moment it shows is not echoed (huh prints the prompt, then
// reads with the echo off: TestSetupMovesSecretsInATerminal could see the
// key on the terminal). The other answers are echoed as typed.
func TestSetupKeyPromptHidesTypingBeforeItAsks(t *testing.T) {
	t.Parallel()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptm.Close()
	defer pts.Close()
	echo := func() bool {
		tio, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tio.Lflag&unix.ECHO != 0
	}
	var shown bytes.Buffer
	var mu sync.Mutex
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := ptm.Read(buf)
			mu.Lock()
			shown.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// The provider and the URL are typed ahead; the key when its prompt
	// shows, then the model and the backend.
	if _, err := ptm.Write([]byte("1\n1\n")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	echoAtPrompt, asked := true, false
	s := &wizard.Setup{In: pts, Accessible: true, Terminal: true, Backends: backends,
		Out: writerFunc(func(p []byte) (int, error) {
			out.Write(p)
			if !asked && strings.Contains(out.String(), "(3/5) API key") {
				asked, echoAtPrompt = true, echo()
				if _, err := ptm.Write([]byte(key + "\n\n1\n")); err != nil {
					t.Error(err)
				}
			}
			return len(p), nil
		})}
	got, err := s.Run(context.Background())
	if err != nil || got.Key != key {
		t.Fatalf("Run = %+v, %v; want the typed key\n%s", got, err, out.String())
	}
	if echoAtPrompt {
		t.Error("the echo was still on when the key's prompt was printed")
	}
	if !echo() {
		t.Error("the echo is not back on after setup")
	}
	// Typed now, with the echo back on, it is echoed: once it shows, so
	// has everything the terminal echoed before it.
	if _, err := ptm.Write([]byte("end-of-test\n")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		done := strings.Contains(shown.String(), "end-of-test")
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(shown.String(), key) {
		t.Errorf("the terminal echoed the key: %q", shown.String())
	}
	if !strings.Contains(shown.String(), "1\r\n1\r\n") || !strings.Contains(shown.String(), "end-of-test") {
		t.Errorf("positive control: what was typed with the echo on was not echoed: %q", shown.String())
	}
}
