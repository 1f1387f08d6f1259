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
		Redact:  func(s string) string { return s },
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

// TestPlainSlashCommandsNeverReachTheModel: in plain chat /help, /clear,
// /tools and an unknown /x are answered by hush (the model is never asked:
// the replay has one step, for the one real prompt); "//x" and a message
// that starts with a path go to the model.
func TestPlainSlashCommandsNeverReachTheModel(t *testing.T) {
	dir := t.TempDir()
	model, err := provider.NewReplayBytes("plain.json", []byte(`{"steps":[{"text":"first answer"},{"text":"second answer"},{"text":"third answer"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	agent := &executor.Agent{Provider: model, Tools: executor.NewRegistry(), Gate: &executor.RuleGate{},
		Audit: auditlog.Open(filepath.Join(dir, "audit.jsonl")), Secrets: func() (map[string]string, error) { return nil, nil },
		Ambient: map[string]string{}, Dir: dir, Policy: func(string) tools.Policy { return tools.Policy{} }, Events: NewRunView(&out)}
	var conv transcript.Conversation
	p := Plain{In: strings.NewReader("hello\n/help\n/tools\n/frob x\n/clear\n//help me\n/etc/hosts has a typo\n"), Out: &out, Agent: agent, Conv: &conv,
		Redact:  func(s string) string { return s },
		Command: func(context.Context, io.Writer, string, string) { t.Error("Command called") }}
	if err := p.Run(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"first answer", "Commands (answered by hush", "/tools is in the full chat only",
		"unknown command /frob", "(new conversation", "second answer", "third answer"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	var prompts []string
	for _, m := range conv.Messages() {
		if m.Role == provider.RoleUser {
			prompts = append(prompts, m.Text)
		}
	}
	// /clear dropped "hello"; what is left is what the model was sent.
	if want := []string{"/help me", "/etc/hosts has a typo"}; strings.Join(prompts, "|") != strings.Join(want, "|") {
		t.Errorf("the model was sent %q, want %q", prompts, want)
	}
}
