//go:build linux

package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/tools/sandbox"
)

// limitCall (safe in a goroutine of the test) runs script in a sandbox with limits, as hush's own user or,
// re-run as nobody, as an unprivileged hush; it returns the output, the
// error and the call's PID namespace (to look for what is left), held
// open until the test ends so that no later namespace takes its number.
func limitCall(t *testing.T, ctx context.Context, script string, limits sandbox.Limits) (out string, ns string, err error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		return "", "", err
	}
	var buf bytes.Buffer
	sb := &sandbox.Config{Limits: limits}
	cmd, err := Command(ctx, attacker{}.spec(dir, nil, script, sb, &buf))
	if err != nil {
		return "", "", err
	}
	if err := cmd.Start(); err != nil {
		return "", "", err
	}
	nsPath := fmt.Sprintf("/proc/%d/ns/pid", cmd.Process.Pid)
	if f, err := os.Open(nsPath); err == nil {
		t.Cleanup(func() { f.Close() })
	}
	ns, _ = os.Readlink(nsPath)
	err = cmd.Wait()
	return buf.String(), ns, err
}

// inNamespace lists the pids of host processes in the PID namespace ns.
func inNamespace(ns string) []string {
	var left []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '1' || e.Name()[0] > '9' {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && l == ns {
			left = append(left, e.Name())
		}
	}
	return left
}

// TestForkBombStopsAtTheLimit runs the classic fork bomb in a bash call
// limited to 300 processes (a small limit: a bomb grows only as fast as
// the machine forks). Without the limit it would take every pid
// of the machine (pid_max here) and hush with it; with it, forks fail past
// the limit, hush stops the call with one sentence, nothing of it is left,
// and a second call that starts 50 processes meanwhile (the positive
// control that the limit leaves ordinary work alone) runs to its end.
// As root (the kernel exempts root from RLIMIT_NPROC; the PID namespace's
// pid_max holds) and as an unprivileged hush (RLIMIT_NPROC in the call's
// user namespace too).
func TestForkBombStopsAtTheLimit(t *testing.T) {
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	if os.Getuid() == 0 && os.Getenv(unprivEnv) == "" {
		t.Run("unprivileged-hush", func(t *testing.T) { rerunAsNobody(t, "TestForkBombStopsAtTheLimit") })
	}
	limits := sandbox.Limits{Processes: 300, Setting: "[tools.bash]"}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	type result struct {
		out string
		err error
		ns  string
	}
	bomb, fifty := make(chan result, 1), make(chan result, 1)
	start := time.Now()
	go func() {
		out, ns, err := limitCall(t, ctx, `:(){ :|:& };: ; sleep 80`, limits)
		bomb <- result{out, err, ns}
	}()
	time.Sleep(200 * time.Millisecond)
	go func() {
		out, ns, err := limitCall(t, ctx, `for i in $(seq 50); do sleep 10 & done; n=$(ls /proc | grep -c '^[0-9]'); wait; echo "ran $n"`, limits)
		fifty <- result{out, err, ns}
	}()
	b := <-bomb
	took := time.Since(start)
	var limit *sandbox.LimitError
	if !errors.As(b.err, &limit) {
		t.Fatalf("the fork bomb's call ended with %v after %s, not at its limit; output:\n%.2000s", b.err, took, b.out)
	}
	want := "stopped: the call reached its limit of 300 processes (max_processes in [tools.bash]), so hush ended it and everything it started"
	if got := b.err.Error(); got != want {
		t.Errorf("the call said\n%s\nwant\n%s", got, want)
	}
	if took > 60*time.Second {
		t.Errorf("the bomb ran %s, as long as its time-out: hush did not stop it at the limit", took)
	}
	f := <-fifty
	var ran int
	if _, err := fmt.Sscanf(strings.TrimSpace(f.out), "ran %d", &ran); f.err != nil || err != nil || ran < 51 {
		t.Errorf("a call starting 50 processes beside the bomb failed (%d processes at once): %v\n%s", ran, f.err, f.out)
	}
	for _, r := range []result{b, f} {
		if r.ns == "" {
			t.Fatal("no PID namespace was read for a call")
		}
		deadline := time.Now().Add(5 * time.Second)
		left := inNamespace(r.ns)
		for len(left) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			left = inNamespace(r.ns)
		}
		if len(left) > 0 {
			t.Errorf("%d processes of a call are left after it ended: %v", len(left), left)
		}
	}
	t.Logf("the bomb was stopped after %s: %s", took, b.err)
}

