package dockerbash

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree builds a project from a spec: "dir/" makes a directory, a value
// starting "->" makes a symlink to the rest, anything else a file holding it.
func tree(t *testing.T, spec map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for rel, v := range spec {
		p := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(rel, "/")))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(rel, "/"):
			err = os.MkdirAll(p, 0o755)
		case strings.HasPrefix(v, "->"):
			target := strings.TrimPrefix(v, "->")
			target = strings.ReplaceAll(target, "$ROOT", root)
			err = os.Symlink(target, p)
		default:
			err = os.WriteFile(p, []byte(v), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestPlanMasks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		spec     map[string]string
		patterns []string
		hide     []string // relative to the root
		want     string
	}{
		{
			name: "root and nested env files, nothing else",
			spec: map[string]string{
				".env": "A=1", ".env.local": "B=2", ".envrc": "export C=3", "sub/.env.production": "D=4",
				"sub/deep/.env": "E=5", "README": "x", "env": "not hidden", ".environment": "not hidden",
				"sub/app.env": "not hidden", "src/main.go": "package main",
			},
			want: "empty /app/.env|empty /app/.env.local|empty /app/.envrc|empty /app/sub/.env.production|empty /app/sub/deep/.env",
		},
		{
			name: "a directory named .env is hidden whole and not walked",
			spec: map[string]string{".env/prod": "A=1", ".env/dev/.env": "B=2", "ok/file": "x"},
			want: "tmpfs /app/.env",
		},
		{
			name:     "configured globs: base names at any depth, slash patterns from the root",
			spec:     map[string]string{"certs/server.pem": "k", "deep/er/client.pem": "k", "config/credentials.json": "c", "other/config/credentials.json": "kept", "secrets/a": "s", "x/secrets/b": "kept"},
			patterns: []string{"*.pem", "config/credentials.json", "/secrets/"},
			want:     "empty /app/certs/server.pem|empty /app/config/credentials.json|empty /app/deep/er/client.pem|tmpfs /app/secrets",
		},
		{
			name: "symlinks: inside the project the target is hidden, outside or dangling there is nothing to hide",
			spec: map[string]string{
				"real/values": "A=1", "sub/.env": "->../real/values", "conf/x": "y", ".env.dir": "->conf",
				".env.out": "->/etc/hostname", ".env.gone": "->nowhere", ".env.self": "->.", ".env.abs": "->$ROOT/real/values",
			},
			want: "tmpfs /app/conf|empty /app/real/values",
		},
		{
			name: "hush's data dir inside the project is hidden whole",
			spec: map[string]string{".hush/vault.env": "V=1", ".hush/dockerbash/empty": "", "main.go": "x"},
			hide: []string{".hush", "../elsewhere"},
			want: "tmpfs /app/.hush",
		},
		{
			name:     "a path under a hidden directory is not mounted again",
			spec:     map[string]string{"secrets/.env": "A=1", "secrets/x.pem": "k", "secrets/link": "->../secrets"},
			patterns: []string{"secrets", "*.pem"},
			want:     "tmpfs /app/secrets",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := tree(t, c.spec)
			var hide []string
			for _, h := range c.hide {
				hide = append(hide, filepath.Join(root, h))
			}
			got, err := planMasks(root, append(defaultMasks(), c.patterns...), hide)
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, m := range got {
				s = append(s, m.String())
			}
			if strings.Join(s, "|") != c.want {
				t.Fatalf("masks =\n%s\nwant\n%s", strings.Join(s, "|"), c.want)
			}
		})
	}
}

// TestPlanMasksHidesUnreadableDirs: a directory the walk cannot list might
// hold a .env, and the engine (root) could read it, so it is hidden whole.
func TestPlanMasksHidesUnreadableDirs(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("running as root: every directory is readable, so an unreadable one cannot be made")
	}
	root := tree(t, map[string]string{"locked/.env": "A=1", "open/file": "x"})
	if err := os.Chmod(filepath.Join(root, "locked"), 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(root, "locked"), 0o755) })
	got, err := planMasks(root, defaultMasks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].String() != "tmpfs /app/locked" {
		t.Fatalf("masks = %v, want [tmpfs /app/locked]", got)
	}
}

