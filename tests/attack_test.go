package tests

import (
	"bytes"
	"encoding/hex"
	"fmt"
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

// Issue 13's attacks, end to end: the real binary, a fake model that asks
// for hostile tool calls, the real kernel. Each hostile call writes what
// it read, raw, into loot/ in the project, where the test reads the bytes
// itself — no redactor between them — and each attack has a positive
// control in ctl/: the same attack pointed at something nothing protects,
// which must succeed, or the attack's failure proves nothing.
//
// Every attack runs as root and as an unprivileged user (nobody, through
// the spawn layer's Credential like hush audit does): CI runners and
// containers run agents as root, where same-user protections mean nothing.

// attacker is who hush and its tools run as.
type attacker struct {
	name string
	cred *syscall.Credential // nil: the test's own user (root on this machine class)
}

const nobody = 65534

func attackers(t *testing.T) []attacker {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("the attack tests run as root (and drop to nobody themselves); this is uid %d", os.Geteuid())
	}
	return []attacker{{"root", nil}, {"unprivileged", &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}}
}

// hostileWorld is a world whose hush runs as a.
type hostileWorld struct {
	*world
	a   attacker
	bin string
}

// newHostileWorld makes a world that a's hush can own: the binary copied in
// and every directory handed over.
func newHostileWorld(t *testing.T, a attacker) *hostileWorld {
	t.Helper()
	w := newWorld(t)
	hw := &hostileWorld{world: w, a: a, bin: hushBin}
	w.write(filepath.Join(w.project, "notes.txt"), "NOTE="+markValue(w)+"\n")
	if a.cred != nil {
		root := filepath.Dir(w.home)
		hw.bin = filepath.Join(root, "hush")
		data, err := os.ReadFile(hushBin)
		if err != nil {
			t.Fatal(err)
		}
		// Under ForkLock's read lock: a child another test forks meanwhile
		// would hold the copy open for writing until it execs, and running
		// it then fails with "text file busy" (golang/go#22315).
		syscall.ForkLock.RLock()
		err = os.WriteFile(hw.bin, data, 0o755)
		syscall.ForkLock.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
		for d := root; d != "/" && d != "."; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
				_ = os.Chmod(d, fi.Mode().Perm()|0o011)
			}
		}
	}
	return hw
}

// markValue is the world's positive-control marker: no secret, planted in
// a file nothing protects.
func markValue(w *world) string { return "mark-" + w.grantedSHA[:24] }

// handOver gives every file of the world to a's user.
func (hw *hostileWorld) handOver() {
	if hw.a.cred == nil {
		return
	}
	root := filepath.Dir(hw.home)
	_ = filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			_ = os.Lchown(p, int(hw.a.cred.Uid), int(hw.a.cred.Gid))
		}
		return nil
	})
}

// run runs `hush run --json --yes` as the world's attacker against model,
// with extra written into the project as .hushpid once hush has started
// (so a hostile call knows hush's host pid, as an attacker can find it).
func (hw *hostileWorld) run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	hw.handOver()
	cmd := exec.Command(hw.bin, append([]string{"run", "--json", "--yes"}, args...)...)
	cmd.Env, cmd.Dir = hw.env, hw.project
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: hw.a.cred}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(hw.project, ".hushpid")
	hw.write(pidFile, strconv.Itoa(cmd.Process.Pid))
	_ = os.Chmod(pidFile, 0o644)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(120 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("hush run did not finish:\n%s%s", stdout.String(), stderr.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return stdout.String() + stderr.String(), code
}

// loot reads what the hostile calls wrote: loot/NAME raw.
func (hw *hostileWorld) loot(name string) string {
	b, _ := os.ReadFile(filepath.Join(hw.project, "loot", name))
	return string(b)
}

// control checks ctl/NAME holds the marker: the attack works where nothing
// protects the target.
func (hw *hostileWorld) control(t *testing.T, name string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hw.project, "ctl", name))
	if err != nil || !strings.Contains(string(b), markValue(hw.world)) {
		t.Errorf("%s: positive control %s did not find its marker (%q, %v): the attack proves nothing", hw.a.name, name, b, err)
		return false
	}
	return true
}

