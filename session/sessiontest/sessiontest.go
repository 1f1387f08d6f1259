// Package sessiontest holds helpers for the tests of session and of the
// commands that run turns (package main). Only tests import it.
package sessiontest

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/bash"
)

// OneTurnAgent is an agent whose model replays script, with the bash tool
// and a gate that denies what no rule allows; its audit log and work dir
// are in t.TempDir().
func OneTurnAgent(t testing.TB, script string) *executor.Agent {
	t.Helper()
	dir := t.TempDir()
	model, err := provider.NewReplayBytes("one.json", []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return &executor.Agent{Provider: model, Tools: executor.NewRegistry(bash.Tool{}), Gate: &executor.RuleGate{},
		Audit: auditlog.Open(filepath.Join(dir, "audit.jsonl")), Secrets: func() (map[string]string, error) { return nil, nil },
		Ambient: map[string]string{"PATH": "/usr/bin:/bin"}, Dir: dir, Policy: func(string) tools.Policy { return tools.Policy{} }, Events: events.New(io.Discard)}
}
