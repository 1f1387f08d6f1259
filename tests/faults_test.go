package tests

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// runHushWithin runs hush with a deadline; it fails the test if hush is
// still running after d.
func runHushWithin(t *testing.T, w *world, d time.Duration, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, hushBin, args...)
	cmd.Env = w.env
	cmd.Dir = w.project
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("hush %s still ran after %v; output:\n%s", strings.Join(args, " "), d, out)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// TestHostileDotEnvEndsInASentence: a project .env that is a symlink to
// /dev/zero (which grew hush to 11.7 GB) or a named pipe (which hung it)
// is refused at once, in one sentence; a regular .env still loads.
func TestHostileDotEnvEndsInASentence(t *testing.T) {
	for _, c := range []struct {
		name, want string
		plant      func(path string) error
	}{
		{"symlink to /dev/zero", "it is a symlink to /dev/zero, which is a character device; hush reads only regular files",
			func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"named pipe", "it is a named pipe (FIFO); hush reads only regular files",
			func(p string) error { return syscall.Mkfifo(p, 0o600) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			dotEnv := filepath.Join(w.project, ".env")
			if err := os.Remove(dotEnv); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(dotEnv); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"vault", "list"}, {"run", "--provider", "replay", "hello"}} {
				out, code := runHushWithin(t, w, time.Second, args...)
				if code == 0 || !strings.Contains(out, "read "+dotEnv+": "+c.want) || strings.Contains(out, "goroutine") {
					t.Errorf("hush %s: exit %d, output:\n%s\nwant one sentence saying %q", strings.Join(args, " "), code, out, c.want)
				}
				if n := strings.Count(strings.TrimSpace(out), "\n"); n > 0 {
					t.Errorf("hush %s printed %d lines, want one sentence:\n%s", strings.Join(args, " "), n+1, out)
				}
			}
		})
	}
	// Positive control: the world's regular .env is read.
	w := newWorld(t)
	out, code := runHushWithin(t, w, 5*time.Second, "vault", "list")
	if code != 0 || !strings.Contains(out, "DOTENV_CANARY") {
		t.Errorf("vault list with a regular .env: exit %d\n%s", code, out)
	}
}

// TestModelErrorBodyCannotDriveTheTerminal: escapes in a model server's
// error body are stripped before hush prints the error (they reached the
// terminal raw through "hush: %s").
func TestModelErrorBodyCannotDriveTheTerminal(t *testing.T) {
	w := newWorld(t)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(rw, `{"error":{"message":"model exploded \u001b]0;pwned\u0007\u001b[2J\u001b]52;c;ZXZpbA==\u0007 now","type":"invalid_request_error"}}`)
	}))
	defer srv.Close()
	out, code := runHushWithin(t, w, 30*time.Second, "run", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "hi")
	if code == 0 {
		t.Fatalf("run against a failing model exited 0:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("the error reached the terminal with its escapes: %q", out)
	}
	if !strings.Contains(out, "model exploded") { // positive control: the message itself is shown
		t.Errorf("the model's error is not shown: %q", out)
	}
}

// TestLeafCommandArgumentNamedH: `hush mcp tools h` looks up server h
// rather than printing help (urfave/cli's help command took the "h").
func TestLeafCommandArgumentNamedH(t *testing.T) {
	w := newWorld(t)
	out, code := runHushWithin(t, w, 30*time.Second, "mcp", "tools", "h")
	if code == 0 || !strings.Contains(out, `no MCP server "h"`) || strings.Contains(out, "USAGE:") {
		t.Errorf("hush mcp tools h: exit %d\n%s", code, out)
	}
	if out, _ := runHushWithin(t, w, 30*time.Second, "mcp", "tools", "--help"); !strings.Contains(out, "USAGE:") {
		t.Errorf("--help no longer shows help:\n%s", out)
	}
}
