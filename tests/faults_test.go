package tests

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// runSilentPTY runs hush in a pseudo-terminal that never answers a query
// (as under `script -c`, some CI PTYs and serial consoles) and returns what
// the terminal received and how long hush took.
func runSilentPTY(t *testing.T, w *world, args ...string) (string, time.Duration) {
	t.Helper()
	cmd := exec.Command(hushBin, args...)
	cmd.Env = w.env
	cmd.Dir = w.project
	start := time.Now()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&out, f); close(done) }()
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case <-errc:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("hush %s did not exit within 30 s under a silent terminal", strings.Join(args, " "))
	}
	took := time.Since(start)
	<-done
	return out.String(), took
}

// TestVersionAsksTheTerminalNothing: commands that draw no form write no
// terminal query (OSC 11, cursor position report) and so never wait for an
// answer; --version returns well under 100 ms (it took 10.06 s when a
// library's init asked twice and waited 5 s each).
func TestVersionAsksTheTerminalNothing(t *testing.T) {
	w := newWorld(t)
	runSilentPTY(t, w, "--version") // the first start of a fresh 80 MB binary reads it from disk
	for _, args := range [][]string{{"--version"}, {"--help"}, {"vault", "list"}, {"env", "--tool", "bash"}, {"audit", "log"}, {"run", "--help"}} {
		raw, took := runSilentPTY(t, w, args...)
		for _, q := range []string{"\x1b]11;?", "\x1b]10;?", "\x1b[6n"} {
			if strings.Contains(raw, q) {
				t.Errorf("hush %s wrote the terminal query %q", strings.Join(args, " "), q)
			}
		}
		if args[0] == "--version" {
			if !strings.Contains(raw, "hush version") {
				t.Errorf("--version printed %q", raw)
			}
			if took > 100*time.Millisecond {
				t.Errorf("hush --version took %v under a terminal that never answers; want < 100 ms", took)
			}
		}
	}
}
