//go:build linux

package tools

import (
	"fmt"
	"github.com/hushcli/hush/tools/sandbox"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// More of issue 13's attacks on the sandbox itself, from hush audit's side:
// each runs sandboxed and, as its positive control, unsandboxed, where it
// must find the canary.
func TestSandboxHoles(t *testing.T) {
	users := sandboxAttackers(t)
	for name, a := range users {
		t.Run(name, func(t *testing.T) {
			check := func(t *testing.T, w world, script string) {
				t.Helper()
				if out := a.run(t, w.project, nil, script, nil); !leaks(out, w.canary) {
					t.Fatalf("control: the unsandboxed attack did not find the canary, so it proves nothing:\n%s", out)
				}
				if out := a.run(t, w.project, nil, script, w.sandbox()); leaks(out, w.canary) {
					t.Errorf("a sandboxed tool recovered the canary:\n%s", out)
				}
			}
			t.Run("abstract-socket", func(t *testing.T) {
				w := newWorld(t, a)
				name := "hush-holes-" + w.canary
				l, err := net.Listen("unix", "@"+name)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				go func() {
					for {
						c, err := l.Accept()
						if err != nil {
							return
						}
						// Read the request first: closing on unread bytes resets
						// the connection, and the client may drop the answer.
						c.SetReadDeadline(time.Now().Add(time.Second))
						_, _ = c.Read(make([]byte, 4096))
						c.Write([]byte("HTTP/1.0 200 OK\r\n\r\n" + w.canary + "\n"))
						c.Close()
					}
				}()
				check(t, w, `curl -s --http0.9 --max-time 3 --abstract-unix-socket `+name+` http://x/ 2>&1`)
			})
			t.Run("docker-socket", func(t *testing.T) {
				fi, err := os.Stat("/var/run/docker.sock")
				if err != nil {
					t.Fatalf("no Docker socket on this machine class: %v", err)
				}
				a := a
				if a.cred != nil {
					// In the socket's group, as a developer using Docker is.
					a.cred = &syscall.Credential{Uid: a.cred.Uid, Gid: a.cred.Gid, Groups: []uint32{fi.Sys().(*syscall.Stat_t).Gid}}
				}
				w := newWorld(t, a)
				ms, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project})
				if err != nil {
					t.Fatal(err)
				}
				script := `curl -s --max-time 5 --unix-socket /var/run/docker.sock http://docker/_ping 2>&1`
				if out := a.run(t, w.project, nil, script, nil); out != "OK" {
					t.Fatalf("control: unsandboxed, curl did not reach the engine: %q", out)
				}
				if out := a.run(t, w.project, nil, script, &sandbox.Config{Masks: ms, Required: true}); strings.Contains(out, "OK") {
					t.Errorf("a sandboxed tool reached the Docker engine by default: %q", out)
				}
			})
			t.Run("proc-root-fd-init", func(t *testing.T) {
				w := newWorld(t, a)
				check(t, w, `for p in /proc/[0-9]*; do cat $p/root`+w.data+`/vault.env; cat $p/environ | tr '\0' '\n'; `+
					`for f in $p/fd/*; do [ -f "$f" ] && timeout 1 cat "$f" </dev/null; done; done 2>/dev/null`)
			})
			t.Run("hard-link-and-rename", func(t *testing.T) {
				w := newWorld(t, a)
				check(t, w, `ln `+w.data+`/vault.env h 2>/dev/null && cat h; mv `+w.data+`/vault.env moved 2>/dev/null && cat moved; `+
					`cp -a `+w.data+` copy 2>/dev/null; cat copy/vault.env 2>/dev/null`)
			})
			t.Run("nsenter", func(t *testing.T) {
				w := newWorld(t, a)
				check(t, w, `cat `+w.data+`/vault.env 2>/dev/null; for p in /proc/[0-9]*; do nsenter -t ${p#/proc/} -m -U --preserve-credentials cat `+w.data+`/vault.env 2>/dev/null; `+
					`nsenter -t ${p#/proc/} -m cat `+w.data+`/vault.env 2>/dev/null; done; true`)
			})
			t.Run("write-under-a-mask", func(t *testing.T) {
				w := newWorld(t, a)
				script := `printf '[[rules]]\n' >> ` + w.config + `/config.toml 2>/dev/null; echo planted > ` + w.data + `/planted 2>/dev/null; ` +
					`echo planted > ` + w.config + `/trusted-projects.json 2>/dev/null; true`
				_ = a.run(t, w.project, nil, script, w.sandbox())
				b, _ := os.ReadFile(w.config + "/config.toml")
				tr, _ := os.ReadFile(w.config + "/trusted-projects.json")
				if _, err := os.Stat(w.data + "/planted"); err == nil || strings.Contains(string(b), "[[rules]]") || string(tr) != "[]" {
					t.Errorf("a sandboxed tool wrote under a mask: config %q trust %q", b, tr)
				}
				_ = a.run(t, w.project, nil, script, nil)
				if b, _ := os.ReadFile(w.config + "/config.toml"); !strings.Contains(string(b), "[[rules]]") {
					t.Fatalf("control: the unsandboxed write did not arrive, so this proves nothing")
				}
			})
		})
	}
}

