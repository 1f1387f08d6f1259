// Package echotest is a pseudo-terminal for tests of what a prompt lets
// the terminal echo: it records everything the terminal shows and reads
// the echo setting of the side hush reads from.
package echotest

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Terminal is one pseudo-terminal: PTS is the side hush reads a value
// from, what is typed goes in through the other.
type Terminal struct {
	PTS *os.File

	t     *testing.T
	ptm   *os.File
	mu    sync.Mutex
	shown bytes.Buffer
}

// Open opens a terminal closed at the test's end, with its echo on.
func Open(t *testing.T) *Terminal {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptm.Close(); pts.Close() })
	x := &Terminal{PTS: pts, t: t, ptm: ptm}
	if !x.Echo() {
		t.Fatal("a new terminal has its echo off; the test proves nothing")
	}
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := ptm.Read(buf)
			x.mu.Lock()
			x.shown.Write(buf[:n])
			x.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return x
}

// Echo reports whether the terminal echoes what is typed now.
func (x *Terminal) Echo() bool {
	tio, err := unix.IoctlGetTermios(int(x.PTS.Fd()), unix.TCGETS)
	if err != nil {
		x.t.Fatal(err)
	}
	return tio.Lflag&unix.ECHO != 0
}

// Type types s; it may run on any goroutine.
func (x *Terminal) Type(s string) {
	if _, err := x.ptm.Write([]byte(s)); err != nil {
		x.t.Error(err)
	}
}

// ShownAfter types marker (a line) and returns all the terminal has
// shown once the marker's echo is among it: everything echoed before it
// is then in too. Call it with the echo back on; without the echo of the
// marker within 10 s, what was shown so far is returned.
func (x *Terminal) ShownAfter(marker string) string {
	x.Type(marker + "\r")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		x.mu.Lock()
		s := x.shown.String()
		x.mu.Unlock()
		if strings.Contains(s, marker) || time.Now().After(deadline) {
			return s
		}
	}
}

// WriterFunc is an io.Writer made of a function: a prompt's writer that
// types into the terminal when it sees the prompt.
type WriterFunc func(p []byte) (int, error)

func (f WriterFunc) Write(p []byte) (int, error) { return f(p) }
