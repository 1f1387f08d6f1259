//go:build linux

package guard

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hushcli/hush/tools"
	"golang.org/x/sys/unix"
)

// TestEarlyGuardListIsCoreNames keeps the C constructor's copy of the
// allowlist equal to coreNames, which owns it. (A drift would not leak —
// Guard re-checks the reduction — but it would bring the slow re-exec
// back, or drop a variable hush's own libraries read.)
func TestEarlyGuardListIsCoreNames(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("early.c")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)hush_early_core\[\] = \{(.*?)\};`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no hush_early_core array in early.c")
	}
	var got []string
	for _, q := range regexp.MustCompile(`"([^"]*)"`).FindAllSubmatch(m[1], -1) {
		got = append(got, string(q[1]))
	}
	if !slices.Equal(got, tools.CoreNames()) {
		t.Fatalf("hush_early_core = %q\ncoreNames       = %q", got, tools.CoreNames())
	}
}

// guardRun is one run of a Guard stand-in: what it printed and what
// /proc/<pid>/environ showed from outside while it waited.
type guardRun struct {
	snapshot map[string]string
	execFn   string // AT_EXECFN, from the guardhush program only
	guarded  string // GuardedBy(), from the guardhush program only
	environ  string // NUL-separated, as the kernel shows it
}

// runGuarded starts cmd, which must print "env NAME=value" lines and then
// "ready" and wait for stdin to close, and reads its environ meanwhile.
func runGuarded(t *testing.T, cmd *exec.Cmd) guardRun {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	run := guardRun{snapshot: map[string]string{}}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			run.environ = string(environ)
			return run
		}
		if kv, ok := strings.CutPrefix(line, "env "); ok {
			k, v, _ := strings.Cut(kv, "=")
			run.snapshot[k] = v
		}
		if g, ok := strings.CutPrefix(line, "guarded "); ok {
			run.guarded = g
		}
		if fn, ok := strings.CutPrefix(line, "execfn "); ok {
			run.execFn = fn
		}
		if strings.HasPrefix(line, "guard error") {
			t.Fatal(line)
		}
	}
	t.Fatalf("the guarded process ended before it was ready: %s", stderr.String())
	return run
}

// checkHidden asserts that environ holds none of the canaries and keeps
// PATH, and that the snapshot holds every variable of want (the positive
// control: hiding must not lose anything for hush itself).
func checkHidden(t *testing.T, run guardRun, want []string, canaries []string) {
	t.Helper()
	for _, c := range canaries {
		if strings.Contains(run.environ, c) {
			t.Errorf("/proc/<pid>/environ still holds %q: %q", c, run.environ)
		}
	}
	if !strings.Contains(run.environ, "PATH=/usr/bin:/bin\x00") {
		t.Errorf("environ lost PATH: %q", run.environ)
	}
	for _, kv := range want {
		k, v, _ := strings.Cut(kv, "=")
		if got, ok := run.snapshot[k]; !ok || got != v {
			t.Errorf("snapshot has %s=%q, want %q", k, got, v)
		}
	}
}