// TestSandboxHidesAStrayBus: a session bus hush was not told about (hush
// started without DBUS_SESSION_BUS_ADDRESS, the user's dbus-launch bus in
// /tmp/dbus-*) is hidden too: a tool that found it would read the keyring.
func TestSandboxHidesAStrayBus(t *testing.T) {
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	a := attacker{}
	w := newWorld(t, a)
	path := "/tmp/dbus-hushtest" + w.canary[6:18]
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(time.Second))
			_, _ = c.Read(make([]byte, 4096))
			c.Write([]byte("HTTP/1.0 200 OK\r\n\r\n" + w.canary + "\n"))
			c.Close()
		}
	}()
	// hush knows no bus address and no runtime dir.
	ms, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project})
	if err != nil {
		t.Fatal(err)
	}
	script := `for s in /tmp/dbus-*; do curl -s --http0.9 --max-time 3 --unix-socket "$s" http://x/; done 2>&1`
	if out := a.run(t, w.project, nil, script, nil); !leaks(out, w.canary) {
		t.Fatalf("control: unsandboxed, the tool did not reach the stray bus:\n%s", out)
	}
	if out := a.run(t, w.project, nil, script, &sandbox.Config{Masks: ms, Required: true}); leaks(out, w.canary) {
		t.Errorf("a sandboxed tool reached a session bus hush was not told about:\n%s", out)
	}
}

// TestSandboxRootKernelSettings: a root tool is the host's uid 0 in its
// user namespace, and passes the owner check on every file uid 0 owns —
// the kernel's settings too. Pointing kernel.core_pattern at a pipe to its
// own script and crashing once had the kernel run that script as the
// host's root, outside every namespace, where it copied the vault file
// into the project; tracefs (uprobes read any process's memory) and the
// rest of /sys took writes too. The control: the same root, unsandboxed,
// writes each setting (its own value back), and the sandboxed tool still
// reads them.
func TestSandboxRootKernelSettings(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the hole is root's: an unprivileged tool fails the same owner checks outside the sandbox")
	}
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	const pattern = "/proc/sys/kernel/core_pattern"
	orig, err := os.ReadFile(pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(pattern, orig, 0); err != nil {
			t.Errorf("restore %s: %v", pattern, err)
		}
	})
	a := attacker{}
	w := newWorld(t, a)
	settings := []string{"/proc/sys/kernel/core_pattern", "/sys/kernel/tracing/tracing_on", "/sys/module/printk/parameters/time"}
	// Each setting written with the value it holds: nothing changes, but
	// a write that the kernel takes says WROTE.
	rewrite := `for f in ` + strings.Join(settings, " ") + `; do [ -e "$f" ] || continue; v=$(cat "$f"); printf '%s\n' "$v" > "$f" && echo "WROTE $f"; done 2>&1; `
	steal := `echo "READ $(cat ` + pattern + `)"; P=$PWD; printf '#!/bin/sh\ncat %s/vault.env > %s/stolen\n' ` + w.data + ` "$P" > "$P/dump"; chmod +x "$P/dump"
printf '|%s/dump\n' "$P" > ` + pattern + ` 2>&1
unshare -Urpf --mount-proc sh -c 'printf "|%s/dump\n" "$1" > ` + pattern + `' sh "$P" 2>&1
bash -c 'kill -SEGV $$' 2>/dev/null; sleep 0.5; printf '%s' "$(cat ` + pattern + `)" | grep -q dump && printf '%s' core > ` + pattern + `; true`

	out := a.run(t, w.project, nil, rewrite, nil)
	for _, f := range settings[:1] {
		if !strings.Contains(out, "WROTE "+f) {
			t.Fatalf("control: root, unsandboxed, could not write %s, so this proves nothing:\n%s", f, out)
		}
	}
	if !strings.Contains(out, "WROTE /sys/") {
		t.Fatalf("control: root, unsandboxed, wrote nothing under /sys, so this proves nothing:\n%s", out)
	}

	out = a.run(t, w.project, nil, rewrite+steal, w.sandbox())
	if strings.Contains(out, "WROTE") {
		t.Errorf("a root tool wrote the host kernel's settings:\n%s", out)
	}
	if b, _ := os.ReadFile(w.project + "/stolen"); leaks(string(b), w.canary) {
		t.Errorf("a root tool had the kernel run its script outside the sandbox, which read the vault: stolen holds % x", b)
	}
	if !strings.Contains(out, "READ "+strings.TrimSpace(string(orig))) {
		t.Errorf("positive control: the sandboxed tool cannot read kernel.core_pattern:\n%s", out)
	}
}

