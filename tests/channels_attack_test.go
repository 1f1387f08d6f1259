package tests

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Issue 22's channels, end to end: each is something of the user's world
// that a list of masks did not name — the X server, ssh's ControlMaster
// sockets and an agent at a path of its own, a root daemon's socket,
// another hush profile's data dir, a kernel key readable by serial, a
// PATH directory under home that the next session runs from. Each plants a
// canary, attacks it from an ungranted bash call the way a hostile command
// would (curl on the socket, xxd on the file, the keyctl syscall), and
// reads the raw bytes in loot/. Each has a positive control: the socket
// answers the same request made outside hush, as the same user; a file of
// the project read the same way shows its marker.

// socketListener answers every connection on a path socket with say, as
// an HTTP/0.9-ish reply curl prints; the socket is open to everyone, as
// the user's own sockets are to the user.
func socketListener(t *testing.T, path, say string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(path, 0o666)
	t.Cleanup(func() { l.Close(); os.Remove(path) })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			_, _ = c.Read(make([]byte, 4096))
			_, _ = c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + say + "\n"))
			c.Close()
		}
	}()
}

// curlSocket is the attack on a socket: what it answers, raw.
func curlSocket(path string) string {
	return "curl -s --http0.9 --max-time 3 --unix-socket " + shq(path) + " http://x/"
}

// outsideAnswers is a socket channel's positive control: the same curl,
// outside hush, as the attacker's user.
func outsideAnswers(t *testing.T, a attacker, path, want string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", curlSocket(path))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: a.cred}
	if b, _ := cmd.CombinedOutput(); !strings.Contains(string(b), want) {
		t.Errorf("%s: positive control: curl outside hush did not reach %s (%q), so the attack proves nothing", a.name, path, b)
	}
}

func shortID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// keyctlRead is `keyctl print SERIAL` without keyutils: the keyctl(2)
// syscall (KEYCTL_READ) from python3's ctypes, printing the payload.
func keyctlRead(serial string) string {
	nr := map[string]int{"amd64": 250, "arm64": 219}[runtime.GOARCH]
	return `python3 -c 'import ctypes,sys
l=ctypes.CDLL(None,use_errno=True);b=ctypes.create_string_buffer(512)
n=l.syscall(` + strconv.Itoa(nr) + `,11,int(sys.argv[1]),b,512)
print(b.raw[:n].decode() if n>=0 else "errno %d"%ctypes.get_errno())' ` + serial
}

