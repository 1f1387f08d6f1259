package sandbox

import (
	"bytes"
	"context"
	"net"
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

// The .env layer in the real sandbox: a background process rereads the
// .env family every 100 ms while the host's editor saves each file by
// rename twenty times; it never sees a value. Run as root, and as an
// unprivileged hush (this test binary re-run as nobody, with a FUSE device
// node of the test's that nobody may open where /dev/fuse is root's only).

const fuseDevEnv = "HUSH_SANDBOX_TEST_FUSE_DEVICE"

// The re-run as nobody gets its device node before anything asks
// FuseStatus (Status does).
func init() {
	if d := os.Getenv(fuseDevEnv); d != "" {
		FuseDevice = d
	}
}

// startSandboxed starts bash -c script in a sandbox of cfg (nil: none) and
// returns a function that waits for it and returns its output.
func startSandboxed(t *testing.T, cfg *Config, dir, script string) func() string {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	var d *Direct
	if cfg != nil {
		var err error
		if d, err = Prepare(context.Background(), cmd, "/bin/bash", cfg); err != nil {
			t.Fatal(err)
		}
	}
	start, wait := cmd.Start, cmd.Wait
	if d != nil {
		start, wait = func() error { return d.Start(cmd) }, func() error { return d.Wait(cmd) }
	}
	if err := start(); err != nil {
		t.Fatal(err)
	}
	return func() string {
		if err := wait(); err != nil {
			t.Logf("run: %v", err)
		}
		return out.String()
	}
}

// envRenameLoop rereads the family every 100 ms, raw bytes, until the
// stop file appears; "mounts:" says what is mounted at the project.
func envRenameLoop(project string) string {
	return `grep -F ' ` + project + ` ' /proc/self/mountinfo | sed 's/^/mounts: /'
n=0
while [ ! -e stop ]; do
  for f in .env sub/.env .envrc; do xxd -p "$f" 2>/dev/null | tr -d '\n'; done; echo
  n=$((n+1)); [ $n = 2 ] && echo > started
  sleep 0.1
done
echo "reads: $n"`
}

func TestWorldDotEnvSurvivesRenameSaves(t *testing.T) {
	if !Status().Namespaces {
		t.Fatalf("the sandbox is unavailable on this machine, which must support it: %s", Status().Reason)
	}
	if err := FuseStatus(); err != nil {
		t.Fatalf("this machine must give the .env layer: %v", err)
	}
	w := newPolicyWorld(t)
	files := []string{".env", "sub/.env", ".envrc"}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(w.project, f), []byte("EMPTY=\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, err := NewMaskSet(MaskOptions{Home: w.home, DataDir: w.data, ConfigDir: w.config, Project: w.project})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Policy: w.policy(t, func(o *PolicyOptions) { o.Dir = w.project }), Masks: m, Constructed: true, EnvLayer: true}
	boxed := startSandboxed(t, cfg, w.project, envRenameLoop(w.project))
	// The control: the same loop, no sandbox, as the same user.
	bare := startSandboxed(t, nil, w.project, envRenameLoop(w.project))
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(w.project, "started")); err == nil {
			break
		}
		if i == 300 {
			os.WriteFile(filepath.Join(w.project, "stop"), nil, 0o644)
			t.Fatalf("the loops did not start:\n%s\n%s", boxed(), bare())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if fuseFDs(t) == 0 {
		t.Errorf("hush holds no FUSE device while the sandboxed loop runs: no .env layer is served")
	}
	c := canary(t)
	for i := 0; i < 20; i++ {
		for _, f := range files {
			p := filepath.Join(w.project, f)
			if err := os.WriteFile(p+".tmp", []byte("TOKEN="+c+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".tmp", p); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(w.project, "stop"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, ctl := boxed(), bare()
	// The call has ended: its server stops and closes the device (the
	// namespace's end unmounts the layer, off the call's path).
	for i := 0; fuseFDs(t) > 0; i++ {
		if i == 200 {
			t.Errorf("the .env layer's device is still open in hush after the call ended")
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(ctl, hexOf(c)) {
		t.Fatalf("control: the unsandboxed loop never read the value saved by rename:\n%s", ctl)
	}
	if strings.Contains(out, hexOf(c)) || strings.Contains(out, c) {
		t.Errorf("a sandboxed background process read .env after a rename save:\n%s", out)
	}
	// About one read per save; a loaded machine runs the loop less often.
	if n, ok := readsOf(out); !ok || n < 10 {
		t.Errorf("the sandboxed loop did not run through the saves:\n%s", out)
	}
	if !strings.Contains(out, "fuse.hush") {
		t.Errorf("the project is not under the .env layer:\n%s", out)
	}
}

// TestWorldDotEnvSurvivesRenameSavesUnprivileged is the test above in an
// unprivileged hush.
func TestWorldDotEnvSurvivesRenameSavesUnprivileged(t *testing.T) {
	rerunAsNobodyWithFuse(t, "TestWorldDotEnvSurvivesRenameSaves")
}

// TestEverydayWorkThroughTheEnvLayerUnprivileged is the everyday test
// below in an unprivileged hush.
func TestEverydayWorkThroughTheEnvLayerUnprivileged(t *testing.T) {
	rerunAsNobodyWithFuse(t, "TestEverydayWorkThroughTheEnvLayer")
}

// rerunAsNobodyWithFuse re-runs this test binary's test as nobody, which
// then starts its sandboxes as an unprivileged hush would. Where only root
// may open /dev/fuse (this machine class), it gets a node of the same
// device that nobody may open, in a directory of its own.
func rerunAsNobodyWithFuse(t *testing.T, test string) {
	if os.Getuid() != 0 {
		t.Skip("re-runs itself as nobody, which needs root")
	}
	dev := FuseDevice
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatalf("no FUSE device: %v", err)
	}
	if st.Mode&0o006 != 0o006 {
		dir, err := os.MkdirTemp("", "hush-fuse-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dev = filepath.Join(dir, "fuse")
		if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(st.Rdev)); err != nil {
			t.Fatalf("make a FUSE device node nobody may open: %v", err)
		}
		if err := os.Chmod(dev, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	cmd := exec.Command("/proc/self/exe", "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	cmd.Env = []string{fuseDevEnv + "=" + dev, "PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HOME=/tmp"}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	err := cmd.Run()
	if err != nil || !strings.Contains(out.String(), "--- PASS: "+test) || strings.Contains(out.String(), "--- SKIP") {
		t.Fatalf("as nobody: %v\n%s", err, out.String())
	}
}

// fuseFDs counts this process's descriptors of the FUSE device (by its
// device number: one the child opened names no path of hush's).
func fuseFDs(t *testing.T) int {
	t.Helper()
	var dev unix.Stat_t
	if err := unix.Stat(FuseDevice, &dev); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		var st unix.Stat_t
		if unix.Stat("/proc/self/fd/"+e.Name(), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == dev.Rdev {
			n++
		}
	}
	return n
}

// TestEverydayWorkThroughTheEnvLayer: in a project with a .env at its
// root and in sub/ (both served by the layer; pkg/ bound through on top),
// go build and go test, git status and commit, files made and renamed by
// the tool (seen by the host), and a file the host makes while the tool
// runs (seen by the tool) all work; the .env family is not there.
func TestEverydayWorkThroughTheEnvLayer(t *testing.T) {
	if err := FuseStatus(); err != nil {
		t.Fatalf("this machine must give the .env layer: %v", err)
	}
	w := newEverydayWorld(t, nil)
	c := canary(t)
	files := map[string]string{
		".env":          "TOKEN=" + c + "\n",
		"sub/.env":      "TOKEN=" + c + "\n",
		"go.mod":        "module example.com/app\n\ngo 1.21\n",
		"main.go":       "package main\n\nimport \"example.com/app/pkg\"\n\nfunc main() { println(pkg.Word()) }\n",
		"main_test.go":  "package main\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
		"pkg/pkg.go":    "package pkg\n\nfunc Word() string { return \"built\" }\n",
		"sub/notes.txt": "notes\n",
		".gitignore":    ".env\nsub/.env\n",
	}
	for n, body := range files {
		writeFile(t, filepath.Join(w.project, n), body)
	}
	git(t, w.project, w.home, "add", ".")
	if err := os.WriteFile(w.home+"/.gitconfig", []byte("[user]\n\tname = dev\n\temail = dev@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w = everydayWorld{home: w.home, project: w.project, policy: mustPolicy(t, PolicyOptions{Dir: w.project, Home: w.home, PathEnv: everydayPath(w.home)})}
	m, err := NewMaskSet(MaskOptions{Home: w.home, Project: w.project})
	if err != nil {
		t.Fatal(err)
	}
	// A socket the host listens on in the project root: the tool reaches
	// it (bound through, not the layer's inode of it).
	sock := filepath.Join(w.project, "host.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_ = os.Chmod(sock, 0o666)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("sock-ok\n"))
			c.Close()
		}
	}()
	script := `export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off
/usr/bin/python3 -c 'import socket;s=socket.socket(socket.AF_UNIX);s.connect("host.sock");print(s.recv(100).decode())' 2>&1
grep -F ' ` + w.project + ` ' /proc/self/mountinfo | grep -q fuse.hush && echo layer:yes
grep -F ' ` + w.project + `/pkg ' /proc/self/mountinfo | grep -q -v fuse && echo pkg:bound
go build -o app . && ./app && go test ./... 2>&1
git status --short | tr '\n' ' '; echo
git commit -q -m one && echo commit:ok
echo made > made.txt && mv made.txt renamed.txt && mkdir -p sub/new && mv renamed.txt sub/new/moved.txt && echo files:ok
for i in $(seq 50); do [ -e from-host.txt ] && break; sleep 0.1; done; cat from-host.txt
ls -a . sub | tr '\n' ' '; echo
cat .env sub/.env 2>&1 | xxd -p | tr -d '\n'; echo`
	done := make(chan string)
	go func() {
		done <- runEnv(t, &Config{Policy: w.policy, Masks: m, Constructed: true, EnvLayer: true}, w.project, script,
			[]string{"HOME=" + w.home, "PATH=" + everydayPath(w.home), "TMPDIR=/tmp"})
	}()
	time.Sleep(300 * time.Millisecond)
	writeFile(t, filepath.Join(w.project, "from-host.txt"), "host-made\n")
	out := <-done
	for _, want := range []string{"layer:yes", "pkg:bound", "sock-ok", "built", "ok  \texample.com/app", "commit:ok", "files:ok", "host-made"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing:\n%s", want, out)
		}
	}
	if strings.Contains(out, c) || strings.Contains(out, hexOf(c)) || strings.Contains(out, " .env ") {
		t.Errorf("the .env family is in the tool's world:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(w.project, "sub/new/moved.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("the tool's file is not on the host: %q %v", b, err)
	}
	if got := gitOut(t, w.project, w.home, "log", "-1", "--format=%s"); got != "one" {
		t.Errorf("the commit is not in the host's repository: %q", got)
	}
	// The control: the same cat on the host reads the value.
	if b, _ := os.ReadFile(filepath.Join(w.project, "sub/.env")); !strings.Contains(string(b), c) {
		t.Fatalf("control: sub/.env on the host does not hold the canary")
	}
}

// readsOf is the loop's "reads: N" count.
func readsOf(out string) (int, bool) {
	_, after, ok := strings.Cut(out, "reads: ")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]))
	return n, err == nil
}
