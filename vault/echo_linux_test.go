package vault_test

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/hushcli/hush/vault"
)

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestReadValueHidesTypingBeforeItAsks: at a terminal the echo is off
// when the prompt is written, not only once the read behind it starts, so
// a value typed the moment the prompt shows is not echoed (`hush vault
// set` printed the prompt first: TestVaultSetHiddenPrompt saw its typed
// canary on the terminal under load). Afterwards the echo is back on.
func TestReadValueHidesTypingBeforeItAsks(t *testing.T) {
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
	if !echo() {
		t.Fatal("a new terminal has its echo off; the test proves nothing")
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
	const value = "typed-at-once-0123456789"
	echoAtPrompt := true
	prompt := writerFunc(func(p []byte) (int, error) {
		if strings.Contains(string(p), "typing is not shown") {
			echoAtPrompt = echo()
			// Typed the moment the prompt shows.
			if _, err := ptm.Write([]byte(value + "\r")); err != nil {
				t.Error(err)
			}
		}
		return io.Discard.Write(p)
	})
	got, err := vault.ReadValue(pts, prompt, "TYPED_TOKEN")
	if err != nil || got != value {
		t.Fatalf("ReadValue = %q, %v; want the typed value", got, err)
	}
	if echoAtPrompt {
		t.Error("the echo was still on when the prompt was written")
	}
	if !echo() {
		t.Error("the echo is not back on after the value was read")
	}
	// Typed now, with the echo back on, it is echoed: once it shows, so
	// has everything the terminal echoed before it.
	if _, err := ptm.Write([]byte("end-of-test\r")); err != nil {
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
	if !strings.Contains(shown.String(), "end-of-test") {
		t.Errorf("positive control: what was typed with the echo on was not echoed: %q", shown.String())
	}
	if strings.Contains(shown.String(), value) {
		t.Errorf("the terminal echoed the value: %q", shown.String())
	}
}
