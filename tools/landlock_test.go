//go:build linux && cgo

package tools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hushcli/hush/tools/sandbox"
	"golang.org/x/sys/unix"
)

// The Landlock world, attacked on the real kernel where user namespaces
// are refused: here inside a user namespace whose own limit forbids more
// (no change to the host), and, in landlock_docker_test.go, inside a
// Docker container on the engine's default seccomp profile. Each attack
// plants a canary, reads raw bytes from a sandboxed shell, and runs the
// same script without the sandbox as the control that finds the canary.

// landlockHereEnv marks the test binary run inside a refusing environment.
const landlockHereEnv = "HUSH_LANDLOCK_TEST_HERE"

// landlockHelperEnv makes the test binary an attack helper, run inside the
// sandbox: "connect:PATH" prints what a unix socket at PATH says,
// "tcp:HOST:PORT" what a TCP server says,
// "keyctl:SERIAL" what the kernel key SERIAL holds; "send:HOST:PORT",
// "udp:HOST:PORT" and "tfo:HOST:PORT" send $T over a TCP connection, a
// UDP datagram and a TCP fast-open SYN, "post:URL", "postproxy:URL" and
// "postdirect:URL" POST it over HTTP (landlock_net_test.go).
const landlockHelperEnv = "HUSH_LANDLOCK_HELPER"

func TestMain(m *testing.M) {
	if h := os.Getenv(landlockHelperEnv); h != "" {
		os.Exit(landlockHelper(h))
	}
	os.Exit(m.Run())
}

func landlockHelper(h string) int {
	what, arg, _ := strings.Cut(h, ":")
	switch what {
	case "connect", "tcp":
		network := "unix"
		if what == "tcp" {
			network = "tcp"
		}
		c, err := net.DialTimeout(network, arg, 2*time.Second)
		if err != nil {
			fmt.Println("connect:", err)
			return 1
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		b, _ := io.ReadAll(c)
		os.Stdout.Write(b)
	case "send", "udp", "tfo", "post", "postproxy", "postdirect":
		return landlockSend(what, arg, os.Getenv("T"))
	case "keyctl":
		serial, _ := strconv.Atoi(arg)
		buf := make([]byte, 256)
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, serial, buf, 0)
		if err != nil {
			fmt.Println("keyctl:", err)
			return 1
		}
		os.Stdout.Write(buf[:min(n, len(buf))])
	}
	return 0
}

// TestLandlockWorldWhereUsernsRefused runs TestLandlockWorldHere inside a
// user namespace whose limit forbids another: as root there, and as an
// unprivileged user (the host's nobody, uid 1000 in a second namespace).
func TestLandlockWorldWhereUsernsRefused(t *testing.T) {
	if os.Getenv(landlockHereEnv) != "" || os.Getenv(refusedEnv) != "" {
		t.Skip("running inside the refusing namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare(1) is missing (util-linux): %v", err)
	}
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	run := "/proc/self/fd/3 -test.run='^TestLandlockWorldHere$' -test.v -test.count=1"
	cases := map[string]struct {
		script string
		cred   *syscall.Credential
	}{
		"root": {script: "echo 0 > /proc/sys/user/max_user_namespaces && exec " + run},
		// The limit of the outer namespace is 1: the inner one is that
		// one, and nothing below it may make another.
		"unprivileged": {script: "echo 1 > /proc/sys/user/max_user_namespaces && exec unshare -U --map-user=1000 --map-group=1000 " + run},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if name == "unprivileged" && os.Getuid() == 0 {
				c.cred = &syscall.Credential{Uid: 65534, Gid: 65534}
			}
			var out bytes.Buffer
			cmd := exec.Command(unshare, "-U", "-r", "sh", "-c", c.script)
			cmd.Env = []string{landlockHereEnv + "=1", "PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HOME=/tmp"}
			cmd.Dir = "/"
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.ExtraFiles = []*os.File{exe}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
			err := cmd.Run()
			if err != nil || !strings.Contains(out.String(), "--- PASS: TestLandlockWorldHere") || strings.Contains(out.String(), "--- SKIP: TestLandlockWorldHere") {
				t.Fatalf("%v\n%s", err, out.String())
			}
			t.Logf("inside:\n%s", out.String())
		})
	}
}

