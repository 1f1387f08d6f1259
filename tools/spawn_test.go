package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/hushcli/hush/tools/sandbox"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// canaryAmbient is an environment full of secrets in every shape the
// default policy must keep out of a child.
func canaryAmbient() map[string]string {
	return map[string]string{
		"PATH":             "/usr/local/bin:/usr/bin:/bin",
		"HOME":             "/root",
		"OPENAI_API_KEY":   "sk-canary-env-1",
		"MY_SERVICE_TOKEN": "tok-canary-env-2",
		"DATABASE_URL":     "postgres://u:pw-canary-3@h/db",
		"INNOCENT":         "canary-vault-value-4",
		"DOTENV_ONLY":      "canary-dotenv-5",
	}
}

func TestSpawnedEnvHoldsNoCanary(t *testing.T) {
	t.Parallel()
	vaultValues := map[string]string{"STORED": "canary-vault-value-4", "DOTENV_ONLY": "canary-dotenv-5", "GRANTED": "canary-granted-6"}
	fv := &fakeVault{values: vaultValues}
	env, _, err := BuildEnv(EnvRequest{
		Ambient: canaryAmbient(), Secrets: NewSecretSet(vaultValues), Grant: fv.grant,
		Extra: map[string]string{"POSITIVE": "${GRANTED}"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd, err := Command(context.Background(), Spec{Path: "env", Dir: t.TempDir(), Env: env, Stdout: &out, Stderr: &out, Secrets: NewSecretSet(vaultValues)})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("env: %v\n%s", err, out.String())
	}
	for _, canary := range []string{"sk-canary-env-1", "tok-canary-env-2", "pw-canary-3", "canary-vault-value-4", "canary-dotenv-5"} {
		if strings.Contains(out.String(), canary) {
			t.Errorf("child env holds %q:\n%s", canary, out.String())
		}
	}
	// Positive control: the channel works, a granted secret does arrive.
	if !strings.Contains(out.String(), "POSITIVE=canary-granted-6\n") {
		t.Errorf("granted secret did not reach the child:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "PATH=/usr/local/bin:/usr/bin:/bin\n") {
		t.Errorf("PATH missing from the child:\n%s", out.String())
	}
}

func TestCommandRefusals(t *testing.T) {
	t.Parallel()
	secrets := NewSecretSet(map[string]string{"K": "hunter2-secret"})
	cases := []struct {
		name string
		spec Spec
		want string
	}{
		{"no dir", Spec{Path: "true", Env: Env{}}, "spawn: no working directory given"},
		{"nil env", Spec{Path: "true", Dir: "/"}, "spawn: no environment given (build one with BuildEnv)"},
		{"no program", Spec{Dir: "/", Env: Env{}}, "spawn: no program given"},
		{"secret in argv", Spec{Path: "sh", Args: []string{"-c", "echo hunter2-secret"}, Dir: "/", Env: Env{}, Secrets: secrets}, ErrSecretInArgv.Error()},
		{"not found in the child's PATH", Spec{Path: "env", Dir: "/", Env: Env{{Name: "PATH", Value: "/nonexistent"}}}, "spawn: env: executable file not found in $PATH"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Command(context.Background(), tc.spec)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestChildHasNoTerminalAndOwnSession(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	env := Env{{Name: "PATH", Value: "/usr/bin:/bin"}}
	script := `cat; echo "stdin-done"; if (exec 3</dev/tty) 2>/dev/null; then echo tty-open; else echo no-tty; fi; ` +
		`echo "pid=$$ sid=$(ps -o sid= -p $$ | tr -d ' ') pgid=$(ps -o pgid= -p $$ | tr -d ' ')"`
	cmd, err := Command(context.Background(), Spec{Path: "sh", Args: []string{"-c", script}, Dir: "/", Env: env, Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	if !strings.HasPrefix(got, "stdin-done\nno-tty\n") {
		t.Fatalf("stdin was not /dev/null or a terminal was reachable:\n%s", got)
	}
	var pid, sid, pgid int
	if _, err := fmt.Sscanf(strings.Split(got, "\n")[2], "pid=%d sid=%d pgid=%d", &pid, &sid, &pgid); err != nil {
		t.Fatalf("parse %q: %v", got, err)
	}
	// The session and its group are the child's own: led by the child, or,
	// on the path without a sandbox, by its reaper, the process hush
	// started (reaper_linux.go).
	if sid != cmd.Process.Pid || pgid != cmd.Process.Pid || sid == unixGetsid() {
		t.Fatalf("child is not in a session of its own: pid=%d sid=%d pgid=%d (started %d)", pid, sid, pgid, cmd.Process.Pid)
	}
	if reaperBuilt && pid == sid {
		t.Errorf("the child was started without its reaper")
	}
}

func unixGetsid() int {
	sid, _ := unix.Getsid(0)
	return sid
}

// TestCancelKillsTheWholeTree starts a shell that forks grandchildren, then
// cancels; no process of the group may survive.
func TestCancelKillsTheWholeTree(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	env := Env{{Name: "PATH", Value: "/usr/bin:/bin"}}
	cmd, err := Command(ctx, Spec{Path: "sh", Args: []string{"-c", `sleep 300 & sleep 300 & (sleep 300 &) ; echo started; wait`}, Dir: "/", Env: env, Stdout: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line, _ := bufio.NewReader(r).ReadString('\n')
	if line != "started\n" {
		t.Fatalf("got %q", line)
	}
	pgid := cmd.Process.Pid
	if n := len(groupMembers(t, pgid)); n < 4 {
		t.Fatalf("expected the shell and 3 sleeps in group %d, found %d", pgid, n)
	}
	cancel()
	_ = cmd.Wait()
	r.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := groupMembers(t, pgid)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("survivors in group %d after cancel: %v", pgid, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupMembers lists live (non-zombie) processes whose process group is pgid.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised comm: state ppid pgrp ...
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestKillGroupBadPid(t *testing.T) {
	t.Parallel()
	if err := KillGroup(0, syscall.SIGKILL); err == nil {
		t.Fatal("KillGroup(0) must refuse: -0 would signal our own group")
	}
	if err := KillGroup(1<<22, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("KillGroup of a gone group: %v", err)
	}
}

// TestLookPathFollowsTheChildsPath: a bare program name is found in the
// child's PATH (relative entries from the child's directory), and a
// remembered answer is dropped when its file goes away.
func TestLookPathFollowsTheChildsPath(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	install := func(dir, name string) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+dir+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first, second := filepath.Join(root, "first"), filepath.Join(root, "second")
	install(second, "hush-probe-prog")
	firstProg := install(first, "hush-probe-prog")
	if err := os.WriteFile(filepath.Join(first, "not-executable"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(root, "project")
	install(filepath.Join(project, "bin"), "hush-local-prog")

	run := func(prog, path string) string {
		t.Helper()
		var out bytes.Buffer
		cmd, err := Command(context.Background(), Spec{Path: prog, Dir: project, Env: Env{{Name: "PATH", Value: path}}, Stdout: &out, Stderr: &out})
		if err != nil {
			return err.Error()
		}
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", prog, err, out.String())
		}
		return strings.TrimSpace(out.String())
	}
	path := first + ":" + second
	for range 2 { // the second call answers from memory
		if got := run("hush-probe-prog", path); got != first {
			t.Fatalf("ran the one in %s, want %s", got, first)
		}
	}
	if err := os.Remove(firstProg); err != nil {
		t.Fatal(err)
	}
	if got := run("hush-probe-prog", path); got != second {
		t.Errorf("after removing it from %s: ran the one in %q, want %s", first, got, second)
	}
	if got := run("not-executable", path); !strings.Contains(got, "executable file not found") {
		t.Errorf("a file without x bits ran: %q", got)
	}
	// A relative entry is the child's directory's, not hush's.
	if got := run("hush-local-prog", "bin:"+path); got != filepath.Join(project, "bin") {
		t.Errorf("relative PATH entry: got %q", got)
	}
}

const inheritedEnv = "HUSH_SPAWN_TEST_INHERITED"

// TestInheritedDescriptorReachesNoChild: a descriptor hush inherited from
// whoever started it (here fd 3, a file holding a canary) is readable by
// hush itself — the control — but reaches no child of the spawn layer,
// sandboxed or not, at /proc/self/fd/3.
func TestInheritedDescriptorReachesNoChild(t *testing.T) {
	if os.Getenv(inheritedEnv) != "" {
		inheritedHelper(t)
		return
	}
	secret := "CANARY-inherited-" + strconv.Itoa(os.Getpid())
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("/proc/self/exe", "-test.run=^TestInheritedDescriptorReachesNoChild$", "-test.v", "-test.count=1")
	cmd.Env = []string{inheritedEnv + "=1", "PATH=/usr/bin:/bin", "TMPDIR=/tmp"}
	cmd.ExtraFiles = []*os.File{f} // fd 3 in the helper, not close-on-exec
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "self:"+hexOf(secret)) {
		t.Fatalf("control: the helper did not inherit the descriptor, so this proves nothing:\n%s", out)
	}
	for _, child := range []string{"bare", "sandboxed"} {
		if !strings.Contains(string(out), child+":") {
			t.Errorf("the %s child did not run:\n%s", child, out)
		}
		if strings.Contains(string(out), child+":"+hexOf(secret)) {
			t.Errorf("a %s child read the descriptor hush inherited:\n%s", child, out)
		}
	}
}

func hexOf(s string) string { return fmt.Sprintf("%x", s) }

// inheritedHelper is the helper process: hush with fd 3 inherited.
func inheritedHelper(t *testing.T) {
	b, err := os.ReadFile("/proc/self/fd/3")
	fmt.Printf("self:%x %v\n", b, err)
	env := Env{{Name: "PATH", Value: "/usr/bin:/bin"}}
	for _, c := range []struct {
		name string
		sb   *sandbox.Config
	}{{"bare", nil}, {"sandboxed", &sandbox.Config{Required: true}}} {
		var out bytes.Buffer
		cmd, err := Command(context.Background(), Spec{Path: "sh", Args: []string{"-c", "od -An -tx1 /proc/self/fd/3 | tr -d ' \\n'; true"},
			Dir: "/", Env: env, Stdout: &out, Stderr: &out, Sandbox: c.sb})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out.String())
		}
		fmt.Printf("%s:%s\n", c.name, out.String())
	}
}
