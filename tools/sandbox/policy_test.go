package sandbox

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// policyWorld is a home and a project in it, on disk.
type policyWorld struct {
	home, project, data, config string
}

func newPolicyWorld(t testing.TB) policyWorld {
	t.Helper()
	root := t.TempDir()
	w := policyWorld{home: filepath.Join(root, "home"), project: filepath.Join(root, "home", "src", "app")}
	w.data = filepath.Join(w.home, ".local", "share", "hush")
	w.config = filepath.Join(w.home, ".config", "hush")
	for _, d := range []string{
		w.project + "/.git", w.project + "/sub", w.data, w.config, w.home + "/.aws", w.home + "/.ssh",
		w.home + "/.local/bin", w.home + "/.cache/go-build", w.home + "/go/pkg/mod", w.home + "/.config/git", w.home + "/bin",
	} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{w.home + "/.gitconfig", w.home + "/.aws/credentials", w.home + "/.netrc", w.project + "/.env", w.project + "/sub/.env.local", w.data + "/vault.env"} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w policyWorld) policy(t testing.TB, mod func(*PolicyOptions)) *Policy {
	t.Helper()
	o := PolicyOptions{Dir: filepath.Join(w.project, "sub"), Home: w.home, PathEnv: w.home + "/bin:/usr/bin", HushDirs: []string{w.data, w.config}}
	if mod != nil {
		mod(&o)
	}
	p, err := NewPolicy(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// modeOf is the mode Lookup gives path, or "absent".
func modeOf(view []Entry, path string) string {
	e, ok := Lookup(view, path)
	if !ok {
		return "absent"
	}
	return e.Mode.String()
}

func TestPolicyViewIsAnAllowlist(t *testing.T) {
	t.Parallel()
	w := newPolicyWorld(t)
	view := w.policy(t, nil).View()
	for path, want := range map[string]string{
		w.project + "/main.go":                   "read-write", // the work tree, from a subdirectory
		w.project + "/.git/config":               "read-write",
		w.project + "/.env":                      "hidden",
		w.project + "/sub/.env.local":            "hidden",
		w.project + "/sub/.envrc":                "hidden",
		w.project + "/sub/env.go":                "read-write",
		w.home + "/.local/bin/tool":              "read-only",
		w.home + "/bin/x":                        "read-only", // a PATH dir in the home
		w.home + "/.cache/go-build/ab":           "read-write",
		w.home + "/go/pkg/mod/x":                 "read-write",
		w.home + "/.gitconfig":                   "read-only",
		w.home + "/.config/git/ignore":           "read-only",
		w.home + "/.aws/credentials":             "absent",
		w.home + "/.netrc":                       "absent",
		w.home + "/.ssh/id_ed25519":              "absent",
		w.data + "/vault.env":                    "absent",
		w.config + "/config.toml":                "absent",
		w.home + "/.bashrc":                      "absent", // the private home is empty
		"/usr/bin/env":                           "read-only",
		"/run/user/0/bus":                        "absent",
		"/tmp/.X11-unix/X0":                      "absent",
		"/var/run/docker.sock":                   "absent",
		"/run/docker/containerd/containerd.sock": "absent",
	} {
		if got := modeOf(view, path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

func TestPolicyWorktreeGitDirs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := t.TempDir()
	main, wt := filepath.Join(root, "main"), filepath.Join(root, "wt")
	git := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + root, "PATH=/usr/bin:/bin", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := os.MkdirAll(main, 0o700); err != nil {
		t.Fatal(err)
	}
	git(main, "init", "-q")
	git(main, "commit", "-q", "--allow-empty", "-m", "x")
	git(main, "worktree", "add", "-q", wt)
	p, err := NewPolicy(PolicyOptions{Dir: wt})
	if err != nil {
		t.Fatal(err)
	}
	view := p.View()
	for path, want := range map[string]string{
		wt + "/a.go":                     "read-write",
		main + "/.git/objects/x":         "read-write",
		main + "/.git/worktrees/wt/HEAD": "read-write",
		main + "/a.go":                   "absent", // the main work tree is another project
	} {
		if got := modeOf(view, path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

// A dotfiles repository at the home would put the whole home in the view.
func TestPolicyHomeRepositoryIsNotTheProject(t *testing.T) {
	t.Parallel()
	w := newPolicyWorld(t)
	if err := os.Mkdir(w.home+"/.git", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(w.project + "/.git"); err != nil {
		t.Fatal(err)
	}
	view := w.policy(t, nil).View()
	if got := modeOf(view, w.home+"/.aws/credentials"); got != "absent" {
		t.Errorf("~/.aws/credentials: %s with a repository at the home, want absent", got)
	}
	if got := modeOf(view, w.project+"/sub/x"); got != "read-write" {
		t.Errorf("positive control: the working directory is %s, want read-write", got)
	}
	if got := modeOf(view, w.project+"/y"); got != "absent" {
		t.Errorf("above the working directory: %s, want absent", got)
	}
}

func TestPolicyAllowAndHide(t *testing.T) {
	t.Parallel()
	w := newPolicyWorld(t)
	view := w.policy(t, func(o *PolicyOptions) {
		o.Allow = []string{"~/.aws", "rw:~/.ssh"}
		o.Hide = []string{"~/.cache/go-build", w.project + "/secrets"}
	}).View()
	for path, want := range map[string]string{
		w.home + "/.aws/credentials":   "read-only",
		w.home + "/.ssh/known_hosts":   "read-write",
		w.home + "/.cache/go-build/ab": "absent",
		w.project + "/secrets/k":       "hidden",
		w.project + "/other":           "read-write",
	} {
		if got := modeOf(view, path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	for _, a := range []string{"~/.local/share/hush", "~/.local", "~/.config/hush/x"} {
		_, err := NewPolicy(PolicyOptions{Dir: w.project, Home: w.home, HushDirs: []string{w.data, w.config}, Allow: []string{a}})
		if a == "~/.local" {
			// Allowing a directory above hush's: allowed, and hush's dir
			// inside it stays out.
			if err != nil {
				t.Errorf("allow %q: %v", a, err)
			}
			continue
		}
		if !errors.Is(err, ErrAllowHushDir) {
			t.Errorf("allow %q: %v, want ErrAllowHushDir", a, err)
		}
	}
	// hush's dirs stay out below an allowed directory, and inside the project.
	inProject := filepath.Join(w.project, ".hush-data")
	view = w.policy(t, func(o *PolicyOptions) {
		o.Allow = []string{"~/.local"}
		o.HushDirs = append(o.HushDirs, inProject)
	}).View()
	for path, want := range map[string]string{
		w.data + "/vault.env":          "hidden",
		w.home + "/.local/share/x":     "read-only",
		inProject + "/vault.env":       "hidden",
		w.project + "/.hush-data-2/ok": "read-write",
	} {
		if got := modeOf(view, path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	if _, err := NewPolicy(PolicyOptions{Dir: w.project, Hide: []string{w.home + "/src"}}); err == nil {
		t.Error("hide of a directory above the project: no error")
	}
}

// Named sockets: only a socket that exists, only when named.
func TestPolicyNamedSockets(t *testing.T) {
	t.Parallel()
	w := newPolicyWorld(t)
	sock := filepath.Join(w.home, ".ssh", "agent.sock")
	l, err := listenUnix(sock)
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	if got := modeOf(w.policy(t, nil).View(), sock); got != "absent" {
		t.Errorf("ssh agent socket without allow: %s, want absent", got)
	}
	if got := modeOf(w.policy(t, func(o *PolicyOptions) { o.Allow = []string{"ssh-agent"} }).View(), sock); got != "read-write" {
		t.Errorf("ssh agent socket with allow = [\"ssh-agent\"]: %s, want read-write", got)
	}
}

func TestRenderViewIsATree(t *testing.T) {
	t.Parallel()
	w := newPolicyWorld(t)
	var b strings.Builder
	RenderView(&b, w.policy(t, nil).View())
	out := b.String()
	// Each entry: its name (relative to the entry holding it) and mode,
	// then its reason, indented one level deeper than its parent.
	lines := strings.Split(out, "\n")
	indentOf := func(want string) int {
		for i, l := range lines {
			if l = strings.TrimLeft(l, " "); (l == want || strings.HasSuffix(l, "/"+want)) && i+1 < len(lines) {
				l = lines[i]
				return len(l) - len(strings.TrimLeft(l, " "))
			}
		}
		t.Errorf("no line %q in:\n%s", want, out)
		return -1
	}
	root := indentOf("/  [private]")
	home := indentOf("home  [private]")
	bin := indentOf(".local/bin  [read-only]")
	app := indentOf("src/app  [read-write]")
	env := indentOf(".env, .env.*, .envrc (at any depth)  [hidden]")
	if !(root < home && home < bin && bin == app && app < env) {
		t.Errorf("not a tree (indents /=%d home=%d .local/bin=%d src/app=%d .env=%d):\n%s", root, home, bin, app, env, out)
	}
	for _, want := range []string{ReasonRoot, ReasonHome, ReasonToolchain, ReasonProject, ReasonEnvFamily} {
		if !strings.Contains(out, want) {
			t.Errorf("reason %q missing:\n%s", want, out)
		}
	}
	if strings.Contains(out, ".aws") || strings.Contains(out, w.data) || strings.Contains(out, ".local/share") {
		t.Errorf("the view names what is not in it:\n%s", out)
	}
}

// BenchmarkPolicyViewLargeHome builds the view with a home of a few files
// and with one of 100,000, interleaved: the ratio must stay about 1 (the
// view stats a fixed list; it never lists the home).
func BenchmarkPolicyViewLargeHome(b *testing.B) {
	small := newPolicyWorld(b)
	large := newPolicyWorld(b)
	for i := 0; i < 100; i++ {
		d := filepath.Join(large.home, "junk", strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 1000; j++ {
			f, err := os.Create(filepath.Join(d, strconv.Itoa(j)))
			if err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
	}
	ps, pl := small.policy(b, nil), large.policy(b, nil)
	var ts, tl float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ts += timeIt(func() { ps.View() })
		tl += timeIt(func() { pl.View() })
	}
	b.ReportMetric(tl/ts, "large/small")
	b.ReportMetric(tl/float64(b.N)/1e3, "µs/view(100k-file-home)")
}

func listenUnix(path string) (net.Listener, error) { return net.Listen("unix", path) }

func timeIt(f func()) float64 {
	t0 := time.Now()
	f()
	return float64(time.Since(t0).Nanoseconds())
}
