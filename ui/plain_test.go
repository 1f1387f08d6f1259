package ui

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/tools"
)

// TestPlainRunsTurnsAndCommands: each line is a turn (the model's text is
// printed), a slash command goes to Command instead of the model, /exit
// ends the chat, and the conversation keeps every turn.
func TestPlainRunsTurnsAndCommands(t *testing.T) {
	dir := t.TempDir()
	model, err := provider.NewReplayBytes("plain.json", []byte(`{"steps":[{"text":"first answer"},{"text":"second answer"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	agent := &executor.Agent{Provider: model, Tools: executor.NewRegistry(), Gate: &executor.RuleGate{},
		Audit: auditlog.Open(filepath.Join(dir, "audit.jsonl")), Secrets: func() (map[string]string, error) { return nil, nil },
		Ambient: map[string]string{}, Dir: dir, Policy: func(string) tools.Policy { return tools.Policy{} }, Events: NewRunView(&out)}
	var conv transcript.Conversation
	var commands []string
	p := Plain{In: strings.NewReader("hello\n\n/compact 2\nagain\n/exit\nnever\n"), Out: &out, Agent: agent, Conv: &conv,
		Redact: func(s string) string { return s }, Repair: func(m []provider.Message) []provider.Message { return m },
		Command: func(_ context.Context, _ io.Writer, cmd, arg string) { commands = append(commands, cmd+" "+arg) }}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "first answer") || !strings.Contains(got, "second answer") || strings.Contains(got, "replay finished") {
		t.Errorf("output:\n%s", got)
	}
	if len(commands) != 1 || commands[0] != "/compact 2" {
		t.Errorf("commands = %q", commands)
	}
	if n := len(conv.Messages()); n < 4 {
		t.Errorf("the conversation holds %d messages, want both turns", n)
	}
}
