//go:build linux

package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/hushcli/hush/tools/sandbox"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// These tests attack the sandbox as a hostile command would, on the real
// kernel: each plants a canary, attacks it from a sandboxed bash, checks the
// raw bytes, and runs the same attack unsandboxed as the control that
// proves the attack would find the canary. They run three ways: as the
// test's own user (root on CI), as root starting the tool as nobody
// (Spec.Credential), and as a real unprivileged hush (the test binary
// re-run as nobody).

const unprivEnv = "HUSH_SANDBOX_TEST_UNPRIVILEGED"

func canary(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "CANARY" + hex.EncodeToString(b)
}

// leaks reports whether out holds c in any form a dump prints it: as is,
// with whitespace removed (od -c), or as hex (xxd -p).
func leaks(out, c string) bool {
	squeezed := strings.Join(strings.Fields(out), "")
	h := hex.EncodeToString([]byte(c))
	return strings.Contains(out, c) || strings.Contains(squeezed, c) || strings.Contains(squeezed, h)
}

// attacker runs scripts as one user.
type attacker struct {
	cred *syscall.Credential // nil: the test's own user
}

func (a attacker) spec(dir string, env Env, script string, sb *sandbox.Config, out io.Writer) Spec {
	base := Env{{Name: "PATH", Value: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}, {Name: "HOME", Value: dir}}
	return Spec{Path: "bash", Args: []string{"-c", script}, Dir: dir, Env: append(base, env...),
		Stdout: out, Stderr: out, Credential: a.cred, Sandbox: sb, KillGrace: time.Second}
}

func (a attacker) run(t *testing.T, dir string, env Env, script string, sb *sandbox.Config) string {
	t.Helper()
	var out bytes.Buffer
	if sb == nil {
		_ = a.bare(dir, env, script, &out).Run()
		return out.String()
	}
	cmd, err := Command(context.Background(), a.spec(dir, env, script, sb, &out))
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Run() // the attacks fail by design; their output is what counts
	return out.String()
}

// bare is the control: the same child as a plain exec in a session of its
// own, with none of the spawn layer's protections (no sandbox, no reaper).
func (a attacker) bare(dir string, env Env, script string, out io.Writer) *exec.Cmd {
	spec := a.spec(dir, env, script, nil, out)
	cmd := exec.Command("/usr/bin/bash", spec.Args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, spec.Env.Environ(), out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: a.cred}
	return cmd
}

// world is a home with hush's dirs, credential stores and a project, owned
// by the attacker so that the unsandboxed control can read everything.
type world struct {
	root, home, data, config, project string
	canary                            string
	masks                             *sandbox.MaskSet
	bus                               string
	busHits                           *atomic.Int32
}

// sandboxAttackers fails the test unless this machine can sandbox (it must
// support it), and returns who attacks: hush's own user and, as root, a
// tool run as nobody.
func sandboxAttackers(t *testing.T) map[string]attacker {
	t.Helper()
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	users := map[string]attacker{"self": {}}
	if os.Getuid() == 0 {
		users["root-as-nobody"] = attacker{cred: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	return users
}

// serveCanary listens on the unix socket at path until the test ends and
// answers each connection with say, counted in hits when hits is not nil.
// With a knock, only a client that first sends it (in one write) counts
// and is answered; any other is closed at once, so a client of another
// test that finds the socket is neither counted nor kept waiting.
func serveCanary(t testing.TB, path, say, knock string, hits *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if knock != "" {
					c.SetReadDeadline(time.Now().Add(5 * time.Second))
					got := make([]byte, 64)
					if n, _ := c.Read(got); string(got[:n]) != knock {
						return
					}
				}
				if hits != nil {
					hits.Add(1)
				}
				c.Write([]byte(say))
			}()
		}
	}()
}

