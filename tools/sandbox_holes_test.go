//go:build linux

package tools

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// More of issue 13's attacks on the sandbox itself, from hush audit's side:
// each runs sandboxed and, as its positive control, unsandboxed, where it
// must find the canary.
func TestSandboxHoles(t *testing.T) {
	if st := SandboxStatus(); !st.Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", st.Reason)
	}
	users := map[string]attacker{"self": {}}
	if os.Getuid() == 0 {
		users["root-as-nobody"] = attacker{cred: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
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
				ms, err := NewMaskSet(MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project})
				if err != nil {
					t.Fatal(err)
				}
				script := `curl -s --max-time 5 --unix-socket /var/run/docker.sock http://docker/_ping 2>&1`
				if out := a.run(t, w.project, nil, script, nil); out != "OK" {
					t.Fatalf("control: unsandboxed, curl did not reach the engine: %q", out)
				}
				if out := a.run(t, w.project, nil, script, &Sandbox{Masks: ms, Required: true}); strings.Contains(out, "OK") {
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
	if st := SandboxStatus(); !st.Namespaces {
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
	ms, err := NewMaskSet(MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project})
	if err != nil {
		t.Fatal(err)
	}
	script := `for s in /tmp/dbus-*; do curl -s --http0.9 --max-time 3 --unix-socket "$s" http://x/; done 2>&1`
	if out := a.run(t, w.project, nil, script, nil); !leaks(out, w.canary) {
		t.Fatalf("control: unsandboxed, the tool did not reach the stray bus:\n%s", out)
	}
	if out := a.run(t, w.project, nil, script, &Sandbox{Masks: ms, Required: true}); leaks(out, w.canary) {
		t.Errorf("a sandboxed tool reached a session bus hush was not told about:\n%s", out)
	}
}
