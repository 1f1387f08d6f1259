package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// runSilentPTY runs hush in a pseudo-terminal that never answers a query
// (as under `script -c`, some CI PTYs and serial consoles) and returns what
// the terminal received.
func runSilentPTY(t *testing.T, w *world, args ...string) string {
	t.Helper()
	cmd := exec.Command(hushBin, args...)
	cmd.Env = w.env
	cmd.Dir = w.project
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
	<-done
	return out.String()
}

// TestVersionAsksTheTerminalNothing: commands that draw no form write no
// terminal query (OSC 11, cursor position report), so they never wait for
// an answer: --version took 10.06 s when a library's init asked twice and
// waited 5 s each. A wait for an answer needs a query first, and the
// terminal here records every byte hush writes; how fast --version starts
// is scripts/bench's figure, not a test's (a deadline here failed on a
// loaded CI machine).
func TestVersionAsksTheTerminalNothing(t *testing.T) {
	w := newWorld(t)
	for _, args := range [][]string{{"--version"}, {"--help"}, {"vault", "list"}, {"env", "--tool", "bash"}, {"audit", "log"}, {"run", "--help"}} {
		raw := runSilentPTY(t, w, args...)
		for _, q := range []string{"\x1b]11;?", "\x1b]10;?", "\x1b[6n"} {
			if strings.Contains(raw, q) {
				t.Errorf("hush %s wrote the terminal query %q", strings.Join(args, " "), q)
			}
		}
		if args[0] == "--version" {
			if !strings.Contains(raw, "hush version") {
				t.Errorf("--version printed %q", raw)
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

// TestKilledHushLeavesNoProcess: SIGHUP (the terminal closed), SIGTERM and
// SIGKILL of hush in the middle of a turn that runs a bash call, a
// background process and an MCP server, each with grandchildren in a
// session of their own (setsid), leave no process behind (checked in
// /proc) — with the sandbox's PID namespaces, and without them ([unsafe]
// no_sandbox), where hush's reaper takes the trees down. SIGHUP and
// SIGTERM exit 129 and 143 after stopping the tools. Before, SIGHUP or
// SIGKILL left 2 to 4 processes per tool re-parented to pid 1.
func TestKilledHushLeavesNoProcess(t *testing.T) {
	fault := faultServerBin(t)
	for _, sandbox := range []string{"sandbox", "no sandbox"} {
		for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGKILL} {
			t.Run(sandbox+"/"+sig.String(), func(t *testing.T) {
				t.Parallel()
				w := newWorld(t)
				marker := canary("reap")
				tree := func(name string) string { // a child, and a grandchild in its own session
					return fmt.Sprintf("(exec -a %s-%s-child sleep 300) & setsid bash -c 'exec -a %s-%s-orphan sleep 300' & ", marker, name, marker, name)
				}
				model := newFakeModel(t,
					step{calls: []fakeCall{
						{"background", map[string]any{"action": "start", "command": tree("bg") + "exec -a " + marker + "-bg sleep 300"}},
						{"mcp__f__spawn", map[string]any{"marker": marker + "-mcp-grandchild"}},
					}},
					step{calls: []fakeCall{{"bash", map[string]any{"script": tree("bash") + "echo ready; exec -a " + marker + "-bash sleep 300"}}}},
					step{text: "never reached"},
				)
				unsafe := ""
				if sandbox == "no sandbox" {
					unsafe = "\n[unsafe]\nno_sandbox = true\n"
				}
				w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[mcp.f]
command = %q
env = { MARKER = %q }

[[rules]]
gate = "tool.run:*"
subject = "*"
decision = "allow"
%s`, model.URL(), fault, marker+"-mcp-env", unsafe))
				cmd := exec.Command(hushBin, "run", "go")
				cmd.Env, cmd.Dir = w.env, w.project
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					_ = cmd.Process.Kill()
					for _, p := range processesWith(marker) {
						if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
					}
				})
				// Every tool's tree is up: bg (3), bash (3), the MCP server
				// (found by its environment) and its grandchild.
				want := []string{"-bg-child", "-bg-orphan", "-bg ", "-bash-child", "-bash-orphan", "-bash ", "-mcp-grandchild"}
				var procs []string
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					procs = processesWith(marker)
					if hasAll(strings.Join(procs, "\n")+" ", want) && len(procs) >= len(want)+1 {
						break
					}
				}
				if !hasAll(strings.Join(procs, "\n")+" ", want) {
					t.Fatalf("the tools did not all start: %q\n%s", procs, out.String())
				}
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				errc := make(chan error, 1)
				go func() { errc <- cmd.Wait() }()
				var werr error
				select {
				case werr = <-errc:
				case <-time.After(30 * time.Second):
					t.Fatalf("hush did not exit after %v:\n%s", sig, out.String())
				}
				code := -1
				var ee *exec.ExitError
				if errors.As(werr, &ee) {
					code = ee.ExitCode()
				}
				if wantCode := map[syscall.Signal]int{syscall.SIGHUP: 129, syscall.SIGTERM: 143, syscall.SIGKILL: -1}[sig]; code != wantCode {
					t.Errorf("exit code %d after %v, want %d\n%s", code, sig, wantCode, out.String())
				}
				left := processesWith(marker)
				for deadline := time.Now().Add(5 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = processesWith(marker) {
					time.Sleep(20 * time.Millisecond)
				}
				if len(left) > 0 {
					t.Errorf("after %v of hush, left behind:\n%s", sig, strings.Join(left, "\n"))
				}
			})
		}
	}
}

func hasAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// TestChatEndsOnHangupAndTerm: closing the terminal (SIGHUP) or SIGTERM in
// the middle of a chat turn stops the turn's tool like Ctrl-C, then exits
// 129 / 143, leaving no process.
func TestChatEndsOnHangupAndTerm(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			marker := canary("chatsig")
			model := newFakeModel(t,
				step{calls: []fakeCall{{"bash", map[string]any{"script": fmt.Sprintf("setsid bash -c 'exec -a %s-orphan sleep 300' & echo ready; exec -a %s-bash sleep 300", marker, marker)}}}},
				step{text: "never reached"},
			)
			allowBashConfig(w, model)
			w.config(strings.Replace(readFile(t, filepath.Join(w.configDir, "config.toml")), "[[rules]]", "[unsafe]\nno_sandbox = true\n\n[[rules]]", 1))
			tm := startPTY(t, w, "chat")
			tm.expect("› ", 20*time.Second)
			tm.send("go\r")
			tm.expect("ready", 20*time.Second)
			for deadline := time.Now().Add(10 * time.Second); len(processesWith(marker)) < 2 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			if got := processesWith(marker); len(got) < 2 {
				t.Fatalf("the tool's tree did not start: %q", got)
			}
			if err := tm.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			want := map[syscall.Signal]int{syscall.SIGHUP: 129, syscall.SIGTERM: 143}[sig]
			if code := tm.wait(20 * time.Second); code != want {
				t.Errorf("exit code %d after %v, want %d\n%s", code, sig, want, tm.Screen())
			}
			left := processesWith(marker)
			for deadline := time.Now().Add(5 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = processesWith(marker) {
				time.Sleep(20 * time.Millisecond)
			}
			if len(left) > 0 {
				t.Errorf("after %v of hush chat, left behind:\n%s", sig, strings.Join(left, "\n"))
			}
		})
	}
}

// TestTornAuditLogKeepsLaterRecords: `truncate -s -60 audit.jsonl` (a
// write cut short) used to glue the next entry to the fragment, and `hush
// audit log` failed on it from then on. Now the torn line is closed off
// and reported, and every later record is readable.
func TestTornAuditLogKeepsLaterRecords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": "true"}}}},
		step{text: "done"},
	)
	allowBashConfig(w, model)
	if out, code := runHushWithin(t, w, 60*time.Second, "run", "one"); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, out)
	}
	path := filepath.Join(w.dataDir, "audit.jsonl")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()-60); err != nil {
		t.Fatal(err)
	}
	out, code := runHushWithin(t, w, 60*time.Second, "run", "two")
	if code != 0 || !strings.Contains(out, "the last line of "+path+" was torn") {
		t.Errorf("second run: exit %d, want a warning that the last line was torn:\n%s", code, out)
	}
	cmd := exec.Command(hushBin, "audit", "log", "--json")
	cmd.Env, cmd.Dir = w.env, w.project
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hush audit log: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "skipped 1 damaged line") {
		t.Errorf("audit log stderr %q, want it to say one damaged line was skipped", stderr.String())
	}
	// Every record of the second run is there, whole.
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) < 1 || !strings.Contains(lines[len(lines)-1], `"gate":"tool.run:bash"`) {
		t.Errorf("the second run's record is missing:\n%s", stdout.String())
	}
}