// TestLandlockWorldHere is the attack suite, run where the kernel refuses
// user namespaces.
func TestLandlockWorldHere(t *testing.T) {
	if os.Getenv(landlockHereEnv) == "" {
		t.Skip("helper: run by TestLandlockWorldWhereUsernsRefused and TestLandlockWorldInDocker")
	}
	st := sandbox.Status()
	t.Logf("uid %d, Landlock ABI %d, reason: %s", os.Getuid(), st.LandlockABI, st.Reason)
	if st.Namespaces || !st.LandlockOnly {
		t.Fatalf("want the Landlock world here: namespaces=%v landlock=%v reason=%q", st.Namespaces, st.LandlockOnly, st.Reason)
	}
	// As a session makes it (a policy), and from a mask set alone.
	t.Run("policy", func(t *testing.T) {
		landlockAttacks(t, func(w world) *sandbox.Config {
			// hush's executable exists, a regular file of the view
			// outside every directory it grants, as where `hush audit`
			// runs a copy (a directory rule on it made every start fail).
			exe := w.root + "/hush-exe/hush"
			if err := copyExe(exe); err != nil {
				t.Fatal(err)
			}
			p, err := sandbox.NewPolicy(sandbox.PolicyOptions{Dir: w.project, Home: w.home, PathEnv: "/usr/local/bin:/usr/bin:/bin",
				HushDirs: []string{w.data, w.config}, Executable: exe})
			if err != nil {
				t.Fatal(err)
			}
			return &sandbox.Config{Masks: w.masks, Policy: p}
		})
	})
	t.Run("masks", func(t *testing.T) {
		landlockAttacks(t, func(w world) *sandbox.Config { return &sandbox.Config{Masks: w.masks} })
	})
}

