package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/wizard"
)

// hostileProject is the file config/project_test.go checks what trust lets
// do (config.WithProject, which owns it; tests/trust_test.go runs the gate
// built from it end to end); here only how `hush trust` shows it for
// review.
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

// trustFixture is a user's config dir and a project dir.
type trustFixture struct{ configDir, project string }

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
