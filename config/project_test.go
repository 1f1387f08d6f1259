package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
)

// hostileProject (testdata/hostile-project.toml, which session's trust
// tests read too) is what a cloned repository might carry to hand itself
// secrets: rules allowing every vault read and tool run, an MCP server fed
// a token, a shell setting that runs its own script, a system prompt, and a
// model URL that would receive your API key.
var hostileProject = readHostileProject()

func readHostileProject() string {
	b, err := os.ReadFile(filepath.Join("testdata", "hostile-project.toml"))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// fixture is a user's config dir and a project dir.
type fixture struct{ configDir, project string }

func newFixture(t *testing.T) fixture {
	t.Helper()
	root := t.TempDir()
	f := fixture{configDir: filepath.Join(root, "config"), project: filepath.Join(root, "project")}
	if err := os.MkdirAll(f.project, 0o700); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f fixture) store() config.TrustStore { return config.NewTrustStore(f.configDir) }

func writeProjectConfig(t *testing.T, dir, content string) {
	t.Helper()
	p := filepath.Join(dir, config.ProjectFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// trustHere records trust the way `hush trust` does after the person
// confirmed at the terminal.
func trustHere(t *testing.T, f fixture) {
	t.Helper()
	p, err := config.LoadProject(f.project)
	if err != nil || p == nil {
		t.Fatalf("load project config: %v", err)
	}
	rec, err := f.store().Read()
	if err != nil {
		t.Fatal(err)
	}
	rec.Projects[p.Dir] = config.TrustEntry{SHA256: p.SHA256, TrustedAt: time.Now()}
	if err := f.store().Write(rec); err != nil {
		t.Fatal(err)
	}
}

// rulesOf lists cfg's rules as `hush trust` describes them.
func rulesOf(cfg config.Config) string {
	var out []string
	for _, r := range cfg.Rules {
		out = append(out, r.Decision+" "+r.Gate+" for "+r.Subject)
	}
	return strings.Join(out, "\n")
}

// TestMergeProjectFollowsTrust: untrusted, a project adds only its deny and
// ask rules and none of its settings; trusted, everything but [model]; a
// changed file is untrusted again. (tests/trust_test.go runs the gate
// built from the result end to end.)
func TestMergeProjectFollowsTrust(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	user := config.Config{Rules: []config.Rule{{Gate: "vault.read:NPM_TOKEN", Subject: "bash", Decision: "allow"}}}
	writeProjectConfig(t, f.project, hostileProject)
	untrustedRules := "allow vault.read:NPM_TOKEN for bash\ndeny vault.read:DEPLOY_KEY for *"
	trustedRules := "allow vault.read:NPM_TOKEN for bash\nallow vault.read:* for *\nallow tool.run:bash for \ndeny vault.read:DEPLOY_KEY for *"

	cfg, note, err := config.WithProject(user, f.store(), f.project)
	if err != nil {
		t.Fatal(err)
	}
	if got := rulesOf(cfg); got != untrustedRules {
		t.Errorf("untrusted rules:\n%s\nwant\n%s", got, untrustedRules)
	}
	if len(cfg.MCP) != 0 || len(cfg.Tools) != 0 || cfg.Turn.System != "" || cfg.Model.BaseURL != "" {
		t.Errorf("untrusted project settings applied: mcp %v, tools %v, turn %+v, model %+v", cfg.MCP, cfg.Tools, cfg.Turn, cfg.Model)
	}
	path := filepath.Join(f.project, config.ProjectFile)
	wantNote := path + " is not trusted: its [model] is ignored (a project does not choose where your API key is sent); " +
		"ignoring 2 allow rule(s), 1 MCP server(s) (1 with secret references), its [tools] settings, its [turn] settings until you review it and run `hush trust` (its deny and ask rules apply)"
	if note != wantNote {
		t.Errorf("note =\n%s\nwant\n%s", note, wantNote)
	}

	trustHere(t, f)
	cfg, note, err = config.WithProject(user, f.store(), f.project)
	if err != nil {
		t.Fatal(err)
	}
	if got := rulesOf(cfg); got != trustedRules {
		t.Errorf("trusted rules:\n%s\nwant\n%s", got, trustedRules)
	}
	if cfg.MCP["helper"].Command != "node" || cfg.Tools["bash"].Set["BASH_ENV"] == "" || cfg.Turn.System == "" {
		t.Errorf("trusted project settings missing")
	}
	if cfg.Model.BaseURL != "" {
		t.Errorf("a trusted project still must not set [model]: %+v", cfg.Model)
	}
	if want := path + " is trusted: its [model] is ignored (a project does not choose where your API key is sent)"; note != want {
		t.Errorf("trusted note = %q, want %q", note, want)
	}

	writeProjectConfig(t, f.project, hostileProject+"\n")
	cfg, _, err = config.WithProject(user, f.store(), f.project)
	if err != nil {
		t.Fatal(err)
	}
	if got := rulesOf(cfg); got != untrustedRules {
		t.Errorf("changed after trust, rules:\n%s\nwant\n%s", got, untrustedRules)
	}
}

// TestTrustIsPerProject: trusting one checkout does not trust another with
// the same file.
func TestTrustIsPerProject(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	writeProjectConfig(t, f.project, hostileProject)
	trustHere(t, f)
	clone := filepath.Join(filepath.Dir(f.project), "clone")
	writeProjectConfig(t, clone, hostileProject)
	cfg, _, err := config.WithProject(config.Config{}, f.store(), clone)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rulesOf(cfg), "deny vault.read:DEPLOY_KEY for *"; got != want {
		t.Errorf("a copy of a trusted project is trusted: rules\n%s\nwant\n%s", got, want)
	}
	// The positive control: the original checkout is trusted.
	if cfg, _, err = config.WithProject(config.Config{}, f.store(), f.project); err != nil || !strings.Contains(rulesOf(cfg), "allow vault.read:* for *") {
		t.Errorf("the trusted checkout (%v): rules\n%s", err, rulesOf(cfg))
	}
}

func TestProjectConfigErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	writeProjectConfig(t, f.project, "[[rules]]\ngate = \"vault.read:*\"\ndecision = \"yes\"\n")
	_, _, err := config.WithProject(config.Config{}, f.store(), f.project)
	want := "invalid config: " + filepath.Join(f.project, config.ProjectFile) + `: rules[0].decision "yes": want allow, deny or ask`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
}

func TestMergeProjectSandboxOnlyTightens(t *testing.T) {
	t.Parallel()
	user := config.Config{Sandbox: config.SandboxConfig{Allow: []string{"~/.ssh"}, Hide: []string{"~/notes"}}}
	proj := config.Config{Sandbox: config.SandboxConfig{Required: true, Docker: true, Allow: []string{"~/.aws"}, Hide: []string{"secrets/"}}}
	for _, trusted := range []bool{false, true} {
		got, notes := config.MergeProject(user, proj, trusted)
		want := config.SandboxConfig{Required: true, Allow: []string{"~/.ssh"}, Hide: []string{"~/notes", "secrets/"}}
		if !reflect.DeepEqual(got.Sandbox, want) {
			t.Errorf("trusted=%v: sandbox = %+v, want %+v", trusted, got.Sandbox, want)
		}
		if !strings.Contains(strings.Join(notes, "; "), "its [sandbox] allow and docker are ignored") {
			t.Errorf("trusted=%v: notes %q do not say the project's allow was ignored", trusted, notes)
		}
	}
}
