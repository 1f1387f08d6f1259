//go:build linux

package tools

import (
	"context"
	"errors"
	"github.com/hushcli/hush/tools/sandbox"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestSandboxedStartHonoursForkLock: a sandboxed start is a fork (a
// vfork'd clone), and like os/exec's it holds syscall.ForkLock, so a
// file written under ForkLock's read lock — an executable hush or a test
// is about to run — is never held open for writing by a child between
// its clone and its exec. Without it, running a freshly written program
// while sandboxed children started failed now and then with "text file
// busy" (ETXTBSY, golang/go#22315): the child had inherited the write
// descriptor and not yet closed it.
func TestSandboxedStartHonoursForkLock(t *testing.T) {
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	prog, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	env := Env{{Name: "PATH", Value: "/usr/bin:/bin"}}
	var stop atomic.Bool
	var starts atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				cmd, err := Command(context.Background(), Spec{Path: "true", Dir: "/", Env: env, Sandbox: &sandbox.Config{}})
				if err == nil && cmd.Run() == nil {
					starts.Add(1)
				}
			}
		}()
	}
	dir := t.TempDir()
	busy := 0
	const rounds = 400
	for i := 0; i < rounds; i++ {
		p := filepath.Join(dir, "prog")
		syscall.ForkLock.RLock()
		err := os.WriteFile(p, prog, 0o755)
		syscall.ForkLock.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
		if err := exec.Command(p).Run(); errors.Is(err, syscall.ETXTBSY) {
			busy++
		} else if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if starts.Load() == 0 {
		t.Fatal("no sandboxed child started beside the writes, so this proves nothing")
	}
	if busy > 0 {
		t.Errorf("%d of %d runs of a program written under ForkLock failed with ETXTBSY beside %d sandboxed starts", busy, rounds, starts.Load())
	}
}
