//go:build linux

package tools

import (
	"github.com/hushcli/hush/tools/sandbox"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// agentSuite: the agents that hold the user's keys — an ssh agent at
// OpenSSH's default /tmp/ssh-*/agent.<pid>, at $SSH_AUTH_SOCK and at
// systemd's $XDG_RUNTIME_DIR/ssh-agent.socket, gpg-agent in the runtime
// dir and in ~/.gnupg — and the key files beside them (a GnuPG private
// key, ~/.vault-token) are out of a sandboxed tool's reach. Each planted
// socket answers a connection that knocks with a canary of its own,
// counted; the unsandboxed control reaches every one, and so does a
// sandbox whose [sandbox] allow names ~/.ssh, ~/.gnupg and ~/.vault-token.
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
	// A connection counts, and is answered, only when it knocks with this
	// test's word first: other tests running at the same time (hush
	// audit's probe with --sandbox off) scan /tmp/ssh-* for agents too.
	knock := "knock-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	hits := new(atomic.Int32)
	for name, p := range socks {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		serveCanary(t, p, canaryOf(name), knock, hits)
		os.Chmod(p, 0o777)
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
	maskSet := func(allow []string) *sandbox.Config {
		t.Helper()
		m, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, RuntimeDir: run,
			BusAddress: "unix:path=" + w.bus, SSHAuthSock: socks["auth-sock"], Project: w.project, Allow: allow})
		if err != nil {
			t.Fatal(err)
		}
		return &sandbox.Config{Masks: m, Required: true}
	}
	var script strings.Builder
	for name, p := range socks {
		script.WriteString(`echo ` + name + `:; python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(sys.argv[1]); s.sendall(sys.argv[2].encode()); print(s.recv(200))' ` + p + ` ` + knock + ` 2>&1; `)
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

// realAgentSuite: the real ssh-agent and gpg-agent, started as the
// attacker after hush's mask set was made, at their default places
// (OpenSSH's /tmp/ssh-*/agent.<pid>; gpg-agent's socket for the home's
// ~/.gnupg) and never named to the mask set: a sandboxed `ssh-add -L`
// lists no key and `gpg-connect-agent` reaches no agent; unsandboxed, and
// with `[sandbox] allow = ["~/.ssh", "~/.gnupg"]`, both do.
func realAgentSuite(t *testing.T, a attacker) {
	for _, cmd := range []string{"ssh-agent", "ssh-add", "ssh-keygen", "gpg-agent", "gpg-connect-agent", "gpgconf"} {
		if _, err := exec.LookPath(cmd); err != nil {
			t.Fatalf("%s is not installed (scripts/provision installs openssh-client and gnupg)", cmd)
		}
	}
	w := newWorld(t, a)
	gnupg := w.home + "/.gnupg"
	if err := os.MkdirAll(gnupg, 0o700); err != nil {
		t.Fatal(err)
	}
	if a.cred != nil {
		os.Lchown(gnupg, int(a.cred.Uid), int(a.cred.Gid))
	}
	env := []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin", "GNUPGHOME=" + gnupg}
	asAttacker := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir = env, w.home
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: a.cred}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	key := w.home + "/.ssh/id_agenttest"
	asAttacker("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", w.canary, "-f", key)
	out := asAttacker("ssh-agent", "-s")
	var sock, pid string
	for _, f := range strings.FieldsFunc(out, func(r rune) bool { return r == ';' || r == '\n' }) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(f), "SSH_AUTH_SOCK="); ok {
			sock = v
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(f), "SSH_AGENT_PID="); ok {
			pid = v
		}
	}
	if !strings.HasPrefix(sock, "/tmp/ssh-") || pid == "" {
		t.Fatalf("ssh-agent -s said:\n%s", out)
	}
	t.Cleanup(func() {
		if n, err := strconv.Atoi(pid); err == nil {
			syscall.Kill(n, syscall.SIGTERM)
		}
		os.RemoveAll(filepath.Dir(sock))
	})
	env = append(env, "SSH_AUTH_SOCK="+sock)
	asAttacker("ssh-add", "-q", key)
	os.Remove(key) // only the agent holds it now
	asAttacker("gpg-agent", "--homedir", gnupg, "--daemon", "--quiet")
	t.Cleanup(func() {
		cmd := exec.Command("gpgconf", "--homedir", gnupg, "--kill", "gpg-agent")
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: a.cred}
		cmd.Run()
	})
	gpgSock := strings.TrimSpace(asAttacker("gpgconf", "--homedir", gnupg, "--list-dirs", "agent-socket"))

	script := `SSH_AUTH_SOCK=` + sock + ` ssh-add -L 2>&1; echo gpg:; gpg-connect-agent --no-autostart --homedir ` + gnupg +
		` 'GETINFO socket_name' /bye 2>&1`
	sandbox := func(allow ...string) *sandbox.Config {
		m, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, RuntimeDir: w.root + "/run",
			Project: w.project, Allow: allow})
		if err != nil {
			t.Fatal(err)
		}
		return &sandbox.Config{Masks: m, Required: true}
	}
	reached := func(out string) (ssh, gpg bool) {
		return leaks(out, w.canary), strings.Contains(out, "D "+gpgSock)
	}
	ssh, gpg := reached(a.run(t, w.project, nil, script, nil))
	if !ssh || !gpg {
		t.Fatalf("control: unsandboxed, ssh-add reached the agent: %v, gpg-connect-agent: %v (socket %s)", ssh, gpg, gpgSock)
	}
	out = a.run(t, w.project, nil, script, sandbox())
	if ssh, gpg := reached(out); ssh || gpg {
		t.Errorf("a sandboxed tool reached the real agents (ssh %v, gpg %v):\n%s", ssh, gpg, out)
	}
	out = a.run(t, w.project, nil, script, sandbox("~/.ssh", "~/.gnupg"))
	if ssh, gpg := reached(out); !ssh || !gpg {
		t.Errorf("[sandbox] allow did not re-open the agents (ssh %v, gpg %v):\n%s", ssh, gpg, out)
	}
}