// TestSandboxRootDaemonSockets: a root tool is uid 0 to the daemons on the
// host's control sockets, which run what it asks as the host's root —
// systemd-run over the system bus, a container with the host's / from
// containerd — outside the sandbox. They are hidden from a root tool; the
// control is the same connect by root, unsandboxed. Where the machine has
// no system bus, the test listens at its path itself.
func TestSandboxRootDaemonSockets(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the daemons answer an unprivileged tool with no more than its user may do anyway")
	}
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	a := attacker{}
	w := newWorld(t, a)
	const bus = "/run/dbus/system_bus_socket"
	if _, err := os.Lstat(bus); err != nil {
		if err := os.MkdirAll("/run/dbus", 0o755); err != nil {
			t.Fatal(err)
		}
		serveCanary(t, bus, w.canary, "", nil)
	}
	script := `for s in ` + strings.Join(rootSockets, " ") + `; do [ -e "$s" ] || continue; python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.settimeout(1); s.connect(sys.argv[1]); print("CONNECTED", sys.argv[1])
try: print(s.recv(100))
except Exception: pass' "$s"; done 2>&1`
	if out := a.run(t, w.project, nil, script, nil); !strings.Contains(out, "CONNECTED "+bus) {
		t.Fatalf("control: root, unsandboxed, did not reach %s, so this proves nothing:\n%s", bus, out)
	}
	if out := a.run(t, w.project, nil, script, w.sandbox()); strings.Contains(out, "CONNECTED") || leaks(out, w.canary) {
		t.Errorf("a root tool reached a root daemon's control socket:\n%s", out)
	}
}

