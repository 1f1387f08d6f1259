package config_test

import (
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

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
