package tests

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// tmuxTerm is hush running in a tmux pane: a real terminal emulator, with
// scrollback, whose screen can be resized and read back as a person sees
// it (capture-pane), which a raw byte stream cannot show.
type tmuxTerm struct {
	t      *testing.T
	socket string
}

// startTmux starts hush args in a new tmux server of its own, on a window
// of cols × rows, in w's project with w's environment.
func startTmux(t *testing.T, w *world, cols, rows int, args ...string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("needs tmux: a terminal emulator to read the screen back")
	}
	tm := &tmuxTerm{t: t, socket: fmt.Sprintf("hush-test-%d", time.Now().UnixNano())}
	// The pane's command is env -i with w's environment: tmux would
	// otherwise give it the test's own.
	command := []string{"env", "-i"}
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, "TERM=") {
			command = append(command, kv)
		}
	}
	command = append(append(command, "TERM=tmux-256color", hushBin), args...)
	cmdArgs := append([]string{"-L", tm.socket, "-f", "/dev/null", "new-session", "-d", "-s", "hush",
		"-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", w.project}, command...)
	if out, err := exec.Command("tmux", cmdArgs...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run() })
	tm.run("set-option", "-g", "history-limit", "20000")
	tm.run("set-option", "-g", "remain-on-exit", "on")
	return tm
}

func (tm *tmuxTerm) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Screen is the pane as shown, and with history the scrollback above it,
// each wrapped line joined again (-J).
func (tm *tmuxTerm) Screen(history bool) string {
	tm.t.Helper()
	args := []string{"capture-pane", "-p", "-J", "-t", "hush"}
	if history {
		args = append(args, "-S", "-")
	}
	return tm.run(args...)
}

func (tm *tmuxTerm) expect(s string, timeout time.Duration) {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(tm.Screen(true), s) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tm.t.Fatalf("timed out waiting for %q; screen:\n%s", s, tm.Screen(true))
}

// send types keys literally (-l); "\r" is Enter.
func (tm *tmuxTerm) send(keys string) {
	tm.t.Helper()
	tm.run("send-keys", "-t", "hush", "-l", keys)
}