func newWorld(t testing.TB, a attacker) world {
	t.Helper()
	root, err := os.MkdirTemp("", "hush-sandbox-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	root, _ = filepath.EvalSymlinks(root)
	c := canary(t)
	w := world{root: root, home: root + "/home", data: root + "/home/.local/share/hush",
		config: root + "/home/.config/hush", project: root + "/home/proj", canary: c, bus: root + "/run/bus"}
	files := map[string]string{
		w.data + "/vault.env":                "API_TOKEN=" + c,
		w.data + "/audit.jsonl":              c,
		w.config + "/config.toml":            "# " + c,
		w.config + "/trusted-projects.json":  "[]",
		w.home + "/.aws/credentials":         "aws_secret_access_key=" + c,
		w.home + "/.git-credentials":         "https://u:" + c + "@example.com",
		w.home + "/.ssh/id_ed25519":          c,
		w.project + "/.env":                  "A=" + c,
		w.project + "/.env.local":            "B=" + c,
		w.project + "/sub/.env":              "C=" + c,
		w.project + "/.envrc":                "export D=" + c,
		w.project + "/README":                "VISIBLE",
		w.home + "/.ssh/id_ed25519.pub":      "PUBLIC",
		w.root + "/run/keyring/control-file": c,
		w.home + "/go/bin/hush":              "#!/bin/sh\n", // hush's executable, read-only to tools
	}
	for p, v := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w.busHits = new(atomic.Int32)
	serveCanary(t, w.bus, w.canary, "", w.busHits)
	os.Chmod(w.bus, 0o777)
	if a.cred != nil {
		filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error {
			return os.Lchown(p, int(a.cred.Uid), int(a.cred.Gid))
		})
	}
	w.masks, err = sandbox.NewMaskSet(sandbox.MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config,
		RuntimeDir: root + "/run", BusAddress: "unix:path=" + w.bus, Project: w.project, Executable: w.home + "/go/bin/hush"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w world) sandbox() *sandbox.Config { return &sandbox.Config{Masks: w.masks, Required: true} }

func TestSandboxAttacks(t *testing.T) {
	users := sandboxAttackers(t)
	for name, a := range users {
		t.Run(name, func(t *testing.T) { attackSuite(t, a) })
	}
	if os.Getuid() == 0 && os.Getenv(unprivEnv) == "" {
		t.Run("unprivileged-hush", runSuiteAsNobody)
	}
}

// runSuiteAsNobody re-runs this test binary as nobody, which then starts
// its sandboxes as an unprivileged user would.
func runSuiteAsNobody(t *testing.T) {
	var out bytes.Buffer
	cmd := exec.Command("/proc/self/exe", "-test.run=^(TestSandboxAttacks|TestSandboxHidesTheUsersTerminals)$", "-test.v", "-test.count=1")
	cmd.Env = []string{unprivEnv + "=1", "PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HOME=/tmp"}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	err := cmd.Run()
	if err != nil || !strings.Contains(out.String(), "--- PASS: TestSandboxAttacks") ||
		!strings.Contains(out.String(), "--- PASS: TestSandboxHidesTheUsersTerminals") || strings.Contains(out.String(), "--- SKIP") {
		t.Fatalf("as nobody: %v\n%s", err, out.String())
	}
	t.Logf("as nobody:\n%s", out.String())
}

func attackSuite(t *testing.T, a attacker) {
	t.Run("key-agents", func(t *testing.T) { agentSuite(t, a) })
	t.Run("real-key-agents", func(t *testing.T) { realAgentSuite(t, a) })
	t.Run("storage-dotenv-credentials", func(t *testing.T) {
		w := newWorld(t, a)
		targets := []string{w.data + "/vault.env", w.data + "/audit.jsonl", w.config + "/config.toml",
			w.home + "/.aws/credentials", w.home + "/.git-credentials", w.home + "/.ssh/id_ed25519",
			w.project + "/.env", w.project + "/.env.local", w.project + "/sub/.env", w.project + "/.envrc",
			w.root + "/run/keyring/control-file"}
		script := `for f in ` + strings.Join(targets, " ") + `; do cat "$f"; xxd "$f"; od -c "$f"; base64 -w0 "$f"; done 2>&1
ln -s ` + w.data + `/vault.env link; cat link; cat ` + w.home + `/.local/share/hush/../hush/vault.env
cat ` + w.project + `/README`
		for _, sb := range []*sandbox.Config{nil, w.sandbox()} {
			out := a.run(t, w.project, nil, script, sb)
			if sb == nil {
				if !leaks(out, w.canary) {
					t.Fatalf("control: the unsandboxed attack did not find the canary, so it proves nothing:\n%s", out)
				}
				os.Remove(w.project + "/link")
				continue
			}
			if leaks(out, w.canary) {
				t.Errorf("a sandboxed tool read a masked file:\n%s", out)
			}
			if !strings.Contains(out, "VISIBLE") {
				t.Errorf("positive control: the project's README is not readable in the sandbox:\n%s", out)
			}
		}
	})

	t.Run("config-write", func(t *testing.T) {
		w := newWorld(t, a)
		script := `echo 'gate = "vault.read:*"' >> ` + w.config + `/config.toml; echo '["/"]' > ` + w.config + `/trusted-projects.json
echo x > ` + w.data + `/new-file; echo x > ` + w.project + `/.env; chmod 666 ` + w.project + `/.env; echo wrote-project > ` + w.project + `/ok`
		a.run(t, w.project, nil, script, w.sandbox())
		for p, want := range map[string]string{w.config + "/config.toml": "# " + w.canary, w.config + "/trusted-projects.json": "[]", w.project + "/.env": "A=" + w.canary} {
			if got, _ := os.ReadFile(p); string(got) != want {
				t.Errorf("%s was changed from the sandbox: %q", p, got)
			}
		}
		if _, err := os.Stat(w.data + "/new-file"); err == nil {
			t.Error("a sandboxed tool created a file in hush's data dir")
		}
		if got, _ := os.ReadFile(w.project + "/ok"); string(got) != "wrote-project\n" {
			t.Errorf("positive control: the project is not writable from the sandbox: %q", got)
		}
	})

	t.Run("keyring-bus", func(t *testing.T) {
		w := newWorld(t, a)
		script := `python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(100))' ` + w.bus + ` 2>&1`
		out := a.run(t, w.project, nil, script, w.sandbox())
		if leaks(out, w.canary) || w.busHits.Load() != 0 {
			t.Errorf("a sandboxed tool reached the session bus (%d connections):\n%s", w.busHits.Load(), out)
		}
		out = a.run(t, w.project, nil, script, nil)
		if !leaks(out, w.canary) {
			t.Fatalf("control: the unsandboxed tool did not reach the bus:\n%s", out)
		}
	})

	t.Run("siblings", func(t *testing.T) {
		w := newWorld(t, a)
		script := `for p in /proc/[0-9]*; do xxd $p/environ; tr '\0' ' ' < $p/cmdline; done 2>&1; ps eww -e 2>&1; echo "ppid=$PPID"`
		// Sandboxed, then the control: a sibling and an attacker both
		// unsandboxed, as before the sandbox.
		for _, sb := range []*sandbox.Config{w.sandbox(), nil} {
			sibOut := new(lockedBuffer)
			sibEnv := Env{{Name: "API_TOKEN", Value: w.canary, Secret: true}}
			sibScript := `printf '%s' "$API_TOKEN" | xxd -p; exec sleep 30`
			var sib interface {
				Start() error
				Wait() error
			}
			var sibPid func() int
			if sb == nil {
				c := a.bare(w.project, sibEnv, sibScript, sibOut)
				sib, sibPid = c, func() int { return c.Process.Pid }
			} else {
				c, err := Command(context.Background(), a.spec(w.project, sibEnv, sibScript, sb, sibOut))
				if err != nil {
					t.Fatal(err)
				}
				sib, sibPid = c, func() int { return c.Process.Pid }
			}
			if err := sib.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(sibOut.String(), "\n") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			// Positive control: the granted secret arrived, exactly.
			if got := strings.TrimSpace(sibOut.String()); got != hex.EncodeToString([]byte(w.canary)) {
				t.Errorf("the granted secret did not arrive in its own tool: %q", got)
			}
			out := a.run(t, w.project, nil, script, sb)
			_ = KillGroup(sibPid(), syscall.SIGKILL)
			_ = sib.Wait()
			if sb == nil {
				if !leaks(out, w.canary) {
					t.Fatalf("control: the unsandboxed attack did not find the sibling's secret:\n%s", out)
				}
				continue
			}
			if leaks(out, w.canary) {
				t.Errorf("an ungranted sandboxed call read a sibling's secret:\n%s", out)
			}
			// The tool is its PID namespace's init (its parent is outside),
			// or, started as another user, the child of one.
			if !strings.Contains(out, "ppid=0\n") && !strings.Contains(out, "ppid=1\n") {
				t.Errorf("the tool's parent is visible to it:\n%s", out)
			}
		}
	})

	t.Run("session-keyring", func(t *testing.T) {
		// The kernel keyring of the session hush runs in (a login
		// session's holds Kerberos tickets and other tools' keys): a
		// child inherits it, and reads every key its possessor may.
		//
		// A session keyring belongs to a thread's credentials, not the
		// process's: where the test runs without one (no login session),
		// adding a key makes one for the adding thread only, and a child
		// forked from another thread (a goroutine moves between threads)
		// had none of it, so the control failed now and then under load.
		// The key is added, and both children forked, on one locked thread
		// that first joins a fresh session keyring of its own (the thread
		// ends with this test, and the keyring with it).
		runtime.LockOSThread() // no unlock: the thread exits with this subtest
		// KEYCTL_JOIN_SESSION_KEYRING with no name (NULL, which
		// unix.KeyctlJoinSessionKeyring cannot pass) makes an anonymous one.
		if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
			t.Fatalf("join a fresh session keyring: %v", errno)
		}
		w := newWorld(t, a)
		name := "hush-test-" + w.canary[6:18]
		id, err := unix.AddKey("user", name, []byte(w.canary), unix.KEY_SPEC_SESSION_KEYRING)
		if err != nil {
			t.Fatalf("add a key to this session's keyring: %v", err)
		}
		defer unix.KeyctlInt(unix.KEYCTL_REVOKE, id, 0, 0, 0)
		script := `python3 - ` + name + ` ` + strconv.Itoa(id) + ` <<'EOF' 2>&1
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
def read(kid):
    buf = ctypes.create_string_buffer(256)
    n = libc.syscall(250, 11, kid, buf, 256)  # KEYCTL_READ
    return buf.raw[:n].hex() if n > 0 else "err%d" % ctypes.get_errno()
for ring in (-3, -4, -5):  # session, user, user-session
    kid = libc.syscall(250, 10, ring, b"user", sys.argv[1].encode(), 0)  # KEYCTL_SEARCH
    print("search", ring, read(kid) if kid > 0 else "none")
print("by-id", read(int(sys.argv[2])))
own = libc.syscall(248, b"user", b"own", b"OWN-OK", 6, -3)  # add_key to its own session keyring
print("own", bytes.fromhex(read(own)).decode() if own > 0 else "err%d" % ctypes.get_errno())
EOF`
		if out := a.run(t, w.project, nil, script, nil); !leaks(out, w.canary) {
			t.Fatalf("control: the unsandboxed child did not read the session's key, so this proves nothing:\n%s", out)
		}
		out := a.run(t, w.project, nil, script, w.sandbox())
		if leaks(out, w.canary) {
			t.Errorf("a sandboxed tool read a key from hush's session keyring:\n%s", out)
		}
		// The sandbox refuses the key calls themselves (EPERM, errno 1, from
		// its seccomp filter): the script ran and asked, and was refused.
		if !strings.Contains(out, "own err1") || !strings.Contains(out, "by-id err1") {
			t.Errorf("the sandboxed tool's key calls were not refused with EPERM:\n%s", out)
		}
	})

	t.Run("memory", func(t *testing.T) {
		w := newWorld(t, a)
		secret := []byte(w.canary) // in this process's memory, as hush holds its vault
		addr := uintptr(unsafe.Pointer(&secret[0]))
		script := fmt.Sprintf(`[ -e /proc/%[1]d ] && echo VISIBLE
cat /proc/%[1]d/environ 2>&1 | xxd | head -3
python3 - <<'EOF' 2>&1
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class iov(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(%[3]d)
local = iov(ctypes.cast(buf, ctypes.c_void_p), %[3]d)
remote = iov(%[2]d, %[3]d)
n = libc.process_vm_readv(%[1]d, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
print("vm_readv", n, os.strerror(ctypes.get_errno()), buf.raw)
try:
    f = open("/proc/%[1]d/mem", "rb"); f.seek(%[2]d); print("mem", f.read(%[3]d))
except Exception as e:
    print("mem", e)
EOF`, os.Getpid(), addr, len(secret))
		out := a.run(t, w.project, nil, script, w.sandbox())
		if leaks(out, w.canary) || strings.Contains(out, "VISIBLE") {
			t.Errorf("a sandboxed tool saw or read hush's memory:\n%s", out)
		}
		out = a.run(t, w.project, nil, script, nil)
		if !strings.Contains(out, "VISIBLE") || (os.Getuid() == 0 && a.cred == nil && !leaks(out, w.canary)) {
			t.Fatalf("control: the unsandboxed attack did not reach this process:\n%s", out)
		}
		_ = secret[0]
	})

	t.Run("linger", func(t *testing.T) {
		w := newWorld(t, a)
		for i, sb := range []*sandbox.Config{w.sandbox(), nil} {
			mark := fmt.Sprintf("31%d.%d", i, time.Now().UnixNano()%100000)
			script := `setsid sleep ` + mark + ` </dev/null >/dev/null 2>&1 & echo started`
			if sb == nil {
				// The control is a bare child, which nothing reaps (an
				// unsandboxed call has hush's reaper, reaper_linux.go).
				_ = a.bare(w.project, nil, script, new(bytes.Buffer)).Run()
			} else {
				a.run(t, w.project, nil, script, sb)
			}
			if sb == nil {
				waitForSome(mark, 2*time.Second)
			}
			pids := waitForNone(mark, 2*time.Second)
			if sb != nil && len(pids) > 0 {
				t.Errorf("a detached child outlived its sandboxed call: %v", pids)
			}
			if sb == nil {
				if len(pids) == 0 {
					t.Fatal("control: the unsandboxed detached child did not outlive the call")
				}
				for _, p := range pids {
					syscall.Kill(p, syscall.SIGKILL)
				}
			}
		}
		// Cancelled mid-call: the namespace dies with the call.
		mark := fmt.Sprintf("329.%d", time.Now().UnixNano()%100000)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		var out bytes.Buffer
		cmd, err := Command(ctx, a.spec(w.project, nil, `setsid sleep `+mark+` </dev/null >/dev/null 2>&1 & sleep 30`, w.sandbox(), &out))
		if err != nil {
			t.Fatal(err)
		}
		_ = cmd.Run()
		if pids := waitForNone(mark, 3*time.Second); len(pids) > 0 {
			t.Errorf("a detached child outlived its cancelled call: %v", pids)
		}
	})

	if os.Getuid() == 0 && a.cred == nil {
		t.Run("root-cannot-unmask", func(t *testing.T) {
			w := newWorld(t, a)
			script := `umount -l ` + w.data + ` 2>&1; umount ` + w.project + `/.env 2>&1; mount -o remount,rw ` + w.project + `/.env 2>&1
unshare -Urm sh -c 'umount -l ` + w.data + `; cat ` + w.data + `/vault.env' 2>&1
umount -l /proc 2>&1; ls /proc | grep -c '^[0-9]'
cat ` + w.data + `/vault.env ` + w.project + `/.env; id -u`
			out := a.run(t, w.project, nil, script, w.sandbox())
			if leaks(out, w.canary) {
				t.Errorf("root in the sandbox unmasked a file:\n%s", out)
			}
			if !strings.HasSuffix(out, "0\n") {
				t.Errorf("positive control: the tool is not root:\n%s", out)
			}
		})
		t.Run("root-cannot-read-a-disk", func(t *testing.T) {
			// A disk holding the vault file, as a loop device over a file
			// holding the canary: host root reads it raw.
			w := newWorld(t, a)
			img := w.root + "/disk.img"
			if err := os.WriteFile(img, bytes.Repeat([]byte(w.canary+"\n"), 1024), 0o600); err != nil {
				t.Fatal(err)
			}
			losetup, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
			if err != nil {
				t.Fatalf("losetup: %v %s", err, losetup)
			}
			disk := strings.TrimSpace(string(losetup))
			defer exec.Command("losetup", "-d", disk).Run()
			script := `head -c 64 ` + disk + ` 2>&1; echo
mknod ./blk b $(stat -c '%t %T' ` + disk + ` | while read ma mi; do echo $((16#$ma)) $((16#$mi)); done) 2>&1 && head -c 64 ./blk 2>&1; echo
printf 'null:'; echo x > /dev/null && echo ok; printf 'zero:'; head -c 4 /dev/zero | xxd -p; python3 -c 'import os; m, s = os.openpty(); print("pty:ok")'`
			// With hush's template (hush_sb_template); the /dev built in
			// the sandbox where the kernel refuses the template is tested
			// in package sandbox (TestRootDevBuiltInTheSandbox).
			out := a.run(t, w.project, nil, script, w.sandbox())
			if leaks(out, w.canary) {
				t.Errorf("root in the sandbox read the disk %s raw:\n%s", disk, out)
			}
			for _, want := range []string{"null:ok", "zero:00000000", "pty:ok"} {
				if !strings.Contains(out, want) {
					t.Errorf("positive control: %q missing from the sandbox's /dev:\n%s", want, out)
				}
			}
			os.Remove(w.project + "/blk")
			out = a.run(t, w.project, nil, script, nil)
			if !leaks(out, w.canary) {
				t.Fatalf("control: unsandboxed root did not read %s:\n%s", disk, out)
			}
			os.Remove(w.project + "/blk")
		})
		t.Run("root-cannot-change-the-next-dev", func(t *testing.T) {
			// Every root sandbox's /dev comes from one read-only template
			// (hush_sb_template): a tool that could change it would hand
			// the next call a /dev/null of its making, and its /dev/shm
			// would carry a canary to the next.
			w := newWorld(t, a)
			first := `rm -f /dev/null 2>&1; printf '` + w.canary + `' > /dev/null-planted 2>&1; ln -sf /proc/self/environ /dev/zero 2>&1
chmod 777 /dev 2>&1; mkdir /dev/pts/x 2>&1; printf '` + w.canary + `' > /dev/shm/left; printf 'shm:'; cat /dev/shm/left; echo`
			out := a.run(t, w.project, nil, first, w.sandbox())
			if !strings.Contains(out, "shm:"+w.canary) {
				t.Fatalf("positive control: the tool could not write its own /dev/shm:\n%s", out)
			}
			second := `cat /dev/null-planted /dev/shm/left 2>/dev/null; stat -c '%n %F %t:%T %a' /dev/null /dev/zero /dev; head -c 4 /dev/zero | xxd -p`
			out = a.run(t, w.project, nil, second, w.sandbox())
			if leaks(out, w.canary) {
				t.Errorf("a root tool left something in the next call's /dev:\n%s", out)
			}
			for _, want := range []string{"/dev/null character special file 1:3 666", "/dev/zero character special file 1:5 666", "/dev directory 0:0 755", "\n00000000\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("the next call's /dev is not as hush made it: %q missing:\n%s", want, out)
				}
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer a test may read while a child writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitForSome waits up to d for a process whose command line holds mark
// and returns those it found (none: d passed). A process in the middle of
// an exec reads as an empty command line for a moment (the kernel sets
// the new one up after the switch to the new image), so one scan that
// missed a process proves nothing; only the scans over time do.
func waitForSome(mark string, d time.Duration) []int {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if pids := findMark(mark); len(pids) > 0 || time.Now().After(deadline) {
			return pids
		}
	}
}

func findMark(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(b, []byte(mark)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitForNone waits up to d for no process whose command line holds mark,
// and returns those left. None counts only when two scans 20 ms apart
// both find none: one scan can miss a process that is mid-exec.
func waitForNone(mark string, d time.Duration) []int {
	deadline := time.Now().Add(d)
	empty := 0
	for {
		pids := findMark(mark)
		if len(pids) == 0 {
			empty++
		} else {
			empty = 0
		}
		if empty == 2 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const parentEnv = "HUSH_SANDBOX_TEST_PARENT"

// TestSandboxParentHelper is the hush of TestSandboxDiesWithHush: it starts
// one call that leaves a detached child, says so, and waits to be killed.
func TestSandboxParentHelper(t *testing.T) {
	mark := os.Getenv(parentEnv)
	if mark == "" {
		t.Skip("helper process only")
	}
	dir := t.TempDir()
	script := `setsid sleep ` + mark + ` </dev/null >/dev/null 2>&1 & exec sleep ` + mark + `1`
	if os.Getenv(parentEnv+"_BOXED") != "" {
		cmd, err := Command(context.Background(), attacker{}.spec(dir, nil, script, &sandbox.Config{Required: true}, new(bytes.Buffer)))
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	} else if os.Getenv(parentEnv+"_CONTROL") != "" {
		// The control: a bare child, which nothing reaps.
		if err := (attacker{}).bare(dir, nil, script, new(bytes.Buffer)).Start(); err != nil {
			t.Fatal(err)
		}
	} else {
		// Unsandboxed through the spawn layer: under hush's reaper.
		cmd, err := Command(context.Background(), attacker{}.spec(dir, nil, script, nil, new(bytes.Buffer)))
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
}

// TestSandboxDiesWithHush: when hush is SIGKILLed mid-call, everything in
// the call's namespace dies with it, a detached child too; unsandboxed, the
// reaper takes the detached child down as well; with nothing to reap (a
// child meant to outlive hush) it survives (the control).
func TestSandboxDiesWithHush(t *testing.T) {
	if !sandbox.Status().Namespaces {
		t.Fatalf("the sandbox is unavailable: %s", sandbox.Status().Reason)
	}
	// boxed: in the sandbox; reaped: without it, under hush's reaper
	// (reaper_linux.go); control: a child meant to outlive hush.
	for i, mode := range []string{"boxed", "reaped", "control"} {
		boxed := mode == "boxed"
		mark := fmt.Sprintf("33%d.%d", i, time.Now().UnixNano()%100000)
		helper := exec.Command("/proc/self/exe", "-test.run=^TestSandboxParentHelper$")
		// The helper is killed, so its own t.TempDir is never removed: it
		// makes it in one of this test's, which is.
		helper.Env = []string{parentEnv + "=" + mark, "PATH=/usr/bin:/bin", "TMPDIR=" + t.TempDir()}
		if boxed {
			helper.Env = append(helper.Env, parentEnv+"_BOXED=1")
		}
		if mode == "control" {
			helper.Env = append(helper.Env, parentEnv+"_CONTROL=1")
		}
		out, err := helper.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
			t.Fatalf("helper: %q %v", buf, err)
		}
		// The detached sleep's own command line: "sleep\x00<mark>\x00".
		if len(waitForSome(mark+"\x00", 3*time.Second)) == 0 {
			t.Fatalf("boxed=%v: the detached child did not start: %v", boxed, findMark(mark))
		}
		_ = helper.Process.Kill()
		_ = helper.Wait()
		left := waitForNone(mark, 3*time.Second)
		if mode != "control" && len(left) > 0 {
			t.Errorf("%s: processes of a call outlived a killed hush: %v", mode, left)
		}
		if mode == "control" {
			if len(left) == 0 {
				t.Error("control: the unsandboxed detached child did not outlive a killed hush")
			}
			for _, p := range left {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	}
}

const refusedEnv = "HUSH_SANDBOX_TEST_REFUSED"

// TestSandboxRefusalNamesTheSetting runs this test binary where the kernel
// really refuses user namespaces (user.max_user_namespaces = 0, set inside
// a user namespace of its own) and checks what the sandbox says and does
// there (TestSandboxRefusedHere).
func TestSandboxRefusalNamesTheSetting(t *testing.T) {
	if os.Getenv(refusedEnv) != "" {
		t.Skip("running inside the refusing namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare(1) is missing (util-linux): %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(unshare, "-U", "-r", "sh", "-c",
		`echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -test.run='^TestSandboxRefusedHere$' -test.v -test.count=1`, exe)
	cmd.Env = []string{refusedEnv + "=1", "PATH=/usr/bin:/bin", "TMPDIR=/tmp"}
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "--- PASS: TestSandboxRefusedHere") {
		t.Fatalf("%v\n%s", err, out.String())
	}
}

func TestSandboxRefusedHere(t *testing.T) {
	if os.Getenv(refusedEnv) == "" {
		t.Skip("helper: run by TestSandboxRefusalNamesTheSetting")
	}
	st := sandbox.Status()
	if st.Namespaces {
		t.Fatal("the sandbox says it works where the kernel refuses user namespaces")
	}
	if want := "host tools run in the Landlock sandbox, not in namespaces: user namespaces are off (sysctl user.max_user_namespaces = 0)"; st.Reason != want {
		t.Errorf("reason %q, want %q", st.Reason, want)
	}
	// The Landlock world (this kernel has ABI 6 or later): what it gives
	// is on; what it cannot give is off, saying what is missing and the
	// reason.
	if !st.LandlockOnly {
		t.Fatalf("no Landlock world on a kernel with Landlock ABI %d", st.LandlockABI)
	}
	for _, p := range st.Protections {
		given := p.Name != sandbox.ProtectPID && p.Name != sandbox.ProtectMounts && p.Name != sandbox.ProtectUser && p.Name != sandbox.ProtectLifetime
		if p.On != given || (!given && !strings.HasSuffix(p.Why, "("+st.Reason+")")) {
			t.Errorf("protection %s: on=%v why=%q", p.Name, p.On, p.Why)
		}
	}
	dir := t.TempDir()
	_, err := Command(context.Background(), attacker{}.spec(dir, nil, "true", &sandbox.Config{Required: true}, new(bytes.Buffer)))
	if !errors.Is(err, sandbox.ErrRefused) || !strings.Contains(err.Error(), "user.max_user_namespaces = 0") {
		t.Errorf("required: err = %v, want sandbox.ErrRefused naming the setting", err)
	}
	// Not required: the tool runs in the Landlock world, whose scope
	// keeps it from signalling this process; unsandboxed it can (the
	// control).
	script := fmt.Sprintf("echo ran; kill -0 %d && echo signalled", os.Getpid())
	out := attacker{}.run(t, dir, nil, script, &sandbox.Config{})
	if !strings.HasPrefix(out, "ran\n") {
		t.Errorf("an unrequired sandbox the kernel refuses kept the tool from running: %q", out)
	}
	if strings.Contains(out, "signalled") {
		t.Errorf("under the Landlock scope the tool signalled hush: %q", out)
	}
	if out := (attacker{}).run(t, dir, nil, script, nil); !strings.Contains(out, "signalled") {
		t.Errorf("control: an unsandboxed tool could not signal this process: %q", out)
	}
}

// TestSandboxHidesTheUsersTerminals: the terminal hush runs in (here a pty
// this test opens) is not reachable from a sandboxed tool, which gets a
// devpts of its own; a bare child writes to it (the control). A tool can
// still open a pty of its own.
func TestSandboxHidesTheUsersTerminals(t *testing.T) {
	users := map[string]attacker{"self": {}}
	if os.Getuid() == 0 {
		users["as-nobody"] = attacker{cred: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	for name, a := range users {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, a)
			master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer master.Close()
			var n uint32
			if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
				t.Fatal(e)
			}
			var unlock int32
			if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
				t.Fatal(e)
			}
			slave := fmt.Sprintf("/dev/pts/%d", n)
			if a.cred != nil {
				_ = os.Chown(slave, int(a.cred.Uid), int(a.cred.Gid))
			}
			got := make(chan string, 1)
			go func() {
				buf := make([]byte, 256)
				k, _ := master.Read(buf)
				got <- string(buf[:k])
			}()
			script := `echo ` + w.canary + ` > ` + slave + ` 2>&1; ls /dev/pts; python3 -c 'import os; m, s = os.openpty(); print("own-pty:ok")'`
			out := a.run(t, w.project, nil, script, w.sandbox())
			select {
			case s := <-got:
				t.Fatalf("a sandboxed tool wrote to the user's terminal: %q", s)
			case <-time.After(300 * time.Millisecond):
			}
			if !strings.Contains(out, "own-pty:ok") {
				t.Errorf("positive control: the tool cannot open a pty of its own:\n%s", out)
			}
			a.run(t, w.project, nil, script, nil)
			select {
			case s := <-got:
				if !strings.Contains(s, w.canary) {
					t.Errorf("control: the terminal got %q", s)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("control: a bare child could not write to the terminal, so the test proves nothing")
			}
		})
	}
}
