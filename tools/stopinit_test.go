package tools

import (
	"bufio"
	"context"
	"errors"
	"github.com/hushcli/hush/tools/sandbox"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// stopGrace is far longer than any stop here should take, so a stop that
// waited it out cannot pass for a quick one.
const stopGrace = 30 * time.Second

// startBoxed starts script in a sandbox as its PID namespace's init, with
// a stop grace of stopGrace, and waits for its first line of output.
func startBoxed(t *testing.T, ctx context.Context, w world, path string, args ...string) (*Cmd, chan error) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe() // held open: a read of stdin blocks
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); inW.Close() })
	env := Env{{Name: "PATH", Value: "/usr/local/bin:/usr/bin:/bin"}, {Name: "HOME", Value: w.home}}
	cmd, err := Command(ctx, Spec{Path: path, Args: args, Dir: w.project, Env: env,
		Stdin: inR, Stdout: pw, Stderr: pw, Sandbox: w.sandbox(), KillGrace: stopGrace})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	inR.Close()
	if _, err := bufio.NewReader(pr).ReadString('\n'); err != nil {
		t.Fatalf("%s did not start: %v", path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, done
}

// TestStopSandboxedInitWithoutHandler: a sandboxed program exec'd as its
// namespace's init, with no TERM handler (the kernel drops the SIGTERM),
// is killed when stopped instead of after the grace period; one with a
// handler still gets SIGTERM and cleans up (the positive control).
func TestStopSandboxedInitWithoutHandler(t *testing.T) {
	if !sandbox.Status().Namespaces {
		t.Fatalf("the sandbox is unavailable: %s", sandbox.Status().Reason)
	}
	w := newWorld(t, attacker{})

	t.Run("no handler", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// sleep prints nothing: a shell prints the line, then becomes it.
		cmd, done := startBoxed(t, ctx, w, "bash", "-c", "echo ready; exec sleep 100")
		if termDropped(cmd.Process.Pid) == false {
			t.Fatalf("pid %d (sleep as its namespace's init) not seen as dropping SIGTERM", cmd.Process.Pid)
		}
		cancel()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Errorf("stopped sleep ended with %v, want killed by SIGKILL", err)
			}
		case <-time.After(stopGrace - 10*time.Second):
			t.Fatalf("the stop of a sandboxed sleep waited for the %s grace period", stopGrace)
		}
	})

	t.Run("handler", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		mark := filepath.Join(w.project, "cleaned")
		// read is a builtin: bash is a childless init with a TERM handler.
		cmd, done := startBoxed(t, ctx, w, "bash", "-c",
			`trap 'echo cleaned-up > cleaned; exit 7' TERM; echo ready; read -r x`)
		if termDropped(cmd.Process.Pid) {
			t.Fatalf("pid %d has a TERM handler but is seen as dropping SIGTERM", cmd.Process.Pid)
		}
		cancel()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Errorf("stopped program ended with %v, want exit status 7 from its TERM handler", err)
			}
		case <-time.After(stopGrace - 10*time.Second):
			t.Fatal("a sandboxed program with a TERM handler did not end on SIGTERM")
		}
		got, err := os.ReadFile(mark)
		if err != nil || string(got) != "cleaned-up\n" {
			t.Errorf("the TERM handler's file: %q, %v", got, err)
		}
	})
}