// noSecret fails when loot/name holds any planted secret.
func (hw *hostileWorld) noSecret(t *testing.T, name string, extra map[string]string) {
	t.Helper()
	text := hw.loot(name)
	all := map[string]string{"granted": hw.granted}
	for k, v := range hw.canaries {
		all[k] = v
	}
	for k, v := range extra {
		all[k] = v
	}
	for label, v := range all {
		if strings.Contains(text, v) {
			t.Errorf("%s: %s recovered the %s secret", hw.a.name, name, label)
		}
	}
}

// hostileModel serves one step per call, then a final text.
func hostileModel(t *testing.T, calls ...fakeCall) *fakeModel {
	var steps []step
	for _, c := range calls {
		steps = append(steps, step{text: "Next.", calls: []fakeCall{c}})
	}
	return newFakeModel(t, append(steps, step{text: "Attack finished."})...)
}

func (hw *hostileWorld) configFor(model *fakeModel, extra string) {
	hw.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n\n"+
		"[[rules]]\ngate = \"tool.run:*\"\nsubject = \"*\"\ndecision = \"allow\"\n\n"+
		"[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"*\"\ndecision = \"allow\"\n%s", model.URL(), extra))
}

// abstractListener answers every connection with say, on an abstract unix
// socket (no file: a mount cannot hide it).
func abstractListener(t *testing.T, name, say string) {
	t.Helper()
	l, err := net.Listen("unix", "@"+name)
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
			// Read the request first: closing on unread bytes resets the
			// connection, and the client may drop the answer.
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			_, _ = c.Read(make([]byte, 4096))
			_, _ = c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + say + "\n"))
			c.Close()
		}
	}()
}

// TestHostileToolRecoversNothing: an ungranted bash call, while a granted
// background process runs, tries every way around the sandbox the issue
// and its reviewers named — another process's root and fds (hush's memfd),
// a symlink and a hard link into hush's data dir, unmounting a mask,
// nsenter into hush's namespaces, a nested user namespace that remounts,
// an abstract unix socket (no file a mount could hide), a path socket in
// the data dir, and hush's memory by its host pid.
func TestHostileToolRecoversNothing(t *testing.T) {
	t.Parallel()
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			hw := newHostileWorld(t, a)
			abstractCanary := canary("abstract")
			sockName := "hush-attack-" + hw.grantedSHA[:16]
			abstractListener(t, sockName, abstractCanary)
			data := hw.dataDir
			script := `mkdir -p loot ctl; hp=$(cat .hushpid); D=` + shq(data) + `
for p in /proc/[0-9]*; do cat "$p/root$D/vault.env"; done > loot/proc-root 2>&1
cat "/proc/self/root$PWD/notes.txt" > ctl/proc-root 2>&1
for f in /proc/[0-9]*/fd/* /proc/$hp/fd/*; do [ -f "$f" ] && timeout 2 cat "$f" </dev/null; done > loot/proc-fd 2>&1
exec 7<notes.txt; cat /proc/$$/fd/7 > ctl/proc-fd 2>&1; exec 7<&-
ln -s "$D/vault.env" lnk; cat lnk > loot/symlink 2>&1; ln -s "$PWD/notes.txt" lnk2; cat lnk2 > ctl/symlink 2>&1
ln "$D/vault.env" hard > loot/hardlink 2>&1; cat hard >> loot/hardlink 2>&1; ln notes.txt hard2; cat hard2 > ctl/hardlink 2>&1
{ umount "$D"; umount -l "$D"; umount "$D/vault.env"; umount .env; cat "$D/vault.env" .env; } > loot/umount 2>&1
{ nsenter -t "$hp" -m -p cat "$D/vault.env"; nsenter -t 1 -m -U --preserve-credentials cat "$D/vault.env"; } > loot/nsenter 2>&1
unshare -rm sh -c 'umount -l "$1" 2>&1; umount -l "$2" 2>&1; cat "$1/vault.env" "$2"' sh "$D" "$PWD/.env" > loot/unshare 2>&1
unshare -rm sh -c 'cat notes.txt' > ctl/unshare 2>&1
curl -s --http0.9 --max-time 3 --abstract-unix-socket ` + sockName + ` http://x/ > loot/abstract 2>&1
timeout 5 cat /proc/$hp/mem /proc/$hp/environ > loot/proc-mem 2>&1
timeout 20 "$HUSH_BIN" __probe --mem-pid "$hp" --needle canary- > loot/probe-mem 2>&1
cat /proc/$hp/cmdline > loot/hush-visible 2>&1
echo done`
			// The granted target, running while the attacker looks.
			target := fakeCall{"background", map[string]any{"action": "start", "command": "exec sleep 60", "env": map[string]string{"POS": "${GRANTED}"}}}
			attack := fakeCall{"bash", map[string]any{"script": script, "secrets": []string{}, "env": map[string]string{"HUSH_BIN": hw.bin}}}
			model := hostileModel(t, target, attack)
			hw.configFor(model, "")
			out, code := hw.run(t, "attack")
			if code != 0 || !strings.Contains(out, "done") {
				t.Fatalf("%s: exit %d:\n%s", a.name, code, out)
			}
			// The probe reports what it read in the audit's encoding (each
			// byte plus one, in hex): decode it back to raw bytes.
			decodeProbe(t, filepath.Join(hw.project, "loot", "probe-mem"))
			for _, v := range []string{"proc-root", "proc-fd", "symlink", "hardlink", "umount", "nsenter", "unshare", "abstract", "proc-mem", "probe-mem"} {
				hw.noSecret(t, v, map[string]string{"abstract socket": abstractCanary})
			}
			for _, c := range []string{"proc-root", "proc-fd", "symlink", "hardlink", "unshare"} {
				hw.control(t, c)
			}
			// The abstract socket's control: the same curl, as the same user,
			// outside hush, reaches it.
			ctl := exec.Command("curl", "-s", "--http0.9", "--max-time", "3", "--abstract-unix-socket", sockName, "http://x/")
			ctl.SysProcAttr = &syscall.SysProcAttr{Credential: a.cred}
			if b, _ := ctl.CombinedOutput(); !strings.Contains(string(b), abstractCanary) {
				t.Errorf("%s: positive control: curl outside hush did not reach the abstract socket (%q)", a.name, b)
			}
			if strings.Contains(hw.loot("hush-visible"), "run") {
				t.Errorf("%s: the tool sees hush's process (/proc/<hush pid>/cmdline): %q", a.name, hw.loot("hush-visible"))
			}
			hw.assertNoCanary("the run's output", out)
		})
	}
}

