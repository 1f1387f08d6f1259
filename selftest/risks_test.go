package selftest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

// TestRisksNameGitCredentials: a project whose .git/config holds a token
// (an extra header, as CI checkouts leave it, or a remote URL with a
// password) is named as a risk, without the token; a clean one is not.
func TestRisksNameGitCredentials(t *testing.T) {
	t.Parallel()
	const token = "ghs_canaryGitToken0123456789"
	cases := []struct {
		name, config, want string
	}{
		{"extraheader", "[core]\n\trepositoryformatversion = 0\n[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic " + token + "\n", "an http.extraheader with an Authorization credential"},
		{"url with password", "[remote \"origin\"]\n\turl = https://x-access-token:" + token + "@github.com/o/r.git\n", "a remote URL with a password"},
		{"clean", "[remote \"origin\"]\n\turl = https://github.com/o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(c.config), 0o644); err != nil {
				t.Fatal(err)
			}
			risks := strings.Join(Risks(RiskInput{ProjectDir: dir, DataDir: filepath.Join(dir, "data")}), "\n")
			if strings.Contains(risks, token) {
				t.Fatalf("a risk shows the token: %s", risks)
			}
			if got := strings.Contains(risks, ".git/config holds"); got != (c.want != "") || !strings.Contains(risks, c.want) {
				t.Errorf("risks:\n%s\nwant one naming %q", risks, c.want)
			}
		})
	}
}

// TestRisksNameWhatLooksLikeASecret: an exported credential-named variable
// is a risk when its value looks like a credential, not when it is a path
// or a word; a literal key in mcp.json is flagged like one in config.toml;
// every legacy .env file of the project is named, subdirectories too.
func TestRisksNameWhatLooksLikeASecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, rel := range []string{".env.local", "sub/.env"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("K=v\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const token = "ghp_9fK2mQ7xW4tZ8vB1nR6yC3"
	environ := "AWS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt\x00AWS_PROFILE=default\x00AWS_REGION=us-east-1\x00GITHUB_TOKEN=" + token + "\x00"
	mcpJSON := map[string]config.MCPServer{"github": {Command: "npx", Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": token, "LOG_LEVEL": "debug"}}}
	risks := strings.Join(Risks(RiskInput{ProjectDir: dir, DataDir: filepath.Join(dir, "data"), ParentEnviron: []byte(environ), MCPJSON: mcpJSON}), "\n")
	if strings.Contains(risks, token) {
		t.Fatalf("a risk shows the token:\n%s", risks)
	}
	for _, want := range []string{
		"the shell that started hush exports GITHUB_TOKEN:",
		"MCP server github has a literal value for GITHUB_PERSONAL_ACCESS_TOKEN in mcp.json",
		filepath.Join(dir, ".env.local") + " is a legacy secret file",
		filepath.Join(dir, "sub", ".env") + " is a legacy secret file",
	} {
		if !strings.Contains(risks, want) {
			t.Errorf("risks lack %q:\n%s", want, risks)
		}
	}
	for _, bad := range []string{"AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_REGION", "LOG_LEVEL"} {
		if strings.Contains(risks, bad) {
			t.Errorf("risks flag %s:\n%s", bad, risks)
		}
	}
}

// TestRisksNameASymlinkedHushDir: a config dir reached through a symlink in
// a directory the user writes (a dotfiles setup) is a risk the sandbox
// cannot close — a tool replaces the link — so the audit names it; the
// same dir by its real path is not.
func TestRisksNameASymlinkedHushDir(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	real := filepath.Join(home, "dotfiles", "hush")
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, ".config", "hush")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	risks := strings.Join(Risks(RiskInput{ProjectDir: home, ConfigDir: link, DataDir: filepath.Join(home, "data")}), "\n")
	if !strings.Contains(risks, "config dir "+link+" is reached through the symlink "+link) {
		t.Errorf("risks:\n%s\nwant the symlinked config dir named", risks)
	}
	if risks := strings.Join(Risks(RiskInput{ProjectDir: home, ConfigDir: real, DataDir: filepath.Join(home, "data")}), "\n"); strings.Contains(risks, "symlink") {
		t.Errorf("the real path is named a risk:\n%s", risks)
	}
}

// TestRisksNameWhatReadOnlyCannotCover: ~/.ssh or a PATH directory on the
// way to hush reached through a symlink a tool may replace, and a missing
// ~/.ssh where an ssh server listens, are named; the same by real paths,
// or with no server listening, are not.
func TestRisksNameWhatReadOnlyCannotCover(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"dotfiles/ssh", "dotfiles/bin", "opt"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(home, "dotfiles/bin/hush")
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{home + "/.ssh": home + "/dotfiles/ssh", home + "/bin": home + "/dotfiles/bin"} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	in := RiskInput{ProjectDir: home, DataDir: filepath.Join(home, "data"), Home: home, Executable: exe, PathEnv: "relative:" + home + "/opt:" + home + "/bin:/usr/bin"}
	risks := strings.Join(Risks(in), "\n")
	for _, want := range []string{home + "/.ssh is reached through the symlink " + home + "/.ssh",
		"hush is run as " + home + "/bin/hush, reached through the symlink " + home + "/bin"} {
		if !strings.Contains(risks, want) {
			t.Errorf("risks:\n%s\nwant %q", risks, want)
		}
	}
	in.Home, in.PathEnv = home+"/dotfiles", home+"/dotfiles/bin" // real paths: dotfiles/.ssh does not exist
	defer func(f func() bool) { sshdListening = f }(sshdListening)
	for _, listening := range []bool{false, true} {
		sshdListening = func() bool { return listening }
		risks := strings.Join(Risks(in), "\n")
		if strings.Contains(risks, "symlink") {
			t.Errorf("real paths are named a risk:\n%s", risks)
		}
		if named := strings.Contains(risks, "an ssh server listens on port 22 and "+home+"/dotfiles/.ssh does not exist"); named != listening {
			t.Errorf("sshd listening %v: missing ~/.ssh named %v:\n%s", listening, named, risks)
		}
	}
}

// TestListeningOn reads the kernel's socket tables: a port this test
// listens on is found, the same port closed is not.
func TestListeningOn(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if !listeningOn(port) {
		t.Errorf("port %d is listened on, but listeningOn says no", port)
	}
	l.Close()
	if listeningOn(port) {
		t.Errorf("port %d is closed, but listeningOn says it listens", port)
	}
}
