package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/auditlog"
)

func auditLogOpts(a *app, asJSON bool, last int) *auditLogOptions {
	return &auditLogOptions{Out: a.Stdout, Err: a.Stderr, Config: a.loadConfig, JSON: asJSON, Last: last}
}

// TestAuditLog: the table and JSON forms of what is in audit.jsonl, the
// last N only; an empty log says so.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	if err := runAuditLog(auditLogOpts(ta.app, false, 0)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ta.out.String(), "no decisions recorded yet") {
		t.Errorf("empty log: %q", ta.out)
	}
	log := auditlog.Open(filepath.Join(ta.dir, auditlog.FileName))
	defer log.Close()
	for _, gate := range []string{"tool.run:bash", "vault.read:API_TOKEN"} {
		if err := log.Record(auditlog.Entry{Time: time.Now(), Session: "s1", Turn: 1, Tool: "bash", Gate: gate, Decision: "deny", Source: "default"}); err != nil {
			t.Fatal(err)
		}
	}
	ta.out.Reset()
	if err := runAuditLog(auditLogOpts(ta.app, true, 1)); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(ta.out.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "vault.read:API_TOKEN") {
		t.Errorf("--json --last 1:\n%s", ta.out)
	}
	ta.out.Reset()
	if err := runAuditLog(auditLogOpts(ta.app, false, 0)); err != nil {
		t.Fatal(err)
	}
	if out := ta.out.String(); !strings.HasPrefix(out, "TIME") || !strings.Contains(out, "tool.run:bash") || !strings.Contains(out, "vault.read:API_TOKEN") {
		t.Errorf("table:\n%s", out)
	}
}

// TestAuditLogFlags: --json and --last reach runF; --last 0 is a usage
// error that runs nothing.
func TestAuditLogFlags(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	var got *auditLogOptions
	cmd := under("audit", newAuditLogCmd(ta.app, func(o *auditLogOptions) error { got = o; return nil }))
	if err := runCommand(ta.app, cmd, "audit", "log", "--json", "--last", "3"); err != nil || got == nil || !got.JSON || got.Last != 3 {
		t.Fatalf("audit log --json --last 3: %v, %+v", err, got)
	}
	got = nil
	if err := runCommand(ta.app, cmd, "audit", "log", "--last", "0"); asExit(err).code != exitUsage || got != nil {
		t.Fatalf("--last 0: %v, ran %v", err, got != nil)
	}
}

// TestAuditNeedsItsConfig: `hush audit` reports a config.toml it cannot
// read before it starts anything.
func TestAuditNeedsItsConfig(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	ta.writeConfig(t, "[model\n")
	started := false
	err := runAudit(&auditOptions{Out: ta.out, Progress: ta.errOut, Ambient: ta.Ambient, Config: ta.loadConfig, Project: ta.ProjectDir,
		Executable: func() (string, error) { started = true; return "/nonexistent/hush", nil }, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), config.FileName) {
		t.Errorf("audit with a broken config.toml = %v", err)
	}
	if ta.out.Len() != 0 || started {
		t.Errorf("the audit ran: %s", ta.out)
	}
}

// TestAuditFlags: --sandbox takes on or off, nothing else.
func TestAuditFlags(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	var got *auditOptions
	cmd := newAuditCmd(ta.app, func(o *auditOptions) error { got = o; return nil })
	if err := runCommand(ta.app, cmd, "audit", "--sandbox", "off", "--no-docker", "--json"); err != nil || got == nil || !got.NoSandbox || got.Docker || !got.JSON {
		t.Fatalf("audit --sandbox off --no-docker --json: %v, %+v", err, got)
	}
	got = nil
	if err := runCommand(ta.app, cmd, "audit", "--sandbox", "maybe"); asExit(err).code != exitUsage || got != nil {
		t.Fatalf("--sandbox maybe: %v", err)
	}
}