// TestToolCannotReachTheDockerSocket: a host tool that reaches the engine
// reads every container's environment and can start a privileged one, so
// the socket is hidden by default. The attack asks the engine for its
// containers; the positive control is the same request made by the test.
// The unprivileged attacker is in the socket's group, as a developer
// using Docker is.
func TestToolCannotReachTheDockerSocket(t *testing.T) {
	t.Parallel()
	dockerEngine(t)
	fi, err := os.Stat("/var/run/docker.sock")
	if err != nil {
		t.Fatal(err)
	}
	gid := fi.Sys().(*syscall.Stat_t).Gid
	control, err := exec.Command("curl", "-s", "--max-time", "5", "--unix-socket", "/var/run/docker.sock", "http://docker/_ping").CombinedOutput()
	if err != nil || string(control) != "OK" {
		t.Fatalf("positive control: the test itself cannot reach the engine with curl: %q %v", control, err)
	}
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			if a.cred != nil {
				a.cred.Groups = []uint32{gid}
			}
			hw := newHostileWorld(t, a)
			script := `mkdir -p loot; curl -s --max-time 5 --unix-socket /var/run/docker.sock http://docker/_ping > loot/docker 2>&1; echo "rc=$?" >> loot/docker; echo done`
			model := hostileModel(t, fakeCall{"bash", map[string]any{"script": script}})
			hw.configFor(model, "")
			out, code := hw.run(t, "attack")
			if code != 0 || !strings.Contains(out, "done") {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			if got := hw.loot("docker"); strings.HasPrefix(got, "OK") {
				t.Errorf("%s: a host tool reached the Docker engine: %q", a.name, got)
			}
		})
	}
}