// TestMemoryLimitRefusesAHog asks for 1 GiB in one process of a call
// limited to 256 MiB per process: the allocation fails there (Python's
// MemoryError), and the call goes on; the controls: the same request
// without the limit succeeds, and 64 MiB succeeds under it.
func TestMemoryLimitRefusesAHog(t *testing.T) {
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	if os.Getuid() == 0 && os.Getenv(unprivEnv) == "" {
		t.Run("unprivileged-hush", func(t *testing.T) { rerunAsNobody(t, "TestMemoryLimitRefusesAHog") })
	}
	// bytes(n) is calloc'd: mapped, counted against the limit,
	// and never touched, so the control costs the machine nothing.
	script := `python3 -c 'b = bytes(1 << 30); print("hog got", len(b))' 2>&1 | tail -1
python3 -c 'b = bytes(64 << 20); print("small got", len(b))'`
	ctx := context.Background()
	for _, c := range []struct {
		limit int64
		want  []string
	}{
		{0, []string{"hog got 1073741824", "small got 67108864"}},
		{256 << 20, []string{"MemoryError", "small got 67108864"}},
	} {
		out, _, err := limitCall(t, ctx, script, sandbox.Limits{Memory: c.limit, Setting: "[tools.bash]"})
		if err != nil {
			t.Errorf("limit %d: the call failed: %v\n%s", c.limit, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("limit %d: no %q in the output:\n%s", c.limit, w, out)
			}
		}
		if c.limit > 0 && strings.Contains(out, "hog got") {
			t.Errorf("a process took 1 GiB under a 256 MiB limit:\n%s", out)
		}
	}
}

// TestMemoryLimitEndsTheCall: under a 256 MiB limit, four processes of a
// call fill 100 MiB each (b"x" * n writes every page): none passes the
// limit alone, together they do; and one process grows 4 MiB at a time
// toward 1 GiB. Each time hush ends the call with one sentence long
// before its sleep is over, and nothing of it is left. The control: the
// four under 1 GiB run to their end. As root and as an unprivileged hush.
func TestMemoryLimitEndsTheCall(t *testing.T) {
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	if os.Getuid() == 0 && os.Getenv(unprivEnv) == "" {
		t.Run("unprivileged-hush", func(t *testing.T) { rerunAsNobody(t, "TestMemoryLimitEndsTheCall") })
	}
	four := func(sleep int) string {
		return fmt.Sprintf(`for i in 1 2 3 4; do python3 -c 'import time; b = b"x" * (100 << 20); print("filled", flush=True); time.sleep(%d)' & done; wait; echo all-done`, sleep)
	}
	grow := `python3 -c '
import time
held = []
for i in range(256):
    held.append(b"x" * (4 << 20))
    time.sleep(0.05)
print("grew to 1 GiB")
time.sleep(60)'; echo all-done`
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	out, _, err := limitCall(t, ctx, four(1), sandbox.Limits{Memory: 1 << 30, Setting: "[tools.bash]"})
	if err != nil || strings.Count(out, "filled") != 4 || !strings.Contains(out, "all-done") {
		t.Fatalf("control: four processes of 100 MiB under 1 GiB: %v\n%s", err, out)
	}
	for _, c := range []struct{ name, script string }{{"four processes", four(60)}, {"one growing process", grow}} {
		start := time.Now()
		out, ns, err := limitCall(t, ctx, c.script, sandbox.Limits{Memory: 256 << 20, Setting: "[tools.bash]"})
		took := time.Since(start)
		var limit *sandbox.LimitError
		if !errors.As(err, &limit) {
			t.Errorf("%s: the call ended with %v after %s, not at its memory limit; output:\n%s", c.name, err, took, out)
			continue
		}
		want := "stopped: the call used more than its memory limit of 256.0 MiB (max_memory in [tools.bash]), so hush ended it and everything it started"
		if got := err.Error(); got != want {
			t.Errorf("%s: the call said\n%s\nwant\n%s", c.name, got, want)
		}
		if took > 45*time.Second || strings.Contains(out, "all-done") || strings.Contains(out, "grew to") {
			t.Errorf("%s: the call ran %s, past its limit: hush did not stop it there\n%s", c.name, took, out)
		}
		deadline := time.Now().Add(5 * time.Second)
		left := inNamespace(ns)
		for len(left) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
			left = inNamespace(ns)
		}
		if ns == "" || len(left) > 0 {
			t.Errorf("%s: processes of the call are left after it ended (namespace %q): %v", c.name, ns, left)
		}
		t.Logf("%s: stopped after %s", c.name, took)
	}
}