func TestMatchMask(t *testing.T) {
	t.Parallel()
	cases := []struct {
		patterns []string
		rel      string
		want     bool
	}{
		{defaultMasks(), ".env", true},
		{defaultMasks(), "a/b/.env", true},
		{defaultMasks(), "a/.env.test", true},
		{defaultMasks(), ".envrc", true},
		{defaultMasks(), ".env.", true},
		{defaultMasks(), "env", false},
		{defaultMasks(), "x.env", false},
		{defaultMasks(), ".envs/a", false},
		{[]string{"*.key"}, "deep/dir/tls.key", true},
		{[]string{"conf/*.json"}, "conf/a.json", true},
		{[]string{"conf/*.json"}, "x/conf/a.json", false},
		{[]string{"/top"}, "top", true},
		{[]string{"/top"}, "a/top", false},
		{[]string{"dir/"}, "a/dir", true},
		{[]string{"[bad"}, "[bad", false},
	}
	for _, c := range cases {
		if got := matchMask(c.patterns, c.rel); got != c.want {
			t.Errorf("matchMask(%q, %q) = %v, want %v", c.patterns, c.rel, got, c.want)
		}
	}
}

func TestValidMasks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		patterns []string
		want     string
	}{
		{nil, ""},
		{[]string{"*.pem", "secrets/", "/config/x.json"}, ""},
		{[]string{"ok", "[bad"}, `mask pattern "[bad" is not a valid glob`},
		{[]string{""}, `mask pattern "" is empty`},
		{[]string{"/"}, `mask pattern "/" is empty`},
	}
	for _, c := range cases {
		err := ValidMasks(c.patterns)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("ValidMasks(%q) = %q, want %q", c.patterns, got, c.want)
		}
	}
}

func TestEnsureEmptyFileRepairs(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "dockerbash")
	p, err := ensureEmptyFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 || fi.Mode().Perm() != 0o444 {
			t.Fatalf("mask file %s: %v %v", p, fi, err)
		}
	}
	check()
	// Something wrote into it: it is replaced, not trusted.
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("SECRET=1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ensureEmptyFile(dir); err != nil {
		t.Fatal(err)
	}
	check()
	// A symlink in its place is replaced too.
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", p); err != nil {
		t.Fatal(err)
	}
	if _, err := ensureEmptyFile(dir); err != nil {
		t.Fatal(err)
	}
	check()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left temporary files behind: %v", entries)
	}
}

func TestProjectRootErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if got, err := projectRoot(link); err != nil || got != real {
		t.Fatalf("projectRoot(symlink) = %q, %v; want %q", got, err, real)
	}
	cases := []struct{ dir, want string }{
		{"", "dockerbash: no project directory given"},
		{filepath.Join(dir, "missing"), "project directory " + filepath.Join(dir, "missing") + " cannot be mounted at /app: it does not exist or cannot be read"},
		{file, "project directory " + file + " cannot be mounted at /app: it is not a directory"},
		{"/", "project directory / cannot be mounted at /app: it is the root of the filesystem"},
	}
	for _, c := range cases {
		_, err := projectRoot(c.dir)
		if err == nil || err.Error() != c.want {
			t.Errorf("projectRoot(%q) = %v, want %q", c.dir, err, c.want)
		}
	}
}

func TestEngineSettingErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ambient map[string]string
		want    string
	}{
		{map[string]string{"DOCKER_HOST": "nonsense"}, "DOCKER_HOST=nonsense is not an engine address like unix:///var/run/docker.sock or tcp://host:2376"},
		{map[string]string{"DOCKER_HOST": "ssh://me@build-box"}, "DOCKER_HOST=ssh://me@build-box uses ssh://, which hush does not support; use unix:// or tcp:// (for a remote engine over ssh, forward its socket with `ssh -L /tmp/docker.sock:/var/run/docker.sock HOST` and set DOCKER_HOST=unix:///tmp/docker.sock)"},
		{map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:2376", "DOCKER_CERT_PATH": "/nonexistent/certs"}, "cannot load the Docker TLS client certificates (ca.pem, cert.pem, key.pem) from /nonexistent/certs: "},
	}
	for _, c := range cases {
		_, err := NewClient(c.ambient)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || (!strings.HasSuffix(c.want, ": ") && err.Error() != c.want) {
			t.Errorf("NewClient(%v) = %v, want %q", c.ambient, err, c.want)
		}
	}
	// Verification asked for, no certificates: refused, never plain HTTP.
	_, err := NewClient(map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:2376", "DOCKER_TLS_VERIFY": "1"})
	if want := "DOCKER_TLS_VERIFY is set but neither DOCKER_CERT_PATH nor HOME says where the client certificates are; set DOCKER_CERT_PATH"; err == nil || err.Error() != want {
		t.Errorf("TLS verify without certificates: %v, want %q", err, want)
	}
	home := t.TempDir()
	_, err = NewClient(map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:2376", "DOCKER_TLS_VERIFY": "1", "HOME": home})
	if want := "cannot load the Docker TLS client certificates (ca.pem, cert.pem, key.pem) from " + filepath.Join(home, ".docker") + ": "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("TLS verify with HOME: %v, want prefix %q", err, want)
	}
}

func TestNoEngineSentences(t *testing.T) {
	t.Parallel()
	base := errors.New("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")
	cases := []struct {
		ambient map[string]string
		err     error
		want    string
	}{
		{map[string]string{}, base, "no Docker engine answers at unix:///var/run/docker.sock; start one (`sudo systemctl start docker`, or `sudo dockerd &`) or set DOCKER_HOST to a running engine"},
		{map[string]string{"DOCKER_HOST": "tcp://u:hunter22@h:2375"}, base, "no Docker engine answers at DOCKER_HOST=tcp://u:xxxxx@h:2375; start that engine or point DOCKER_HOST at a running one"},
		{map[string]string{}, &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.EACCES)}, "no Docker engine answers: permission denied on unix:///var/run/docker.sock; add your user to the docker group (or use rootless Docker and set DOCKER_HOST to its socket)"},
		{map[string]string{"DOCKER_HOST": "tcp://h:2376"}, fmt.Errorf("ping: %w", errTLSRequired), "no Docker engine answers at tcp://h:2376 over plain HTTP (it may require TLS); set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to your client certificates"},
		// Text alone decides nothing: the same words from elsewhere are
		// not the typed errors.
		{map[string]string{}, errors.New("permission denied while trying to connect"), "no Docker engine answers at unix:///var/run/docker.sock; start one (`sudo systemctl start docker`, or `sudo dockerd &`) or set DOCKER_HOST to a running engine"},
		{map[string]string{"DOCKER_HOST": "tcp://h:2376"}, errors.New("asked without TLS"), "no Docker engine answers at DOCKER_HOST=tcp://h:2376; start that engine or point DOCKER_HOST at a running one"},
	}
	for _, c := range cases {
		err := noEngine(c.ambient, c.err)
		if err.Error() != c.want || !errors.Is(err, ErrNoEngine) {
			t.Errorf("noEngine(%v) = %q, want %q", c.ambient, err, c.want)
		}
	}
}

// TestMountRefused: the engine's reply refusing a bind mount is told apart
// by its message, and only a reply from the engine is read that way.
func TestMountRefused(t *testing.T) {
	t.Parallel()
	daemon := `invalid mount config for type "bind": bind source path does not exist: /home/u/p`
	cases := []struct {
		err  error
		want bool
	}{
		{&apiError{status: 400, message: daemon}, true},
		{fmt.Errorf("create: %w", &apiError{status: 500, message: "error mounting \"/x\" to rootfs: no such file or directory"}), true},
		{&apiError{status: 409, message: "Conflict. The container name is already in use"}, false},
		{errors.New(daemon), false}, // not the engine's reply
	}
	for _, c := range cases {
		if msg, ok := mountRefused(c.err); ok != c.want || (ok && msg == "") {
			t.Errorf("mountRefused(%v) = %q, %v; want %v", c.err, msg, ok, c.want)
		}
	}
}
