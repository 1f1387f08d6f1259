package selftest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
