package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func allowBashConfig(w *world, model *fakeModel) {
	w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[[rules]]
gate = "tool.run:bash"
subject = "bash"
decision = "allow"
`, model.URL()))
}

// TestCtrlCStopsTheToolAndItsChildren: Ctrl-C during a tool call cancels the
// turn, kills the tool's whole process group, and the chat goes on.
func TestCtrlCStopsTheToolAndItsChildren(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// The tool runs in its own PID namespace, so the pids it sees are not
	// the host's: its processes are found by a marker in their command line.
	marker := fmt.Sprintf("ctrlc-marker-%d", time.Now().UnixNano())
	model := newRoutedModel(t, func(prompt string, k int) (step, bool) {
		if prompt == "sleep a while" {
			return step{calls: []fakeCall{{"bash", map[string]any{"script": "(exec -a " + marker + "-a sleep 300) & (exec -a " + marker + "-b sleep 301) & echo sleeping; wait"}}}}, true
		}
		return step{text: "second turn answered"}, true
	})
	allowBashConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("sleep a while\r")
	tm.expect("sleeping", 20*time.Second)
	var pids []int
	for deadline := time.Now().Add(5 * time.Second); len(pids) < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pids = cmdlinePids(marker) // bash (its sandbox's init) and both sleeps
	}
	if len(pids) < 3 {
		t.Fatalf("before Ctrl-C: %v, want bash and the two sleeps", pids)
	}
	tm.send("\x03")
	tm.expect("turn cancelled", 10*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d survived Ctrl-C", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The session goes on: the next request works, and the model got a
	// well-formed history (the cancelled call answered).
	tm.send("and now?\r")
	tm.expect("second turn answered", 20*time.Second)
	if !strings.Contains(model.Received(), "cancelled by the user") {
		t.Errorf("the cancelled call was not answered in the next request")
	}
	tm.quit()
}

func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// TestCtrlCRunsNothingMoreOfTheScript: after Ctrl-C the script's next
// command does not run. In the sandbox bash is its PID namespace's init,
// which the kernel spares a SIGTERM it has no handler for: the killed
// sleep was followed by the script's next line before the SIGKILL came.
func TestCtrlCRunsNothingMoreOfTheScript(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	after := filepath.Join(w.project, "AFTER")
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": "echo started; sleep 30; touch AFTER; sleep 30"}}}},
		step{text: "second turn answered"},
	)
	allowBashConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("sleep a while\r")
	// The script's output, not the call's summary (which shows "echo
	// started" before the script runs): Ctrl-C comes while it sleeps.
	tm.expect("│ started", 20*time.Second)
	tm.send("\x03")
	tm.expect("turn cancelled", 10*time.Second)
	if _, err := os.Stat(after); err == nil {
		t.Error("the script went on after Ctrl-C: AFTER was created")
	}
	// The check is not just early: by now the tool has been killed.
	time.Sleep(2500 * time.Millisecond)
	if _, err := os.Stat(after); err == nil {
		t.Error("the script went on after Ctrl-C: AFTER was created")
	}
	tm.quit()
}

// TestToolOutputCannotDriveTheTerminal: escape sequences a tool prints
// (window title, clipboard, hyperlink, cursor moves) never reach the terminal.
func TestToolOutputCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	hostile := `printf 'A\033]0;pwned-title\007B\033]52;c;cHduZWQ=\007C\033]8;;http://evil.example/\033\\link\033]8;;\033\\D\033[2J\033[HE\033P1$r\033\\F\n'`
	model := newFakeModel(t, step{calls: []fakeCall{{"bash", map[string]any{"script": hostile}}}}, step{text: "done here"})
	allowBashConfig(w, model)
	tm := startPTY(t, w, "run", "x")
	if code := tm.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.Screen())
	}
	raw := tm.Raw()
	// The script itself (shown as the call's arguments) holds these as text;
	// only the escape byte makes them sequences.
	for _, bad := range []string{"\x1b]0;", "\x1b]52;", "\x1b]8;", "\x1b[2J", "\x1bP", "\x07"} {
		if strings.Contains(raw, bad) {
			t.Errorf("terminal received %q", bad)
		}
	}
	if !strings.Contains(tm.Screen(), "ABClinkDEF") {
		t.Errorf("the printable text did not survive sanitizing:\n%s", tm.Screen())
	}
}

func TestRunExitsNonZeroWhenTheModelFails(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[model]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"fake\"\n")
	out, err := runHush(w, "run", "hello")
	if err == nil {
		t.Fatalf("hush run succeeded against a dead server:\n%s", out)
	}
	if !strings.Contains(out, "hush: model:") || strings.Contains(out, "goroutine") {
		t.Fatalf("unclear error:\n%s", out)
	}
	w.assertNoCanary("the error output", out)
}

func TestAuditLogTable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{calls: []fakeCall{{"bash", leakArgs}}}, step{text: "ok"})
	allowBashConfig(w, model)
	if out, err := runHush(w, "run", "go"); exitCodeOf(err) != 3 {
		t.Fatalf("run: %v, want exit 3 (the secret was denied)\n%s", err, out)
	}
	out, err := runHush(w, "audit", "log")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME") {
		t.Fatalf("audit log:\n%s", out)
	}
	for i, want := range []string{"bash  tool.run:bash       allow     rule: allow tool.run:bash for bash", "bash  vault.read:GRANTED  deny      default"} {
		if !strings.Contains(lines[i+1], want) {
			t.Errorf("line %d = %q, want it to contain %q", i+1, lines[i+1], want)
		}
	}
}

// cmdlinePids are the live processes whose command line holds marker.
func cmdlinePids(marker string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, d := range dirs {
		b, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		pid, err := strconv.Atoi(filepath.Base(d))
		if err == nil && strings.Contains(string(b), marker) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}
