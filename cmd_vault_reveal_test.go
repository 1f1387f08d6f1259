package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/vault"
)

// fakeTTY is a terminal: what the person types, and what hush writes.
type fakeTTY struct {
	in  *strings.Reader
	out bytes.Buffer
}

func (f *fakeTTY) Read(p []byte) (int, error)  { return f.in.Read(p) }
func (f *fakeTTY) Write(p []byte) (int, error) { return f.out.Write(p) }

func TestRevealAsksAndAudits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ef := vault.NewEnvFile(filepath.Join(dir, vault.EnvFileName))
	const secret = "reveal-canary-3f9a"
	if err := ef.Set("API_TOKEN", secret); err != nil {
		t.Fatal(err)
	}
	lv := &vault.Layered{Backend: ef}
	logPath := filepath.Join(dir, auditlog.FileName)
	audit := auditlog.Open(logPath)

	yes := &fakeTTY{in: strings.NewReader("y\n")}
	if err := reveal(context.Background(), yes, audit, lv, "API_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(yes.out.String(), "Show the value of API_TOKEN (from the vault)") || !strings.HasSuffix(yes.out.String(), secret+"\n") {
		t.Errorf("terminal after yes: %q", yes.out.String())
	}
	no := &fakeTTY{in: strings.NewReader("n\n")}
	if err := reveal(context.Background(), no, audit, lv, "API_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(no.out.String(), secret) || !strings.HasSuffix(no.out.String(), "not shown\n") {
		t.Errorf("terminal after no: %q", no.out.String())
	}
	if err := reveal(context.Background(), nil, audit, nil, "API_TOKEN"); err != errRevealNeedsTerminal {
		t.Errorf("without a terminal: %v", err)
	}
	if err := reveal(context.Background(), &fakeTTY{in: strings.NewReader("y\n")}, audit, lv, "MISSING"); err == nil {
		t.Error("revealing a missing name succeeded")
	}
	entries, _, err := auditlog.Read(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Gate+" "+string(e.Decision)+" "+e.Source)
	}
	want := []string{"vault.read:API_TOKEN allow prompt", "vault.read:API_TOKEN deny prompt", "vault.read:API_TOKEN deny no terminal"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("audit log = %q, want %q", got, want)
	}
}

func TestVaultRevealWithoutATerminalRecordsTheDenial(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	open := func() (*vault.Layered, error) {
		t.Error("the vault was opened without a terminal to reveal on")
		return nil, errors.New("unused")
	}
	noTTY := func() (io.ReadWriteCloser, error) { return nil, errors.New("no controlling terminal") }
	if err := runVaultReveal(&vaultRevealOptions{DataDir: dataDir, Warn: func(s string) { t.Log(s) }, Terminal: noTTY, Vault: open, Name: "API_TOKEN"}); !errors.Is(err, errRevealNeedsTerminal) {
		t.Errorf("err %v, want errRevealNeedsTerminal", err)
	}
	log, err := os.ReadFile(filepath.Join(dataDir, auditlog.FileName))
	if err != nil || !strings.Contains(string(log), "vault.read:API_TOKEN") || !strings.Contains(string(log), revealSubject) {
		t.Errorf("the audit log does not record the refused reveal (%v):\n%s", err, log)
	}
	if err := runVaultReveal(&vaultRevealOptions{Terminal: noTTY, Vault: open, Name: "API_TOKEN"}); !errors.Is(err, errRevealNeedsTerminal) {
		t.Errorf("without a data dir: err %v", err)
	}
}