// TestSandboxHidesTheTmuxServer: the user's tmux server — often the one
// hush runs in — runs any command a client of its own user sends it, and a
// tool is that user: `tmux new-window 'cat …/vault.env > stolen'` ran
// outside the sandbox. Its socket directory (${TMUX_TMPDIR}/tmux-<uid>)
// and the socket $TMUX names are hidden; the control is the same client
// unsandboxed, whose window does copy the vault.
func TestSandboxHidesTheTmuxServer(t *testing.T) {
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatalf("tmux is not installed (scripts/provision installs it): %v", err)
	}
	a := attacker{}
	w := newWorld(t, a)
	tmpdir := w.root + "/tmux"
	other := w.root + "/elsewhere/sock" // a server started with -S, named by $TMUX
	if err := os.MkdirAll(filepath.Dir(other), 0o700); err != nil {
		t.Fatal(err)
	}
	// A client that cannot reach $TMUX_TMPDIR falls back to /tmp (tmux's
	// socket path is "$TMUX_TMPDIR:/tmp/"): the sandboxed attempt leaves a
	// socket there under its -L name, removed here.
	name := fmt.Sprintf("hushtest-%d", os.Getpid())
	t.Cleanup(func() {
		fallback := fmt.Sprintf("/tmp/tmux-%d", os.Getuid())
		_ = os.Remove(filepath.Join(fallback, name))
		_ = os.Remove(fallback) // only if it is empty: it may be the user's
	})
	for _, args := range [][]string{{"-L", name}, {"-S", other}} {
		cmd := exec.Command(tmux, append(args, "new-session", "-d", "sleep 120")...)
		cmd.Env = []string{"TMUX_TMPDIR=" + tmpdir, "PATH=/usr/bin:/bin", "HOME=" + w.home, "TERM=xterm"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("start a tmux server %v: %v\n%s", args, err, out)
		}
		t.Cleanup(func() {
			kill := exec.Command(tmux, append(args, "kill-server")...)
			kill.Env = cmd.Env
			_ = kill.Run()
		})
	}
	ms, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project,
		TmuxTmpDir: tmpdir, Tmux: other + ",1234,0"})
	if err != nil {
		t.Fatal(err)
	}
	for i, sel := range []string{"-L " + name, "-S " + other} {
		stolen := w.project + "/stolen" + strconv.Itoa(i)
		script := `TMUX_TMPDIR=` + tmpdir + ` tmux ` + sel + ` new-window -d "cat ` + w.data + `/vault.env > ` + stolen + `" 2>&1; ` +
			`for i in 1 2 3 4 5 6 7 8 9 10; do [ -s ` + stolen + ` ] && break; sleep 0.1; done; true`
		_ = a.run(t, w.project, nil, script, &sandbox.Config{Masks: ms, Required: true})
		if b, _ := os.ReadFile(stolen); leaks(string(b), w.canary) {
			t.Errorf("tmux %s: a sandboxed tool had the user's tmux server read the vault: % x", sel, b)
		}
		os.Remove(stolen)
		_ = a.run(t, w.project, nil, script, nil)
		if b, _ := os.ReadFile(stolen); !leaks(string(b), w.canary) {
			t.Fatalf("control: tmux %s: the unsandboxed client's window did not copy the vault (%q), so this proves nothing", sel, b)
		}
	}
}

// TestSandboxHidesTheUserManager: systemd's user manager runs what a
// client of its user asks (systemd-run --user) on $XDG_RUNTIME_DIR/
// systemd/private, with no bus needed, and the Emacs server evaluates what
// emacsclient sends: both outside the sandbox. A stand-in listens at each
// path; the control is the same connect unsandboxed.
func TestSandboxHidesTheUserManager(t *testing.T) {
	if st := sandbox.Status(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	a := attacker{}
	w := newWorld(t, a)
	rt := w.root + "/run"
	paths := []string{rt + "/systemd/private", rt + "/emacs/server"}
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		serveCanary(t, p, w.canary, "", nil)
	}
	ms, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project, RuntimeDir: rt})
	if err != nil {
		t.Fatal(err)
	}
	script := `for s in ` + strings.Join(paths, " ") + `; do python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.settimeout(1); s.connect(sys.argv[1]); print("CONNECTED", sys.argv[1], s.recv(100))' "$s"; done 2>&1`
	if out := a.run(t, w.project, nil, script, nil); strings.Count(out, "CONNECTED") != len(paths) || !leaks(out, w.canary) {
		t.Fatalf("control: unsandboxed, the client did not reach every server, so this proves nothing:\n%s", out)
	}
	if out := a.run(t, w.project, nil, script, &sandbox.Config{Masks: ms, Required: true}); strings.Contains(out, "CONNECTED") || leaks(out, w.canary) {
		t.Errorf("a sandboxed tool reached a server of its user that runs commands:\n%s", out)
	}
}

// rootSockets are root daemons' control sockets a root tool must not reach
// (the system bus, systemd, containerd, podman, cri-o, snapd, libvirt).
var rootSockets = []string{
	"/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/run/systemd/private",
	"/run/containerd/containerd.sock", "/run/podman/podman.sock", "/run/crio/crio.sock",
	"/run/snapd.socket", "/run/libvirt/libvirt-sock",
}
