package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/wizard"
)

// hostileProject is the file config/project_test.go checks what trust lets
// do; here only how `hush trust` shows it for review.
var hostileProject = func() string {
	b, err := os.ReadFile(filepath.Join("..", "config", "testdata", "hostile-project.toml"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func writeProjectConfig(t *testing.T, project, content string) {
	t.Helper()
	p := filepath.Join(project, config.ProjectFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

type gateWant struct {
	decision executor.Decision
	source   string
}

// decide asks a gate built from cfg, as session.go builds it, with nobody
// to ask (the non-interactive case).
func decide(cfg config.Config, gateID, subject string) executor.Verdict {
	rules := make([]executor.Rule, 0, len(cfg.Rules))
	for _, r := range cfg.Rules {
		rules = append(rules, executor.Rule{Gate: r.Gate, Subject: r.Subject, Decision: executor.Decision(r.Decision)})
	}
	v, _ := (&executor.RuleGate{Rules: rules}).Decide(context.Background(), executor.Request{GateID: gateID, Subject: subject})
	return v
}

// trustFixture is a user's config dir and a project dir, for config.WithProject.
type trustFixture struct{ configDir, project string }

func newTrustFixture(t *testing.T) trustFixture {
	t.Helper()
	root := t.TempDir()
	f := trustFixture{configDir: filepath.Join(root, "config"), project: filepath.Join(root, "project")}
	if err := os.MkdirAll(f.project, 0o700); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f trustFixture) store() config.TrustStore { return config.NewTrustStore(f.configDir) }

// trustHere records trust the way `hush trust` does after the person
// confirmed at the terminal.
func trustHere(t *testing.T, f trustFixture) {
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

func TestUntrustedProjectCannotWidenTheGate(t *testing.T) {
	t.Parallel()
	f := newTrustFixture(t)
	user := config.Config{Rules: []config.Rule{{Gate: "vault.read:NPM_TOKEN", Subject: "bash", Decision: "allow"}}}
	writeFile(t, filepath.Join(f.project, config.ProjectFile), hostileProject)

	requests := []struct {
		gate, subject      string
		untrusted, trusted gateWant
	}{
		{"vault.read:GITHUB_TOKEN", "bash", gateWant{executor.Deny, "default"}, gateWant{executor.Allow, "rule"}},
		{"vault.read:OPENAI_API_KEY", "mcp:helper", gateWant{executor.Deny, "default"}, gateWant{executor.Allow, "rule"}},
		{"tool.run:bash", "bash", gateWant{executor.Deny, "default"}, gateWant{executor.Allow, "rule"}},
		{"vault.read:DEPLOY_KEY", "bash", gateWant{executor.Deny, "rule"}, gateWant{executor.Deny, "rule"}},
		{"vault.read:NPM_TOKEN", "bash", gateWant{executor.Allow, "rule"}, gateWant{executor.Allow, "rule"}}, // the user's own rule
	}
	check := func(stage string, cfg config.Config, trusted bool) {
		t.Helper()
		for _, r := range requests {
			w := r.untrusted
			if trusted {
				w = r.trusted
			}
			if v := decide(cfg, r.gate, r.subject); v.Decision != w.decision || v.Source != w.source {
				t.Errorf("%s: %s for %s = %s by %s, want %s by %s", stage, r.gate, r.subject, v.Decision, v.Source, w.decision, w.source)
			}
		}
	}

	cfg, note, err := config.WithProject(user, f.store(), f.project)
	if err != nil {
		t.Fatal(err)
	}
	check("untrusted", cfg, false)
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
	cfg, _, err = config.WithProject(user, f.store(), f.project)
	if err != nil {
		t.Fatal(err)
	}
	check("trusted", cfg, true)
	if cfg.MCP["helper"].Command != "node" || cfg.Tools["bash"].Set["BASH_ENV"] == "" || cfg.Turn.System == "" {
		t.Errorf("trusted project settings missing")
	}
	if cfg.Model.BaseURL != "" {
		t.Errorf("a trusted project still must not set [model]: %+v", cfg.Model)
	}

	// One changed byte and the project is untrusted again.
	writeFile(t, filepath.Join(f.project, config.ProjectFile), hostileProject+"\n")
	cfg, _, err = config.WithProject(user, f.store(), f.project)
	if err != nil {
		t.Fatal(err)
	}
	check("changed after trust", cfg, false)
}

// TestTrustIsPerProject: trusting one checkout does not trust another with
// the same file.
func TestTrustIsPerProject(t *testing.T) {
	t.Parallel()
	f := newTrustFixture(t)
	writeFile(t, filepath.Join(f.project, config.ProjectFile), hostileProject)
	trustHere(t, f)
	clone := filepath.Join(filepath.Dir(f.project), "clone")
	if err := os.MkdirAll(filepath.Join(clone, ".hush"), 0o700); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(f.project, config.ProjectFile))
	if err := os.WriteFile(filepath.Join(clone, config.ProjectFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.WithProject(config.Config{}, f.store(), clone)
	if err != nil {
		t.Fatal(err)
	}
	if v := decide(cfg, "vault.read:GITHUB_TOKEN", "bash"); v.Decision != executor.Deny {
		t.Errorf("a copy of a trusted project is trusted: %+v", v)
	}
}

func TestDescribeProject(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	writeProjectConfig(t, project, hostileProject)
	cfg, err := config.Load(filepath.Join(project, config.ProjectFile))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(config.DescribeProject(cfg, IsLiteralCredential), "\n")
	want := `rule: allow vault.read:* for *
rule: allow tool.run:bash for *
rule: deny vault.read:DEPLOY_KEY for *
MCP server helper: node ./.hush/helper.js with env API_SECRET=<a literal credential, not shown> GITHUB_TOKEN=${GITHUB_TOKEN}
settings for the bash tool
a system prompt for the model`
	if got != want {
		t.Errorf("describeProject =\n%s\nwant\n%s", got, want)
	}
}

// TestTrustNeedsATerminal: without a controlling terminal nothing is
// trusted. (A test process started from a terminal has one; the refusal
// is then checked by the end-to-end suite, through the spawn layer.)
func TestTrustNeedsATerminal(t *testing.T) {
	t.Parallel()
	if tty, err := wizard.ControllingTerminal(); err == nil {
		tty.Close()
		t.Skip("this test process has a controlling terminal; tests/ checks the refusal through the spawn layer")
	}
	w := newVaultWorld(t)
	writeProjectConfig(t, w.project, hostileProject)
	err := w.env("y\n").Trust(false)
	if want := "trusting a project needs you at a terminal to confirm, and there is none here; nothing was changed"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(w.configDir, config.TrustFileName)); err == nil {
		t.Error("trust was recorded")
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
