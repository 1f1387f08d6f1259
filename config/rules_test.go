package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectRulesAddAndRemove: saved rules land under the project in the
// user's config.toml, the rest of the file (comments included) is kept, a
// rule is not saved twice, and rm takes out exactly the one named.
func TestProjectRulesAddAndRemove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	proj := RealDir(t.TempDir())
	path := filepath.Join(dir, FileName)
	orig := "# my settings\n[model]\nprovider = \"openai\" # keep me\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	goTest := Rule{Gate: "tool.run:bash", Subject: "bash", Decision: "allow", Command: "go test:*"}
	tail := Rule{Gate: "tool.run:bash", Subject: "bash", Decision: "allow", Command: "tail:*"}
	if err := AddProjectRules(path, proj, []Rule{goTest, tail}); err != nil {
		t.Fatal(err)
	}
	if err := AddProjectRules(path, proj, []Rule{goTest}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), orig) || strings.Count(string(data), "[[projects.") != 2 || !strings.Contains(string(data), `command = "go test:*"`) {
		t.Fatalf("config.toml:\n%s", data)
	}
	c, err := Load(path)
	if err != nil || len(c.Projects[proj].Rules) != 2 || c.Projects[proj].Rules[1] != tail || c.Model.Provider != "openai" {
		t.Fatalf("loaded %+v, %v", c.Projects, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	got, err := RemoveProjectRule(path, proj, 0)
	if err != nil || got != goTest {
		t.Fatalf("rm 1 = %+v, %v", got, err)
	}
	c, _ = Load(path)
	if r := c.Projects[proj].Rules; len(r) != 1 || r[0] != tail {
		t.Fatalf("after rm: %+v", r)
	}
	data, _ = os.ReadFile(path)
	if !strings.HasPrefix(string(data), orig) || strings.Contains(string(data), "go test") {
		t.Fatalf("after rm:\n%s", data)
	}
	if _, err := RemoveProjectRule(path, proj, 5); err == nil || !strings.Contains(err.Error(), "hush rules list") {
		t.Errorf("rm 6 = %v", err)
	}
	// A project's own config cannot hold [projects]: only the user's
	// config.toml is read for them, and a relative key is refused.
	if _, err := Parse("x.toml", []byte("[[projects.\"rel\".rules]]\ngate = \"tool.run:bash\"\nsubject = \"bash\"\ndecision = \"allow\"\n")); err == nil {
		t.Error("a relative project key loaded")
	}
	if _, err := Parse("x.toml", []byte("[[rules]]\ngate = \"vault.read:X\"\ndecision = \"allow\"\ncommand = \"go test:*\"\n")); err == nil {
		t.Error("a command on a vault.read rule loaded")
	}
}
