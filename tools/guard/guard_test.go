//go:build linux

package guard

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestGuardHidesTheEnvironment runs the test binary as a stand-in for hush:
// it calls Guard, which must re-exec so that /proc/<pid>/environ, read from
// outside, holds only the core allowlist, while the snapshot Guard returns
// still holds everything (the positive control).
func TestGuardHidesTheEnvironment(t *testing.T) {
	t.Parallel()
	checkGuard(t)
}

// A stray HUSH_ENV_FD in the caller's environment (no descriptor behind
// it) must not let the environment through unhidden.
func TestGuardIgnoresAStrayDescriptorNumber(t *testing.T) {
	t.Parallel()
	checkGuard(t, envFDVar+"=77")
}

func checkGuard(t *testing.T, extra ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGuardHelper$")
	cmd.Env = append([]string{
		"HUSH_GUARD_HELPER=1", "PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8",
		"OPENAI_API_KEY=sk-guard-canary-1", "INNOCENT_NAME=guard-canary-2", "DATABASE_URL=postgres://u:guard-canary-3@h/d",
	}, extra...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatal("helper printed nothing")
	}
	snapshot := sc.Text()
	// Read the helper's environ from outside, as a tool would read /proc/$PPID/environ.
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, canary := range []string{"guard-canary-1", "guard-canary-2", "guard-canary-3", "HUSH_GUARD_HELPER"} {
		if bytes.Contains(environ, []byte(canary)) {
			t.Errorf("/proc/<pid>/environ still holds %q: %q", canary, environ)
		}
	}
	if !bytes.Contains(environ, []byte("PATH=/usr/bin:/bin")) {
		t.Errorf("environ lost PATH: %q", environ)
	}
	for _, want := range []string{"OPENAI_API_KEY=sk-guard-canary-1", "INNOCENT_NAME=guard-canary-2", "DATABASE_URL=postgres://u:guard-canary-3@h/d"} {
		if !strings.Contains(snapshot, want) {
			t.Errorf("snapshot lost %q: %s", want, snapshot)
		}
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if !strings.Contains(string(status), "\nPid:\t"+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("re-exec changed the pid")
	}
}

// The exit codes of the helper processes the tests of this package start.
const (
	helperDone   = 0
	helperFailed = 1
)

// TestGuardHelper is the process TestGuardHidesTheEnvironment inspects.
func TestGuardHelper(t *testing.T) {
	if _, ok := syscall.Getenv("HUSH_GUARD_HELPER"); !ok {
		if _, ok := syscall.Getenv(envFDVar); !ok {
			t.Skip("helper process only")
		}
	}
	env, err := Guard()
	if err != nil {
		fmt.Println("guard error:", err)
		os.Exit(helperFailed)
	}
	var keys []string
	for k, v := range env {
		keys = append(keys, k+"="+v)
	}
	fmt.Println(strings.Join(keys, " "))
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // wait until the test has looked
	os.Exit(helperDone)
}
