package vault_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hushcli/hush/vault"
)

// The test binary re-executes itself as the program under test: these
// variables tell TestHelperProcess what to do. The child gets only them, not
// this process's environment.
const (
	helperMode   = "HUSH_VAULT_HELPER"
	helperPath   = "HUSH_VAULT_HELPER_PATH"
	helperPrefix = "HUSH_VAULT_HELPER_PREFIX"
	helperCount  = "HUSH_VAULT_HELPER_COUNT"
)

// The helper's exit codes.
const (
	helperDone   = 0
	helperFailed = 3
)

// TestHelperProcess is not a test: it is the child the tests below start.
//
//	set-many: wait for stdin to close, then set COUNT names PREFIX_0.. to
//	          "PREFIX-i-value"; exit.
//	churn:    set the churn names to their old and new values in turn,
//	          forever, printing a line after each Set; it is killed.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperMode)
	if mode == "" {
		t.Skip("helper process for the multi-process vault tests")
	}
	e := vault.NewEnvFile(os.Getenv(helperPath))
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(helperFailed)
	}
	switch mode {
	case "set-many":
		// Start line: all children start setting at once.
		if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
			fail(err)
		}
		prefix := os.Getenv(helperPrefix)
		n, err := strconv.Atoi(os.Getenv(helperCount))
		if err != nil {
			fail(err)
		}
		for i := range n {
			if err := e.Set(fmt.Sprintf("%s_%d", prefix, i), fmt.Sprintf("%s-%d-value", prefix, i)); err != nil {
				fail(err)
			}
		}
		os.Exit(helperDone)
	case "churn":
		out := bufio.NewWriter(os.Stdout)
		for round := 0; ; round++ {
			for i, name := range churnNames {
				v := churnOld(i)
				if round%2 == 0 {
					v = churnNew(i)
				}
				if err := e.Set(name, v); err != nil {
					fail(err)
				}
				fmt.Fprintln(out, "set")
				if err := out.Flush(); err != nil {
					fail(err)
				}
			}
		}
	default:
		fail(fmt.Errorf("unknown helper mode %q", mode))
	}
}

var churnNames = []string{"CHURN_A", "CHURN_B", "CHURN_C", "CHURN_D", "CHURN_E"}

// Values are long and awkward, so a torn write cannot pass for a whole one,
// and the write is a fair share of each Set.
func churnOld(i int) string { return fmt.Sprintf("old-%d \"q\" \\ $X\n%02048d", i, i) }
func churnNew(i int) string { return fmt.Sprintf("new-%d 'q' ${Y} #\n%04096d", i, i) }

func helper(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = env
	cmd.Stderr = &prefixWriter{t: t}
	return cmd
}

// prefixWriter passes a child's stderr to the test log.
type prefixWriter struct{ t *testing.T }

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.t.Logf("child: %s", p)
	return len(p), nil
}

// TestEnvFileSurvivesKill SIGKILLs a process in the middle of its stream of
// Sets, at several points. Every time, the file must parse and hold, for
// every name, its old or its new value: never a torn one, never none.
//
// A kill right after a progress line lands at the start of the next Set, so
// each subtest waits a different while before killing, to land inside the
// write and the rename as well. The waits only spread the kill points; the
// property holds at any of them, so no outcome depends on timing.
func TestEnvFileSurvivesKill(t *testing.T) {
	t.Parallel()
	for i, wait := range []time.Duration{0, 100 * time.Microsecond, 500 * time.Microsecond, time.Millisecond,
		2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond, 16 * time.Millisecond} {
		killAfter := 1 + i // progress lines read before the wait
		t.Run(fmt.Sprintf("%d sets, then %v", killAfter, wait), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), vault.EnvFileName)
			e := vault.NewEnvFile(path)
			for i, name := range churnNames {
				mustSet(t, e, name, churnOld(i))
			}
			cmd := helper(t, helperMode+"=churn", helperPath+"="+path)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			lines := bufio.NewScanner(stdout)
			for range killAfter {
				if !lines.Scan() {
					t.Fatalf("helper stopped early: %v", lines.Err())
				}
			}
			// Keep draining so the child never blocks on a full pipe.
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			time.Sleep(wait)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()

			check := func(when string, extra int) {
				t.Helper()
				all, err := vault.NewEnvFile(path).All()
				if err != nil {
					t.Fatalf("%s: vault.env does not parse: %v", when, err)
				}
				if len(all) != len(churnNames)+extra {
					t.Errorf("%s: %d names, want %d", when, len(all), len(churnNames)+extra)
				}
				for i, name := range churnNames {
					if v := all[name]; v != churnOld(i) && v != churnNew(i) {
						t.Errorf("%s: %s = %q, want its old or its new value", when, name, v)
					}
				}
			}
			check("after the kill", 0)
			// The killed writer's lock died with it: the next write proceeds.
			mustSet(t, e, "AFTER", "ok")
			check("after the next Set", 1)
		})
	}
}

// TestEnvFileTwoProcesses: processes setting different names at the same
// time lose none of them.
func TestEnvFileTwoProcesses(t *testing.T) {
	t.Parallel()
	const procs, each = 2, 50
	path := filepath.Join(t.TempDir(), "data", vault.EnvFileName)
	var gates []io.WriteCloser
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := helper(t, helperMode+"=set-many", helperPath+"="+path,
			helperPrefix+"="+fmt.Sprintf("P%d", p), helperCount+"="+strconv.Itoa(each))
		gate, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		gates = append(gates, gate)
		cmds = append(cmds, cmd)
	}
	for _, g := range gates {
		_ = g.Close()
	}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", p, err)
		}
	}
	all, err := vault.NewEnvFile(path).All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != procs*each {
		t.Errorf("%d names in vault.env, want %d", len(all), procs*each)
	}
	for p := range procs {
		for i := range each {
			name, want := fmt.Sprintf("P%d_%d", p, i), fmt.Sprintf("P%d-%d-value", p, i)
			if got, ok := all[name]; !ok || got != want {
				t.Errorf("%s = %q (present %v), want %q", name, got, ok, want)
			}
		}
	}
}
