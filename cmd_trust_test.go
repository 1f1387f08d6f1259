package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/wizard"
)

// hostileProject is the file config/project_test.go checks what trust lets
// do (config.WithProject, which owns it; tests/trust_test.go runs the gate
// built from it end to end); here only how `hush trust` shows it for
// review.
var hostileProject = func() string {
	b, err := os.ReadFile(filepath.Join("config", "testdata", "hostile-project.toml"))
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

// trustFixture is a user's config dir and a project dir.
type trustFixture struct{ configDir, project string }

func (f trustFixture) store() config.TrustStore { return config.NewTrustStore(f.configDir) }

func TestDescribeProject(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	writeProjectConfig(t, project, hostileProject)
	cfg, err := config.Load(filepath.Join(project, config.ProjectFile))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(config.DescribeProject(cfg, isLiteralCredential), "\n")
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
	ta := newTestApp(t, "y\n")
	writeProjectConfig(t, ta.project, hostileProject)
	err := runTrust(trustOpts(ta.app, confirmOnTerminal, false))
	if want := "trusting a project needs you at a terminal to confirm, and there is none here; nothing was changed"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	if _, err := os.Stat(filepath.Join(ta.configDir, config.TrustFileName)); err == nil {
		t.Error("trust was recorded")
	}
}

func trustOpts(a *app, confirm func(string) (bool, error), revoke bool) *trustOptions {
	return &trustOptions{Out: a.Stdout, Config: a.loadConfig, Project: a.ProjectDir, Confirm: confirm, Revoke: revoke}
}

// TestTrustRevokeAndNothingToTrust: trust in a project without a project
// config trusts nothing and asks nothing; trust after a yes records the
// file; revoke forgets it.
func TestTrustRevokeAndNothingToTrust(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	asked := 0
	yes := func(string) (bool, error) { asked++; return true, nil }
	if err := runTrust(trustOpts(ta.app, yes, false)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ta.out.String(), "no "+config.ProjectFile+" in ") || asked != 0 {
		t.Errorf("trust without a project config: %q (asked %d)", ta.out, asked)
	}
	writeProjectConfig(t, ta.project, hostileProject)
	f := trustFixture{configDir: ta.configDir, project: ta.project}
	if err := runTrust(trustOpts(ta.again(""), yes, false)); err != nil {
		t.Fatal(err)
	}
	if rec, _ := f.store().Read(); len(rec.Projects) != 1 || asked != 1 {
		t.Fatalf("control: trust was not recorded after a yes: %+v (asked %d)", rec, asked)
	}
	if err := runTrust(trustOpts(ta.again(""), yes, true)); err != nil {
		t.Fatal(err)
	}
	if rec, err := f.store().Read(); err != nil || len(rec.Projects) != 0 {
		t.Errorf("after revoke the store holds %+v, %v", rec.Projects, err)
	}
}

func TestProjectTrustGrantAndRevoke(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "project")
	if err := os.MkdirAll(filepath.Join(dir, ".hush"), 0o700); err != nil {
		t.Fatal(err)
	}
	store := config.NewTrustStore(filepath.Join(root, "config"))
	var out bytes.Buffer
	answer, asked := false, 0
	tr := projectTrust{Store: store, Dir: dir, Out: &out, Confirm: func(string) (bool, error) { asked++; return answer, nil }}
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
