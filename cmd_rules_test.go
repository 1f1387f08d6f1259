package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/urfave/cli/v2"
)

// TestRulesListAndRm goes through runF: list shows the project's saved
// rules numbered, rm by number or by pattern removes exactly that one,
// and a rule of another project is neither listed nor removed.
func TestRulesListAndRm(t *testing.T) {
	t.Parallel()
	cfgPath := filepath.Join(t.TempDir(), config.FileName)
	proj, other := config.RealDir(t.TempDir()), config.RealDir(t.TempDir())
	rule := func(cmd string) config.Rule {
		return config.Rule{Gate: "tool.run:bash", Subject: "bash", Decision: "allow", Command: cmd}
	}
	if err := config.AddProjectRules(cfgPath, proj, []config.Rule{rule("go test:*"), rule("tail:*"), rule("npm test:*")}); err != nil {
		t.Fatal(err)
	}
	if err := config.AddProjectRules(cfgPath, other, []config.Rule{rule("make:*")}); err != nil {
		t.Fatal(err)
	}
	paths := func() (string, error) { return cfgPath, nil }
	here := func() (string, error) { return proj, nil }
	var out bytes.Buffer
	list := func(all bool) string {
		out.Reset()
		if err := runRulesList(&rulesListOptions{Out: &out, ConfigPath: paths, ProjectDir: here, All: all}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := list(false); !strings.Contains(got, "1  allow bash(go test:*)\n  2  allow bash(tail:*)\n  3  allow bash(npm test:*)") || strings.Contains(got, "make") {
		t.Fatalf("list:\n%s", got)
	}
	if got := list(true); !strings.Contains(got, "allow bash(make:*)") {
		t.Fatalf("list --all:\n%s", got)
	}
	for _, which := range []string{"2", "bash(npm test:*)"} {
		out.Reset()
		if err := runRulesRm(&rulesRmOptions{Out: &out, ConfigPath: paths, ProjectDir: here, Which: which}); err != nil {
			t.Fatalf("rm %s: %v", which, err)
		}
	}
	if got := list(false); !strings.Contains(got, "1  allow bash(go test:*)") || strings.Contains(got, "tail") || strings.Contains(got, "npm") {
		t.Fatalf("after rm:\n%s", got)
	}
	if err := runRulesRm(&rulesRmOptions{Out: &out, ConfigPath: paths, ProjectDir: here, Which: "make:*"}); err == nil {
		t.Fatal("removed another project's rule")
	}
	c, _ := config.Load(cfgPath)
	if len(c.Projects[other].Rules) != 1 {
		t.Fatalf("other project's rules: %+v", c.Projects[other])
	}
	if data, _ := os.ReadFile(cfgPath); strings.Contains(string(data), "tail") {
		t.Fatalf("config.toml still holds the removed rule:\n%s", data)
	}
}

// TestRulesCmdWiring: the command passes its flags and argument to runF.
func TestRulesCmdWiring(t *testing.T) {
	t.Parallel()
	a := &app{Stdout: &bytes.Buffer{}}
	var gotList *rulesListOptions
	var gotRm *rulesRmOptions
	app := &cli.App{Commands: []*cli.Command{{Name: "rules", Subcommands: []*cli.Command{
		newRulesListCmd(a, func(o *rulesListOptions) error { gotList = o; return nil }),
		newRulesRmCmd(a, func(o *rulesRmOptions) error { gotRm = o; return nil }),
	}}}}
	if err := runCLI(app, []string{"hush", "rules", "list", "--all"}); err != nil || gotList == nil || !gotList.All {
		t.Fatalf("list --all: %v, %+v", err, gotList)
	}
	if err := runCLI(app, []string{"hush", "rules", "rm", "go test:*"}); err != nil || gotRm == nil || gotRm.Which != "go test:*" {
		t.Fatalf("rm: %v, %+v", err, gotRm)
	}
}
