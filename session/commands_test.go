package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/auditlog"
)

// TestShowEnv: `hush env` shows a plain variable the policy passes and
// masks a secret's value, which stays off the output.
func TestShowEnv(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	e := w.env("")
	e.Ambient["LANG"] = "C.UTF-8"
	e.Ambient["DEPLOY_TOKEN"] = "tok-0a1b2c3d4e5f6a7b8c9d"
	if err := os.WriteFile(filepath.Join(w.configDir, config.FileName), []byte("[tools.bash]\ninclude = [\"LANG\", \"DEPLOY_TOKEN\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.ShowEnv("bash", true); err != nil {
		t.Fatalf("%v\n%s", err, w.errOut)
	}
	out := w.out.String()
	if !strings.Contains(out, "LANG=C.UTF-8") || strings.Contains(out, "tok-0a1b2c3d4e5f6a7b8c9d") {
		t.Errorf("hush env:\n%s", out)
	}
	if err := w.env("").ShowEnv("mcp:nosuch", false); err == nil {
		t.Error("hush env --tool mcp:nosuch succeeded")
	}
}

func TestSandboxShow(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	if err := w.env("").SandboxShow("dockerbash"); err == nil || !strings.HasPrefix(err.Error(), "dockerbash runs in a container, not the host sandbox") {
		t.Errorf("sandbox show dockerbash = %v", err)
	}
	dotEnv := filepath.Join(w.project, ".env")
	if err := os.WriteFile(dotEnv, []byte("K=v\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.env("").SandboxShow("bash"); err != nil {
		t.Fatal(err)
	}
	if out := w.out.String(); !strings.HasPrefix(out, "# sandbox for bash: ") || !strings.Contains(out, "file  "+dotEnv+"\n") {
		t.Errorf("the bash sandbox does not hide the project's .env:\n%s", out)
	}
	if err := w.env("").SandboxShow("mcp:nosuch"); err == nil {
		t.Error("sandbox show of an unknown MCP server succeeded")
	}
}

// TestAuditLog: the table and JSON forms of what is in audit.jsonl, the
// last N only; an empty log says so.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	if err := w.env("").AuditLog(false, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.out.String(), "no decisions recorded yet") {
		t.Errorf("empty log: %q", w.out)
	}
	log := auditlog.Open(filepath.Join(w.dataDir, auditlog.FileName))
	defer log.Close()
	for _, gate := range []string{"tool.run:bash", "vault.read:API_TOKEN"} {
		if err := log.Record(auditlog.Entry{Time: time.Now(), Session: "s1", Turn: 1, Tool: "bash", Gate: gate, Decision: "deny", Source: "default"}); err != nil {
			t.Fatal(err)
		}
	}
	w.out.Reset()
	if err := w.env("").AuditLog(true, 1); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(w.out.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "vault.read:API_TOKEN") {
		t.Errorf("--json --last 1:\n%s", w.out)
	}
	w.out.Reset()
	if err := w.env("").AuditLog(false, 0); err != nil {
		t.Fatal(err)
	}
	if out := w.out.String(); !strings.HasPrefix(out, "TIME") || !strings.Contains(out, "tool.run:bash") || !strings.Contains(out, "vault.read:API_TOKEN") {
		t.Errorf("table:\n%s", out)
	}
}

// TestTrustRevokeAndNothingToTrust: trust in a project without a project
// config trusts nothing; revoke forgets a recorded trust.
func TestTrustRevokeAndNothingToTrust(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	if err := w.env("").Trust(false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.out.String(), "no "+config.ProjectFile+" in ") {
		t.Errorf("trust without a project config: %q", w.out)
	}
	writeProjectConfig(t, w.project, hostileProject)
	f := trustFixture{configDir: w.configDir, project: w.project}
	trustHere(t, f)
	if rec, _ := f.store().Read(); len(rec.Projects) != 1 {
		t.Fatalf("control: trust was not recorded: %+v", rec)
	}
	if err := w.env("").Trust(true); err != nil {
		t.Fatal(err)
	}
	if rec, err := f.store().Read(); err != nil || len(rec.Projects) != 0 {
		t.Errorf("after revoke the store holds %+v, %v", rec.Projects, err)
	}
}

// TestSelfTestNeedsItsConfig: `hush audit` reports a config.toml it cannot
// read before it starts anything.
func TestSelfTestNeedsItsConfig(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	if err := os.WriteFile(filepath.Join(w.configDir, config.FileName), []byte("[model\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := w.env("").SelfTest(false, false, false, time.Second)
	if err == nil || !strings.Contains(err.Error(), config.FileName) {
		t.Errorf("audit with a broken config.toml = %v", err)
	}
	if w.out.Len() != 0 {
		t.Errorf("the audit ran: %s", w.out)
	}
}
