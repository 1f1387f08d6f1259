package config_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

func TestTrustGrantAndRevoke(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "project")
	if err := os.MkdirAll(filepath.Join(dir, ".hush"), 0o700); err != nil {
		t.Fatal(err)
	}
	store := config.NewTrustStore(filepath.Join(root, "config"))
	var out bytes.Buffer
	answer, asked := false, 0
	tr := config.Trust{Store: store, Dir: dir, Out: &out, Confirm: func(string) (bool, error) { asked++; return answer, nil }}
	if err := tr.Grant(); err != nil || !strings.HasPrefix(out.String(), "no .hush/config.toml in ") || asked != 0 {
		t.Errorf("without a project file: %q, %v, asked %d", out.String(), err, asked)
	}
	if err := os.WriteFile(filepath.Join(dir, config.ProjectFile), []byte("[[rules]]\ngate = \"tool.run:bash\"\ndecision = \"allow\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	trusted := func() bool {
		p, err := config.LoadProject(dir)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := store.Trusted(p)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	out.Reset()
	if err := tr.Grant(); err != nil || trusted() || !strings.Contains(out.String(), "rule: allow tool.run:bash for *") || !strings.HasSuffix(out.String(), "not trusted; nothing was changed\n") {
		t.Errorf("answered no: %q, %v", out.String(), err)
	}
	tr.Confirm = func(string) (bool, error) { return false, config.ErrTrustNeedsTerminal }
	if err := tr.Grant(); !errors.Is(err, config.ErrTrustNeedsTerminal) || trusted() {
		t.Errorf("without a terminal: %v", err)
	}
	answer = true
	tr.Confirm = func(string) (bool, error) { return answer, nil }
	if err := tr.Grant(); err != nil || !trusted() {
		t.Fatalf("answered yes: %v, trusted %v", err, trusted())
	}
	out.Reset()
	if err := tr.Grant(); err != nil || !strings.Contains(out.String(), "is already trusted") {
		t.Errorf("again: %q, %v", out.String(), err)
	}
	if err := tr.Revoke(); err != nil || trusted() {
		t.Errorf("revoke: %v, trusted %v", err, trusted())
	}
	out.Reset()
	if err := tr.Revoke(); err != nil || !strings.HasSuffix(out.String(), "was not trusted\n") {
		t.Errorf("revoke again: %q, %v", out.String(), err)
	}
}

func TestDescribeProject(t *testing.T) {
	t.Parallel()
	cfg := config.Config{MCP: map[string]config.MCPServer{"helper": {Command: "node", Args: []string{"h.js"},
		Env: map[string]string{"API_SECRET": "s3cr3t", "LEVEL": "debug", "GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}}
	cfg.Turn.MaxSteps = 3
	isLiteral := func(name, _ string) bool { return strings.Contains(name, "SECRET") || strings.Contains(name, "TOKEN") }
	got := strings.Join(config.DescribeProject(cfg, isLiteral), "\n")
	want := "MCP server helper: node h.js with env API_SECRET=<a literal credential, not shown> GITHUB_TOKEN=${GITHUB_TOKEN} LEVEL=debug\nmax 3 steps per turn"
	if got != want {
		t.Errorf("DescribeProject =\n%s\nwant\n%s", got, want)
	}
	if got := config.DescribeProject(config.Config{}, isLiteral); len(got) != 1 || got[0] != "nothing beyond what already applies" {
		t.Errorf("empty: %q", got)
	}
}
