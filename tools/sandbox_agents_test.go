//go:build linux

package tools

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// agentSuite: the agents that hold the user's keys — an ssh agent at
// OpenSSH's default /tmp/ssh-*/agent.<pid>, at $SSH_AUTH_SOCK and at
// systemd's $XDG_RUNTIME_DIR/ssh-agent.socket, gpg-agent in the runtime
// dir and in ~/.gnupg — and the key files beside them (a GnuPG private
// key, ~/.vault-token) are out of a sandboxed tool's reach. Each planted
// socket answers a connection with a canary of its own, counted; the
// unsandboxed control reaches every one, and so does a sandbox whose
// [sandbox] allow names ~/.ssh, ~/.gnupg and ~/.vault-token.
func agentSuite(t *testing.T, a attacker) {
	w := newWorld(t, a)
	tmpAgentDir, err := os.MkdirTemp("/tmp", "ssh-hushtest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmpAgentDir) })
	run := w.root + "/run"
	socks := map[string]string{ // name: path
		"tmp-agent":     tmpAgentDir + "/agent.4242",
		"auth-sock":     w.root + "/sock/agent.sock",
		"systemd-agent": run + "/ssh-agent.socket",
		"gpg-runtime":   run + "/gnupg/S.gpg-agent",
		"gpg-home":      w.home + "/.gnupg/S.gpg-agent.ssh",
	}
	files := map[string]string{
		"gpg-key":     w.home + "/.gnupg/private-keys-v1.d/ABCDEF.key",
		"vault-token": w.home + "/.vault-token",
	}
	canaryOf := func(name string) string { return w.canary + "x" + strings.ReplaceAll(name, "-", "") }
	hits := new(atomic.Int32)
	for name, p := range socks {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		os.Chmod(p, 0o777)
		say := canaryOf(name)
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				hits.Add(1)
				c.Write([]byte(say))
				c.Close()
			}
		}()
	}
	for name, p := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(canaryOf(name)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if a.cred != nil {
		for _, root := range []string{w.root, tmpAgentDir} {
			filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error {
				return os.Lchown(p, int(a.cred.Uid), int(a.cred.Gid))
			})
		}
	}
	maskSet := func(allow []string) *Sandbox {
		t.Helper()
		m, err := NewMaskSet(MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, RuntimeDir: run,
			BusAddress: "unix:path=" + w.bus, SSHAuthSock: socks["auth-sock"], Project: w.project, Allow: allow})
		if err != nil {
			t.Fatal(err)
		}
		return &Sandbox{Masks: m, Required: true}
	}
	var script strings.Builder
	for name, p := range socks {
		script.WriteString(`echo ` + name + `:; python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(sys.argv[1]); print(s.recv(200))' ` + p + ` 2>&1; `)
	}
	for name, p := range files {
		script.WriteString(`echo ` + name + `:; xxd -p ` + p + ` 2>&1; `)
	}
	script.WriteString(`echo tmp-dir:; ls -A ` + tmpAgentDir + ` 2>&1`)

	// The control: every target is reachable without the sandbox.
	out := a.run(t, w.project, nil, script.String(), nil)
	for name := range socks {
		if !leaks(out, canaryOf(name)) {
			t.Fatalf("control: the unsandboxed tool did not reach %s, so the attack proves nothing:\n%s", name, out)
		}
	}
	for name := range files {
		if !leaks(out, canaryOf(name)) {
			t.Fatalf("control: the unsandboxed tool did not read %s:\n%s", name, out)
		}
	}

	hits.Store(0)
	out = a.run(t, w.project, nil, script.String(), maskSet(nil))
	if leaks(out, w.canary) || hits.Load() != 0 {
		t.Errorf("a sandboxed tool reached an agent or a key (%d connections):\n%s", hits.Load(), out)
	}
	if strings.Contains(out, "agent.4242") {
		t.Errorf("a sandboxed tool sees the ssh agent's socket in %s:\n%s", tmpAgentDir, out)
	}

	// Re-opened by [sandbox] allow: the directory of the keys re-opens the
	// agent that holds them, wherever it listens.
	out = a.run(t, w.project, nil, script.String(), maskSet([]string{"~/.ssh", "~/.gnupg", "~/.vault-token"}))
	for name := range socks {
		if !leaks(out, canaryOf(name)) {
			t.Errorf("[sandbox] allow did not re-open %s:\n%s", name, out)
		}
	}
	for name := range files {
		if !leaks(out, canaryOf(name)) {
			t.Errorf("[sandbox] allow did not re-open %s:\n%s", name, out)
		}
	}
}
