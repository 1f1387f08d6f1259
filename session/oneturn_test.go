package session

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/bash"
)

func oneTurnAgent(t *testing.T, script string) *executor.Agent {
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

func TestOneTurnClassifies(t *testing.T) {
	t.Parallel()
	var out, notes bytes.Buffer
	var conv transcript.Conversation
	kind, err := OneTurn(context.Background(), oneTurnAgent(t, `{"steps":[{"text":"hi"}]}`), &conv, " hello ", nil, &out, &notes)
	if kind != "" || err != nil || out.String() != "\n" {
		t.Errorf("a plain turn: kind %q, err %v, out %q", kind, err, out.String())
	}
	var stream bytes.Buffer
	kind, err = OneTurn(context.Background(), oneTurnAgent(t, `{"steps":[{"tool_calls":[{"name":"bash","args":{"script":"true"}}]},{"text":"done"}]}`),
		&conv, "run it", events.New(&stream), &out, &notes)
	if kind != events.KindDenied || err == nil || !strings.HasPrefix(err.Error(), "the turn ended with 1 denied request(s) (tool.run:bash)") {
		t.Errorf("a denied turn: kind %q, err %v", kind, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if kind, _ := OneTurn(ctx, oneTurnAgent(t, `{"steps":[{"text":"hi"}]}`), &conv, "x", nil, &out, &notes); kind != events.KindInterrupted {
		t.Errorf("a cancelled turn: kind %q", kind)
	}
}