// TestEarlyGuardInTheHushExecutable builds a stand-in for hush under the
// name "hush", so the C constructor acts, and checks the environment is
// hidden in place before the Go runtime started, with no exec at all (the
// kernel's AT_EXECFN is still the path the test started), that what
// /proc/<pid>/environ shows is exactly the kept variables and zeros, and
// that with nothing to hide nothing is touched.
func TestEarlyGuardInTheHushExecutable(t *testing.T) {
	t.Parallel()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the stand-in with: " + err.Error())
	}
	if !cgoEnabled(gobin) {
		t.Skip("go env CGO_ENABLED is not 1: the early guard is not linked in; Guard alone is tested by TestGuardHidesTheEnvironment")
	}
	bin := filepath.Join(t.TempDir(), "hush")
	build := exec.Command(gobin, "build", "-o", bin, "./testdata/guardhush")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the stand-in: %v\n%s", err, out)
	}

	t.Run("hides", func(t *testing.T) {
		t.Parallel()
		env := []string{
			"PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "PWD=/tmp",
			"OPENAI_API_KEY=sk-early-canary-1", "INNOCENT_NAME=early-canary-2",
			"PAGER=https://u:early-canary-3@host/less", "LC_X/Y=early-canary-4",
		}
		run := runGuarded(t, &exec.Cmd{Path: bin, Args: []string{"hush"}, Env: env})
		checkHidden(t, run, env, []string{"early-canary-1", "early-canary-2", "early-canary-3", "early-canary-4", "PWD="})
		// The environ block is the kept strings, in order, then one
		// padding entry to its old length: nothing of what was dropped is
		// left in it.
		want := "PATH=/usr/bin:/bin\x00HOME=/root\x00LANG=C.UTF-8\x00LC_ALL=C.UTF-8\x00HUSH_ENV_HIDDEN="
		if !strings.HasPrefix(run.environ, want) || strings.TrimLeft(run.environ[len(want):], " ") != "\x00" {
			t.Errorf("environ = %q, want %q, spaces and a NUL", run.environ, want)
		}
		if len(run.environ) != len(strings.Join(env, "\x00"))+1 {
			t.Errorf("environ is %d bytes, want the original %d (rewritten in place)", len(run.environ), len(strings.Join(env, "\x00"))+1)
		}
		if run.guarded != GuardedInPlace || run.execFn != bin {
			t.Errorf("guarded %q, AT_EXECFN %q: want %q and no exec (%s)", run.guarded, run.execFn, GuardedInPlace, bin)
		}
	})
	t.Run("nothing to hide", func(t *testing.T) {
		t.Parallel()
		env := []string{"PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"}
		run := runGuarded(t, &exec.Cmd{Path: bin, Args: []string{"hush"}, Env: env})
		checkHidden(t, run, env, nil)
		if run.execFn != bin || run.guarded != GuardedNothingToHide {
			t.Errorf("guarded %q, AT_EXECFN = %q, want %q and %q", run.guarded, run.execFn, GuardedNothingToHide, bin)
		}
		if run.environ != strings.Join(env, "\x00")+"\x00" {
			t.Errorf("environ = %q, want it untouched", run.environ)
		}
		if strings.Contains(run.environ, envFDVar) {
			t.Errorf("environ = %q: re-executed with nothing to hide", run.environ)
		}
	})
	t.Run("other names", func(t *testing.T) {
		t.Parallel()
		// Under any other name the constructor stays out of the way, as
		// it must for test binaries; Guard still hides everything.
		other := filepath.Join(t.TempDir(), "hush-dev")
		if err := os.Link(bin, other); err != nil {
			t.Fatal(err)
		}
		env := []string{"PATH=/usr/bin:/bin", "HOME=/root", "INNOCENT_NAME=early-canary-5"}
		run := runGuarded(t, &exec.Cmd{Path: other, Args: []string{"hush-dev"}, Env: env})
		checkHidden(t, run, env, []string{"early-canary-5"})
		if run.execFn != other || run.guarded != GuardedByReexec {
			t.Errorf("guarded %q, AT_EXECFN = %q, want %q and %q (Guard's own re-exec)", run.guarded, run.execFn, GuardedByReexec, other)
		}
	})
}

// TestGuardRedoesALooseReduction plays an early guard that kept too much:
// the helper starts with HUSH_ENV_FD pointing at the full environment but
// an environ still holding a variable reduce drops. Guard must notice and
// re-exec with its own reduction.
func TestGuardRedoesALooseReduction(t *testing.T) {
	t.Parallel()
	full := []string{"HUSH_EARLY_HELPER=1", "PATH=/usr/bin:/bin", "HOME=/root", "INNOCENT_NAME=loose-canary-1", "API_TOKEN=loose-canary-2"}
	fd, err := unix.MemfdCreate("hush-env-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skip("no memfd: " + err.Error())
	}
	memfd := os.NewFile(uintptr(fd), "hush-env-test")
	defer memfd.Close()
	if _, err := memfd.Write(encodeEnv(full)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEarlyGuardHelper$")
	cmd.ExtraFiles = []*os.File{memfd} // fd 3 in the helper
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/root", "INNOCENT_NAME=loose-canary-1", envFDVar + "=3"}
	run := runGuarded(t, cmd)
	checkHidden(t, run, full, []string{"loose-canary-1", "loose-canary-2"})
}

// TestEarlyGuardHelper is the process TestGuardRedoesALooseReduction
// inspects: it calls Guard and prints what runGuarded reads.
func TestEarlyGuardHelper(t *testing.T) {
	if _, ok := os.LookupEnv(envFDVar); !ok {
		t.Skip("helper process only")
	}
	env, err := Guard()
	if err != nil {
		fmt.Println("guard error:", err)
		os.Exit(helperFailed)
	}
	for k, v := range env {
		fmt.Println("env " + k + "=" + v)
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(helperDone)
}

// cgoEnabled reports whether go build links the C constructor in.
func cgoEnabled(gobin string) bool {
	out, err := exec.Command(gobin, "env", "CGO_ENABLED").Output()
	return err == nil && strings.TrimSpace(string(out)) == "1"
}
