package mcp_test

import (
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/mcp"
)

// TestPlanImportKeepsSecretsOutOfMCPJSON: a literal token in env goes to
// the store and the entry refers to it; a VS Code ${env:X} becomes ${X};
// a credential on the command line refuses the server; a name config.toml
// already has is skipped. The stored value is the control: it does arrive
// where secrets belong.
func TestPlanImportKeepsSecretsOutOfMCPJSON(t *testing.T) {
	t.Parallel()
	const canary = "ghp_canaryImportValue0123456789abcdef"
	stored := map[string]string{}
	plan, err := mcp.PlanImport(mcp.ImportRequest{
		Servers: map[string]config.MCPServer{
			"git hub": {Command: "npx", Env: map[string]string{"GITHUB_TOKEN": canary, "LOG_LEVEL": "debug", "API": "${env:API_KEY}"}},
			"argv":    {Command: "srv", Args: []string{"--url", "postgres://u:" + canary + "@h/db"}},
			"mine":    {Command: "x"},
		},
		InConfigTOML: map[string]config.MCPServer{"mine": {}},
		Held:         tools.NewSecretSet(nil),
		Ambient:      map[string]string{},
		Store: func(server, name, value string) (string, error) {
			stored[name] = value
			return name, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	gh, ok := plan.Add["git-hub"]
	if !ok || len(plan.Add) != 1 {
		t.Fatalf("added %v, want only git-hub", plan.Add)
	}
	if want := map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}", "LOG_LEVEL": "debug", "API": "${API_KEY}"}; len(gh.Env) != 3 || gh.Env["GITHUB_TOKEN"] != want["GITHUB_TOKEN"] || gh.Env["LOG_LEVEL"] != "debug" || gh.Env["API"] != want["API"] {
		t.Errorf("env = %v, want %v", gh.Env, want)
	}
	if stored["GITHUB_TOKEN"] != canary {
		t.Errorf("control: the token was not stored: %v", stored)
	}
	all := strings.Join(plan.Report, "\n") + strings.Join(plan.Rules, "\n")
	if strings.Contains(all, canary) {
		t.Errorf("the report shows the value:\n%s", all)
	}
	for _, want := range []string{`server "argv": not imported: argument 2 holds a credential`, `server "mine": skipped: config.toml already has [mcp.mine]`, `server "git hub": imported as "git-hub"`} {
		if !strings.Contains(all, want) {
			t.Errorf("report lacks %q:\n%s", want, all)
		}
	}
	if len(plan.Rules) != 2 || !strings.Contains(plan.Rules[1], "gate = \"vault.read:GITHUB_TOKEN\"\nsubject = \"mcp:git-hub\"") {
		t.Errorf("rules = %q", plan.Rules)
	}
}
