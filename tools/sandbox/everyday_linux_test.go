package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The everyday commands a developer's agent runs must keep working in the
// constructed world, as root and unprivileged (the test binary run as
// nobody): builds with their caches, git with the user's identity, an
// offline npm install, a Python venv, a tool in ~/.local/bin, and a
// session's /tmp shared between calls.

// everydayWorld is a home with a project (a git repository) in it.
type everydayWorld struct {
	home, project string
	policy        *Policy
}

func newEverydayWorld(t *testing.T, mod func(home string, o *PolicyOptions)) everydayWorld {
	t.Helper()
	if !Status().Namespaces {
		t.Skip(Status().Reason)
	}
	root := t.TempDir()
	w := everydayWorld{home: filepath.Join(root, "home"), project: filepath.Join(root, "home", "src", "app")}
	for _, d := range []string{w.project + "/sub", w.home + "/.cache/go-build", w.home + "/go/pkg/mod", w.home + "/.local/bin"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(t, w.project, w.home, "init", "-q")
	// The session's /tmp lives below a directory only its owner enters,
	// as SessionTmp's does.
	private := filepath.Join(root, "hush-tmp")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	o := PolicyOptions{Dir: w.project, Home: w.home, PathEnv: everydayPath(w.home), Tmp: filepath.Join(private, "session")}
	if mod != nil {
		mod(w.home, &o)
	}
	p, err := NewPolicy(o)
	if err != nil {
		t.Fatal(err)
	}
	w.policy = p
	return w
}

func everydayPath(home string) string {
	return home + "/.local/bin:/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin"
}

// run runs script in the world, from dir, with HOME and PATH as a session
// gives them.
func (w everydayWorld) run(t *testing.T, dir, script string) string {
	t.Helper()
	return runEnv(t, &Config{Policy: w.policy, Constructed: true}, dir, script, []string{"HOME=" + w.home, "PATH=" + everydayPath(w.home), "TMPDIR=/tmp"})
}

func git(t *testing.T, dir, home string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
}

func TestEverydayGitCommitWithTheUsersIdentity(t *testing.T) {
	w := newEverydayWorld(t, nil)
	name := canary(t)
	if err := os.WriteFile(w.home+"/.gitconfig", []byte("[user]\n\tname = "+name+"\n\temail = dev@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The policy saw no .gitconfig when it was made: make it again.
	w = everydayWorld{home: w.home, project: w.project, policy: mustPolicy(t, PolicyOptions{Dir: w.project, Home: w.home, PathEnv: everydayPath(w.home)})}
	out := w.run(t, w.project+"/sub", `echo hi > f.txt && git add f.txt && git commit -q -m one && git log -1 --format='author:%an' && git status --short | wc -l`)
	if !strings.Contains(out, "author:"+name) {
		t.Errorf("git commit from a subdirectory did not use ~/.gitconfig's identity:\n%s", out)
	}
	if got := gitOut(t, w.project, w.home, "log", "-1", "--format=%s"); got != "one" {
		t.Errorf("the commit is not in the host's repository: %q", got)
	}
}

func mustPolicy(t *testing.T, o PolicyOptions) *Policy {
	t.Helper()
	p, err := NewPolicy(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func gitOut(t *testing.T, dir, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

func TestEverydayGoBuildAndTestWithTheCaches(t *testing.T) {
	if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
		t.Skip("no Go at /usr/local/go")
	}
	w := newEverydayWorld(t, nil)
	files := map[string]string{
		"go.mod":       "module example.com/app\n\ngo 1.21\n",
		"main.go":      "package main\n\nfunc main() { println(\"built\") }\n",
		"main_test.go": "package main\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n",
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(w.project, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := w.run(t, w.project, `export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off; go build -o app . && ./app && go test ./... 2>&1 && go env GOCACHE GOMODCACHE`)
	for _, want := range []string{"built", "ok  \texample.com/app", w.home + "/.cache/go-build", w.home + "/go/pkg/mod"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing:\n%s", want, out)
		}
	}
	if ents, _ := os.ReadDir(w.home + "/.cache/go-build"); len(ents) == 0 {
		t.Errorf("the build cache on the host is empty after a build in the sandbox")
	}
}

func TestEverydayPythonVenv(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	w := newEverydayWorld(t, nil)
	out := w.run(t, w.project, `/usr/bin/python3 -m venv .venv 2>&1 && .venv/bin/pip --version`)
	if !strings.Contains(out, "pip ") || !strings.Contains(out, w.project+"/.venv") {
		t.Errorf("python3 -m venv && pip --version:\n%s", out)
	}
}

func TestEverydayToolInLocalBin(t *testing.T) {
	w := newEverydayWorld(t, nil)
	mark := canary(t)
	if err := os.WriteFile(w.home+"/.local/bin/mytool", []byte("#!/bin/sh\necho "+mark+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := w.run(t, w.project, `mytool; echo planted > ~/.local/bin/mytool 2>&1 || echo refused`)
	if !strings.Contains(out, mark) {
		t.Errorf("a tool in ~/.local/bin did not run:\n%s", out)
	}
	if !strings.Contains(out, "refused") {
		t.Errorf("~/.local/bin is writable from the sandbox:\n%s", out)
	}
}

func TestEverydaySessionTmpIsShared(t *testing.T) {
	w := newEverydayWorld(t, nil)
	mark := canary(t)
	w.run(t, w.project, `echo `+mark+` > /tmp/devserver.pid`)
	if out := w.run(t, w.project, `cat /tmp/devserver.pid; ls -a /tmp | tr '\n' ' '`); !strings.Contains(out, mark) {
		t.Errorf("a later call of the session does not see the first one's /tmp:\n%s", out)
	}
	// Per call (no session dir): nothing carries over.
	per := mustPolicy(t, PolicyOptions{Dir: w.project, Home: w.home})
	runEnv(t, &Config{Policy: per, Constructed: true}, w.project, `echo `+mark+` > /tmp/x`, nil)
	if out := runEnv(t, &Config{Policy: per, Constructed: true}, w.project, `cat /tmp/x 2>&1`, nil); strings.Contains(out, mark) {
		t.Errorf("a /tmp per call carried over:\n%s", out)
	}
}

func TestEverydayNpmCiOffline(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("uses root's npm cache")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("no npm")
	}
	cache := "/root/.npm"
	w := newEverydayWorld(t, func(home string, o *PolicyOptions) {
		if err := os.Symlink(cache, home+"/.npm"); err != nil {
			t.Fatal(err)
		}
	})
	if err := os.WriteFile(w.project+"/package.json", []byte(`{"name":"app","version":"1.0.0","dependencies":{"function-bind":"1.1.2"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lock := exec.Command("npm", "install", "--package-lock-only", "--offline", "--no-audit", "--no-fund")
	lock.Dir = w.project
	lock.Env = []string{"HOME=" + w.home, "PATH=/usr/bin:/bin"}
	if out, err := lock.CombinedOutput(); err != nil {
		t.Skipf("the npm cache does not hold function-bind 1.1.2: %v %s", err, out)
	}
	out := w.run(t, w.project, `npm ci --offline --no-audit --no-fund 2>&1 && node -e 'require("function-bind"); console.log("required:ok")'`)
	if !strings.Contains(out, "required:ok") {
		t.Errorf("npm ci --offline in the sandbox:\n%s", out)
	}
}
