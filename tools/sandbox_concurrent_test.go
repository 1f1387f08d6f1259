//go:build linux

package tools

import (
	"bytes"
	"context"
	"fmt"
	"github.com/hushcli/hush/tools/sandbox"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// concurrentEnv marks the test binary re-run as nobody by
// TestSandboxConcurrentStartsUnprivileged.
const concurrentEnv = "HUSH_SANDBOX_TEST_CONCURRENT"

// TestSandboxConcurrentStartsUnprivileged: an unprivileged hush starting
// sandboxed children at the same moment — two MCP servers at session
// start, a bash call beside a background process — gets every one of
// them. A vfork'd child shares hush's memory, and the dumpable flag it
// turns on to write its own id maps belongs to that memory: another
// child's set-up turning it off again made /proc/self/uid_map or gid_map
// root's, and the start failed with "hush sandbox: write gid_map:
// Permission denied" (seen as `hush audit`'s MCP rows going "not checked"
// in CI). As root the maps stay writable either way, so it is checked as
// nobody: this test binary re-run as nobody (non-dumpable, as hush is).
func TestSandboxConcurrentStartsUnprivileged(t *testing.T) {
	if os.Getenv(concurrentEnv) != "" {
		concurrentStarts(t)
		return
	}
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	if os.Getuid() != 0 {
		concurrentStarts(t)
		return
	}
	var out bytes.Buffer
	cmd := exec.Command("/proc/self/exe", "-test.run=^TestSandboxConcurrentStartsUnprivileged$", "-test.v", "-test.count=1")
	cmd.Env = []string{concurrentEnv + "=1", "PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HOME=/tmp"}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "--- PASS: TestSandboxConcurrentStartsUnprivileged") {
		t.Fatalf("as nobody: %v\n%s", err, out.String())
	}
	t.Logf("as nobody:\n%s", out.String())
}

// concurrentStarts starts sandboxed children from several goroutines at
// once and fails on any that did not run.
func concurrentStarts(t *testing.T) {
	if os.Getuid() == 0 {
		t.Fatal("concurrentStarts must run unprivileged: as root the id maps are writable whatever the dumpable flag says")
	}
	// As hush is (Guard's harden): not dumpable.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	const workers, each = 6, 40
	env := Env{{Name: "PATH", Value: "/usr/bin:/bin"}}
	var mu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				var out bytes.Buffer
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				cmd, err := Command(ctx, Spec{Path: "true", Dir: "/", Env: env, Stdout: &out, Stderr: &out, Sandbox: &sandbox.Config{}})
				if err == nil {
					err = cmd.Run()
				}
				cancel()
				if err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%v: %s", err, strings.TrimSpace(out.String())))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); d != 0 {
		t.Errorf("after the starts this process is dumpable (%d): a child's set-up left hush's memory readable", d)
	}
	if len(failures) > 0 {
		t.Fatalf("%d of %d concurrent sandboxed starts failed, e.g.:\n  %s", len(failures), workers*each, strings.Join(failures[:min(len(failures), 5)], "\n  "))
	}
}