// TestHostChannelsReachNothing: one ungranted bash call attacks every
// channel at once; nothing it reads may hold a canary, and every control
// must find its marker.
func TestHostChannelsReachNothing(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is needed to call keyctl(2) as a hostile command would: %v", err)
	}
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			hw := newHostileWorld(t, a)
			id := shortID()
			mark := markValue(hw.world)
			extra := map[string]string{}
			plantSock := func(label, path string) {
				v := canary(label)
				extra[label] = v
				socketListener(t, path, v)
			}
			// The X server: a socket in the shared /tmp/.X11-unix and the
			// cookie in ~/.Xauthority.
			if err := os.MkdirAll("/tmp/.X11-unix", 0o1777); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod("/tmp/.X11-unix", 0o1777)
			display := 4000 + int(hw.grantedSHA[0])%1000
			xsock := "/tmp/.X11-unix/X" + strconv.Itoa(display) + "-" + id
			plantSock("x-server", xsock)
			xauth := canary("xauthority")
			extra["xauthority"] = xauth
			hw.write(filepath.Join(hw.home, ".Xauthority"), "MIT-MAGIC-COOKIE-1 "+xauth+"\n")
			// ssh: ControlMaster sockets in ~/.ssh and in /tmp, and an agent
			// at a path of its own with no SSH_AUTH_SOCK naming it.
			if err := os.MkdirAll(filepath.Join(hw.home, ".ssh"), 0o700); err != nil {
				t.Fatal(err)
			}
			// ssh's cm-%r@%h:%p, short: the whole path must fit in a socket
			// address (108 bytes) under the suite's own TMPDIR.
			cmHome := filepath.Join(hw.home, ".ssh", "cm-u@h:22")
			cmTmp := "/tmp/ssh-git@example.com:22-" + id
			agentSock := filepath.Join(hw.home, ".ssh", "agent.sock")
			plantSock("controlmaster-home", cmHome)
			plantSock("controlmaster-tmp", cmTmp)
			plantSock("ssh-agent", agentSock)
			// A root daemon's socket under /run (a stand-in for Docker's
			// containerd, which the test does not touch).
			rootSock := "/run/hush-test-" + id + "/containerd.sock"
			plantSock("root-daemon", rootSock)
			t.Cleanup(func() { os.RemoveAll(filepath.Dir(rootSock)) })
			// The control socket: in the project, which a tool sees.
			ctlSock := filepath.Join(hw.project, "ctl.sock")
			socketListener(t, ctlSock, mark)
			// Another hush profile's data dir.
			other := filepath.Join(filepath.Dir(hw.home), "profile-work", "data")
			if err := os.MkdirAll(other, 0o700); err != nil {
				t.Fatal(err)
			}
			otherVault := canary("other-profile")
			extra["other-profile"] = otherVault
			hw.write(filepath.Join(other, "vault.env"), "WORK_TOKEN="+otherVault+"\n")
			// A kernel key the attacker's user may read by serial.
			keyVal := canary("kernel-key")
			extra["kernel-key"] = keyVal
			serial, err := unix.AddKey("user", "hush-test-"+id, []byte(keyVal), unix.KEY_SPEC_USER_KEYRING)
			if err != nil {
				t.Fatalf("plant a kernel key: %v", err)
			}
			t.Cleanup(func() {
				_, _ = unix.KeyctlInt(unix.KEYCTL_REVOKE, serial, 0, 0, 0)
				_, _ = unix.KeyctlInt(unix.KEYCTL_UNLINK, serial, unix.KEY_SPEC_USER_KEYRING, 0, 0)
			})
			if a.cred != nil {
				if _, err := unix.KeyctlInt(unix.KEYCTL_CHOWN, serial, int(a.cred.Uid), int(a.cred.Gid), 0); err != nil {
					t.Fatalf("give the key to %s: %v", a.name, err)
				}
			}
			// possessor all, user view+read+search
			if err := unix.KeyctlSetperm(serial, 0x3f0b0000); err != nil {
				t.Fatalf("setperm: %v", err)
			}
			// ~/.local/bin on PATH, as it is for most users.
			localBin := filepath.Join(hw.home, ".local", "bin")
			if err := os.MkdirAll(localBin, 0o755); err != nil {
				t.Fatal(err)
			}
			for i, e := range hw.env {
				if strings.HasPrefix(e, "PATH=") {
					hw.env[i] = "PATH=" + localBin + ":" + strings.TrimPrefix(e, "PATH=")
				}
			}

			script := `mkdir -p loot ctl
` + curlSocket(xsock) + ` > loot/x-server 2>&1
xxd ` + shq(filepath.Join(hw.home, ".Xauthority")) + ` > loot/xauthority 2>&1
` + curlSocket(cmHome) + ` > loot/controlmaster-home 2>&1
` + curlSocket(cmTmp) + ` > loot/controlmaster-tmp 2>&1
` + curlSocket(agentSock) + ` > loot/ssh-agent 2>&1
` + curlSocket(rootSock) + ` > loot/root-daemon 2>&1
` + curlSocket(ctlSock) + ` > ctl/socket 2>&1
xxd ` + shq(filepath.Join(other, "vault.env")) + ` > loot/other-profile 2>&1
xxd notes.txt > ctl/xxd 2>&1
` + keyctlRead(strconv.Itoa(serial)) + ` > loot/kernel-key 2>&1
{ printf '#!/bin/sh\necho planted\n' > ` + shq(filepath.Join(localBin, "hush-test-mcp")) + ` && chmod +x ` + shq(filepath.Join(localBin, "hush-test-mcp")) + `; } > loot/path-plant 2>&1
cp notes.txt ctl/written 2>&1
echo done`
			model := hostileModel(t, fakeCall{"bash", map[string]any{"script": script, "secrets": []string{}}})
			hw.configFor(model, "")
			out, code := hw.run(t, "attack")
			if code != 0 || !strings.Contains(out, "done") {
				t.Fatalf("%s: exit %d:\n%s", a.name, code, out)
			}
			// xxd's hex columns decoded back to raw bytes.
			for _, f := range []string{"xauthority", "other-profile"} {
				p := filepath.Join(hw.project, "loot", f)
				b, _ := os.ReadFile(p)
				_ = os.WriteFile(p, append(b, xxdBytes(b)...), 0o644)
			}
			for _, v := range []string{"x-server", "xauthority", "controlmaster-home", "controlmaster-tmp", "ssh-agent", "root-daemon", "other-profile", "kernel-key"} {
				hw.noSecret(t, v, extra)
			}
			hw.control(t, "socket")
			hw.control(t, "written")
			if b, _ := os.ReadFile(filepath.Join(hw.project, "ctl", "xxd")); !bytes.Contains(xxdBytes(b), []byte(mark)) {
				t.Errorf("%s: positive control: xxd of the project's notes.txt did not show its marker", a.name)
			}
			for _, p := range []string{xsock, cmHome, cmTmp, agentSock, rootSock} {
				outsideAnswers(t, a, p, extra[map[string]string{xsock: "x-server", cmHome: "controlmaster-home", cmTmp: "controlmaster-tmp", agentSock: "ssh-agent", rootSock: "root-daemon"}[p]])
			}
			// The kernel key's control: the same read outside hush.
			ctl := exec.Command("sh", "-c", keyctlRead(strconv.Itoa(serial)))
			ctl.SysProcAttr = &syscall.SysProcAttr{Credential: a.cred}
			if b, _ := ctl.CombinedOutput(); !strings.Contains(string(b), keyVal) {
				t.Errorf("%s: positive control: keyctl read of the planted key outside hush failed (%q), so the attack proves nothing", a.name, b)
			}
			if _, err := os.Lstat(filepath.Join(localBin, "hush-test-mcp")); err == nil {
				t.Errorf("%s: a tool planted ~/.local/bin/hush-test-mcp, which the next session runs outside the sandbox (%q)", a.name, hw.loot("path-plant"))
			}
			hw.assertNoCanary("the run's output", out)
		})
	}
}

// xxdBytes decodes xxd's hex columns back to the bytes it dumped.
func xxdBytes(b []byte) []byte {
	var out []byte
	for _, line := range strings.Split(string(b), "\n") {
		_, rest, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if i := strings.Index(rest, "  "); i >= 0 {
			rest = rest[:i]
		}
		if raw, err := hex.DecodeString(strings.ReplaceAll(rest, " ", "")); err == nil {
			out = append(out, raw...)
		}
	}
	return out
}