// shq quotes s for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// decodeProbe rewrites a file of `HUSH-ATTACK key value` lines with each
// value decoded to the raw bytes the probe read.
func decodeProbe(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "HUSH-ATTACK" {
			raw, err := hex.DecodeString(f[2])
			if err == nil {
				for i := range raw {
					raw[i]--
				}
				out.WriteString(f[1] + " " + string(raw) + "\n")
				continue
			}
		}
		out.WriteString(line + "\n")
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestToolCannotReachTheKeyring: the Secret Service answers anyone who
// reaches the session bus, so a tool that finds the bus socket (in
// /tmp/dbus-*, $XDG_RUNTIME_DIR/bus, or an ancestor's environ) reads every
// item: `secret-tool search --all service hush`. The sandbox hides the
// socket. Positive controls: a call granted the keyring secret gets it
// exactly, and the same secret-tool command run outside hush, as the same
// user and on the same bus, finds it. The unprivileged run gets a Secret
// Service of its own user (a bus belongs to one user).
func TestToolCannotReachTheKeyring(t *testing.T) {
	t.Parallel()
	wss, err := filepath.Abs("../scripts/with-secret-service")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			hw := newHostileWorld(t, a)
			secret := canary("keyring")
			service := "hush-attack-" + hw.grantedSHA[:12]
			script := `mkdir -p loot; { secret-tool search --all service "$SVC"; for s in /tmp/dbus-* "$XDG_RUNTIME_DIR/bus"; do ` +
				`DBUS_SESSION_BUS_ADDRESS="unix:path=$s" secret-tool search --all service "$SVC"; done; } > loot/keyring 2>&1; ` +
				`printf %s "$KS" | sha256sum; echo done`
			// The attacker learned the bus address (it is in the user's shell's
			// environ); the granted call gets the keyring secret.
			call := fakeCall{"bash", map[string]any{"script": script, "env": map[string]string{"KS": "${KEYRING_SECRET}", "SVC": service,
				"DBUS_SESSION_BUS_ADDRESS": "@BUS@"}}}
			model := hostileModel(t, call)
			hw.configFor(model, "\n[vault]\nbackend = \"keyring\"\n\n[[rules]]\ngate = \"vault.read:KEYRING_SECRET\"\nsubject = \"bash\"\ndecision = \"allow\"\n")
			// One session script, so the unprivileged run's own Secret
			// Service holds the secret, answers the control and serves hush.
			session := filepath.Join(filepath.Dir(hw.home), "session.sh")
			hw.write(session, `set -e
printf %s "$SECRET" | "$HUSH" vault set KEYRING_SECRET
secret-tool search --all service "$SVC" > "$CTL" 2>&1 || true
sed -i "s|@BUS@|$DBUS_SESSION_BUS_ADDRESS|" "$HUSH_CONFIG_DIR/config.toml" 2>/dev/null || true
exec "$HUSH" run --json --yes attack
`)
			_ = os.Chmod(session, 0o755)
			script2, _ := os.ReadFile(wss)
			wssCopy := filepath.Join(filepath.Dir(hw.home), "with-secret-service")
			hw.write(wssCopy, string(script2))
			_ = os.Chmod(wssCopy, 0o755)
			hw.handOver()
			ctl := filepath.Join(hw.project, "ctl-keyring")
			cmd := exec.Command(wssCopy, "sh", session)
			cmd.Env = append(append([]string{}, hw.env...), "SECRET="+secret, "SVC="+service, "CTL="+ctl, "HUSH="+hw.bin,
				"HUSH_VAULT_SERVICE="+service)
			cmd.Dir = hw.project
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: a.cred}
			outB, err := cmd.CombinedOutput()
			out := string(outB)
			if err != nil || !strings.Contains(out, "done") {
				t.Fatalf("%s: %v:\n%s", a.name, err, out)
			}
			if b, _ := os.ReadFile(ctl); !strings.Contains(string(b), secret) {
				t.Fatalf("%s: positive control: secret-tool outside hush did not find the secret (%q): the attack proves nothing", a.name, b)
			}
			if !strings.Contains(out, sha(secret)) {
				t.Errorf("%s: positive control: the granted call did not get the keyring secret:\n%s", a.name, out)
			}
			if strings.Contains(hw.loot("keyring"), secret) {
				t.Errorf("%s: a host tool read the keyring over the bus", a.name)
			}
			if strings.Contains(out, secret) {
				t.Errorf("%s: the run's output shows the keyring secret", a.name)
			}
		})
	}
}