// landlockAttacks attacks the Landlock world: a shell in it must not read
// the vault, the home outside the view, another tool's environ or hush's
// memory, nor write outside the project and caches; the project, the
// private home and a granted secret work (positive controls), and each
// attack finds its canary without the sandbox (the controls).
func landlockAttacks(t *testing.T, config func(world) *sandbox.Config) {
	w := newWorld(t, attacker{})
	sb := config(w)
	shell := "/bin/sh"
	env := Env{{Name: "PATH", Value: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}, {Name: "HOME", Value: w.home}}
	run := func(script string, sb *sandbox.Config, extra ...Var) string {
		t.Helper()
		var out bytes.Buffer
		spec := Spec{Path: shell, Args: []string{"-c", script}, Dir: w.project, Env: append(append(Env{}, env...), extra...),
			Stdout: &out, Stderr: &out, Sandbox: sb, KillGrace: time.Second}
		if sb == nil {
			cmd := exec.Command(shell, spec.Args...)
			cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = w.project, spec.Env.Environ(), &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			_ = cmd.Run()
			return out.String()
		}
		cmd, err := Command(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		_ = cmd.Run()
		return out.String()
	}
	// attack: the sandboxed script must not print the canary c; the
	// same script without the sandbox must.
	attack := func(name, script, c string) {
		t.Helper()
		got := run(script, sb)
		if leaks(got, c) {
			t.Errorf("%s: the Landlock world leaked the canary:\n%s", name, got)
		}
		if ctl := run(script, nil); !leaks(ctl, c) {
			t.Errorf("%s: control: without the sandbox the attack did not find the canary, so it proves nothing:\n%s", name, ctl)
		}
	}

	attack("vault file", "cat "+w.data+"/vault.env", w.canary)
	attack("config dir", "cat "+w.config+"/config.toml", w.canary)
	attack("home outside the view", "cat "+w.home+"/.aws/credentials "+w.home+"/.git-credentials "+w.home+"/.ssh/id_ed25519", w.canary)
	attack("home listing", "ls -a "+w.home+"; cat "+w.home+"/.ssh/* ", w.canary)

	// Another tool's environment: a sandboxed tool holding a granted
	// secret, read through /proc by a second one.
	other := canary(t)
	var otherOut lockedBuffer
	bg, err := Command(context.Background(), Spec{Path: shell, Args: []string{"-c", "echo started; exec sleep 30"}, Dir: w.project,
		Env: append(append(Env{}, env...), Var{Name: "OTHER_TOOL_TOKEN", Value: other}), Stdout: &otherOut, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	if err := bg.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = KillGroup(bg.Process.Pid, syscall.SIGKILL); _ = bg.Wait() }()
	for i := 0; i < 200 && !strings.Contains(otherOut.String(), "started"); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // exec'd sleep
	pid := strconv.Itoa(bg.Process.Pid)
	attack("another tool's environ", "cat /proc/"+pid+"/environ; od -c /proc/"+pid+"/environ", other)

	// hush's own memory: a canary at a known address of this process.
	mem := canary(t)
	buf := make([]byte, 128)
	off := (64 - uintptr(unsafe.Pointer(&buf[0]))%64) % 64
	copy(buf[off:], mem)
	addr := uintptr(unsafe.Pointer(&buf[off]))
	me := strconv.Itoa(os.Getpid())
	attack("hush's memory", fmt.Sprintf("dd if=/proc/%s/mem bs=64 skip=%d count=1 2>&1", me, addr/64), mem)
	attack("hush's environ", "cat /proc/"+me+"/environ", "PATH=")
	defer func() { _ = buf[0] }()

	// Signals to hush (Landlock's scope, ABI 6).
	if sandbox.Status().LandlockABI >= 6 {
		script := "kill -0 " + me + " && echo SIGNALLED"
		if got := run(script, sb); strings.Contains(got, "SIGNALLED") {
			t.Errorf("the tool signalled hush: %q", got)
		}
		if ctl := run(script, nil); !strings.Contains(ctl, "SIGNALLED") {
			t.Errorf("control: could not signal hush unsandboxed: %q", ctl)
		}
	}

	// Writes outside the project, the caches and the private dirs.
	for _, target := range []string{w.home + "/planted", w.config + "/planted", "/tmp/hush-landlock-planted-" + me, w.root + "/planted"} {
		os.Remove(target)
		run("echo x > "+target, sb)
		if _, err := os.Lstat(target); err == nil {
			t.Errorf("the tool wrote %s, outside the project", target)
		}
		run("echo x > "+target, nil)
		if _, err := os.Lstat(target); err != nil {
			t.Errorf("control: an unsandboxed write of %s failed, so the check proves nothing", target)
		}
		os.Remove(target)
	}

	// A planted unix socket (a session bus, an X server, a ControlMaster),
	// through the test binary copied into the project as the client.
	helper := w.project + "/helper.test"
	if err := copyExe(helper); err != nil {
		t.Fatal(err)
	}
	connect := helper + " 2>&1"
	got := run(connect, sb, Var{Name: landlockHelperEnv, Value: "connect:" + w.bus})
	if leaks(got, w.canary) {
		t.Errorf("the tool reached the planted socket: %q", got)
	}
	if ctl := run(connect, nil, Var{Name: landlockHelperEnv, Value: "connect:" + w.bus}); !leaks(ctl, w.canary) {
		t.Errorf("control: the planted socket did not answer unsandboxed: %q", ctl)
	}

	// The network off ([tools.bash] network = "none"): no TCP, not even
	// to loopback; with the network on the same connection works.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tcpCanary := canary(t)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(tcpCanary))
			c.Close()
		}
	}()
	tenv := Var{Name: landlockHelperEnv, Value: "tcp:" + l.Addr().String()}
	if got := run(connect, func() *sandbox.Config { c := *sb; c.NoNetwork = true; return &c }(), tenv); leaks(got, tcpCanary) {
		t.Errorf("a tool whose network is off connected over TCP: %q", got)
	}
	if got := run(connect, sb, tenv); !leaks(got, tcpCanary) {
		t.Errorf("positive control: a tool whose network is on could not connect: %q", got)
	}

	// A kernel key in hush's session keyring, read by its serial.
	key := canary(t)
	if serial, err := unix.AddKey("user", "hush-landlock-test", []byte(key), unix.KEY_SPEC_PROCESS_KEYRING); err != nil {
		t.Logf("no kernel key to plant here (%v): the keyring attack is not run", err)
	} else {
		defer unix.KeyctlInt(unix.KEYCTL_UNLINK, serial, unix.KEY_SPEC_PROCESS_KEYRING, 0, 0)
		unix.KeyctlSetperm(serial, 0x3f3f3f3f)
		kenv := Var{Name: landlockHelperEnv, Value: "keyctl:" + strconv.Itoa(serial)}
		if got := run(connect, sb, kenv); leaks(got, key) {
			t.Errorf("the tool read a kernel key by its serial: %q", got)
		}
		if ctl := run(connect, nil, kenv); !leaks(ctl, key) {
			t.Errorf("control: the key was not readable unsandboxed: %q", ctl)
		}
	}

	// Positive controls: the project reads and writes, the private home
	// and tmp write, and a granted secret arrives.
	granted := canary(t)
	got = run(`cat README && echo made > made.txt && cat made.txt && echo h > "$HOME/h" && cat "$HOME/h" && echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && echo "$GRANTED_TOKEN"`,
		sb, Var{Name: "GRANTED_TOKEN", Value: granted})
	if !strings.Contains(got, "VISIBLE") || !strings.Contains(got, "made") || !strings.Contains(got, "h\nt\n") || !strings.Contains(got, granted) {
		t.Errorf("positive control: the project, the private home and tmp or the granted secret did not work in the Landlock world:\n%s", got)
	}
	if got := run(`echo "$HOME $TMPDIR"`, sb); strings.Contains(got, w.home+" ") {
		t.Errorf("HOME is the real home in the Landlock world: %q", got)
	}
	landlockProxyAttacks(t, w, sb, env, helper)

	// What the fallback cannot give, shown as such: the project's .env
	// is readable (docs/sandbox.md; `hush audit` fails this row).
	if got := run("cat .env", sb); !leaks(got, w.canary) {
		t.Logf("the project's .env was not readable: %q", got)
	}
}

// copyExe copies this test binary to dst, executable.
func copyExe(dst string) error {
	b, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}
