package session

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session/sessiontest"
)

func TestOneTurnClassifies(t *testing.T) {
	t.Parallel()
	var out, notes bytes.Buffer
	var conv transcript.Conversation
	kind, err := OneTurn(context.Background(), sessiontest.OneTurnAgent(t, `{"steps":[{"text":"hi"}]}`), &conv, " hello ", nil, &out, &notes)
	if kind != "" || err != nil || out.String() != "\n" {
		t.Errorf("a plain turn: kind %q, err %v, out %q", kind, err, out.String())
	}
	var stream bytes.Buffer
	kind, err = OneTurn(context.Background(), sessiontest.OneTurnAgent(t, `{"steps":[{"tool_calls":[{"name":"bash","args":{"script":"true"}}]},{"text":"done"}]}`),
		&conv, "run it", events.New(&stream), &out, &notes)
	if kind != events.KindDenied || err == nil || !strings.HasPrefix(err.Error(), "the turn ended with 1 denied request(s) (tool.run:bash)") {
		t.Errorf("a denied turn: kind %q, err %v", kind, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if kind, _ := OneTurn(ctx, sessiontest.OneTurnAgent(t, `{"steps":[{"text":"hi"}]}`), &conv, "x", nil, &out, &notes); kind != events.KindInterrupted {
		t.Errorf("a cancelled turn: kind %q", kind)
	}
}
