package tests

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunStopsBackgroundProcessesUnlessKept: when hush exits, a background
// process is stopped with its whole group — unless the user asked to keep
// it, and then hush says so, with its pid and log, rather than leaving it
// behind silently.
func TestRunStopsBackgroundProcessesUnlessKept(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	marker := canary("marker")
	model := newFakeModel(t,
		step{calls: []fakeCall{{"background", map[string]any{"action": "start",
			"command": fmt.Sprintf("(exec -a %s-child sleep 300) & exec -a %s-stopped sleep 300", marker, marker)}}}},
		step{calls: []fakeCall{{"background", map[string]any{"action": "start", "keep": true,
			"command": fmt.Sprintf("echo kept; exec -a %s-kept sleep 300", marker)}}}},
		step{calls: []fakeCall{{"background", map[string]any{"action": "list"}}}},
		step{calls: []fakeCall{{"background", map[string]any{"action": "stop", "id": "bg7"}}}},
		step{text: "Started two."},
	)
	w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[[rules]]
gate = "tool.run:background"
subject = "background"
decision = "allow"

[[rules]]
gate = "tool.keep:background"
subject = "background"
decision = "allow"
`, model.URL()))
	out, err := runHush(w, "run", "start a server")
	// The kept process may still be in its sandbox's set-up when hush
	// exits (it was started a moment before): wait for it to be itself.
	left := processesWith(marker)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !(len(left) == 1 && strings.Contains(left[0], marker+"-kept")); left = processesWith(marker) {
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		for _, p := range processesWith(marker) {
			if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(left) != 1 || !strings.Contains(left[0], marker+"-kept") {
		t.Errorf("after hush exited: %q, want only the kept process", left)
	}
	notice := regexp.MustCompile(`hush: background bg2 keeps running as asked \(pid ([0-9]+)\): echo kept; exec -a \S+ sleep 300\n` +
		`  output: \S+/background/\S+/bg2\.log\n  stop it with: kill -TERM -- -([0-9]+) \(if it keeps running: kill -KILL -- -[0-9]+\)\n`)
	m := notice.FindStringSubmatch(out)
	// The pid hush names leads the kept process's group (its sandbox's
	// init); the process itself runs inside.
	if m == nil || m[1] != m[2] || len(left) != 1 || pgid(strings.SplitN(left[0], ":", 2)[0]) != m[1] {
		t.Errorf("no notice naming the kept process:\n%s", out)
	}
	received := model.Received()
	for _, want := range []string{
		"it keeps running after hush exits; its output goes unscrubbed to ",
		`bg1  running (pid `,
		`no such background process \"bg7\" (known: bg1, bg2)`,
	} {
		if !strings.Contains(received, want) {
			t.Errorf("the model did not receive %q:\n%s", want, received)
		}
	}
}

// TestKeptProcessStopsOnTERM: the kill -TERM hush prints for a kept
// background process ends it, and its whole namespace. bash there is its
// PID namespace's init, which the kernel spares a SIGTERM it has no
// handler for: the command's child died and bash went on with the next.
func TestKeptProcessStopsOnTERM(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	marker := canary("marker")
	model := newFakeModel(t,
		step{calls: []fakeCall{{"background", map[string]any{"action": "start", "keep": true,
			"command": fmt.Sprintf("(exec -a %s-kept sleep 300); sleep 301", marker)}}}},
		step{text: "Started it."},
	)
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n\n"+
		"[[rules]]\ngate = \"tool.run:background\"\nsubject = \"background\"\ndecision = \"allow\"\n\n"+
		"[[rules]]\ngate = \"tool.keep:background\"\nsubject = \"background\"\ndecision = \"allow\"\n", model.URL()))
	out, err := runHush(w, "run", "start a server")
	m := regexp.MustCompile(`stop it with: kill -TERM -- -([0-9]+)`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("%v\n%s", err, out)
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	// Positive control: it runs until told to stop.
	for deadline := time.Now().Add(5 * time.Second); len(processesWith(marker+"-kept")) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the kept process never ran:\n%s", out)
		}
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d survived kill -TERM -- -%d (left: %q)", pid, pid, processesWith(marker))
		}
	}
}

// pgid is the process group of pid, from /proc.
func pgid(pid string) string {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 3 {
		return ""
	}
	return f[2]
}
