package executor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
)

// TestCompactKeepsTheLastTurnsVerbatim: the model's summary replaces the
// older turns, the last N stay exactly as they were, the summary is stored
// in the transcript as a summary entry, and a secret the model echoes in
// its summary is redacted.
func TestCompactKeepsTheLastTurnsVerbatim(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowBash,
		provider.Response{Text: "one done"}, provider.Response{Text: "two done"}, provider.Response{Text: "three done"},
		provider.Response{Text: "Summary: the user asked for one; the key canary-granted-value-1 was used."},
		provider.Response{Text: "four done"})
	var conv transcript.Conversation
	for _, p := range []string{"one", "two", "three"} {
		res, err := f.agent.RunTurn(context.Background(), conv.Messages(), p)
		if err != nil {
			t.Fatal(err)
		}
		conv.Add(res.Turn, res.Messages)
	}
	kept := append([]transcript.Turn(nil), conv.Turns[1:]...)
	c, err := f.agent.Compact(context.Background(), &conv, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c.Through != 1 || c.Kept != 2 || c.Summarized != 1 || strings.Contains(c.Summary, "canary-granted") || !strings.Contains(c.Summary, "[REDACTED:GRANTED]") {
		t.Fatalf("compacted %+v", c)
	}
	msgs := conv.Messages()
	if len(msgs) != 5 || !strings.HasPrefix(msgs[0].Text, transcript.SummaryPrefix) {
		t.Fatalf("history after compaction: %+v", msgs)
	}
	for i, tr := range kept {
		for j, m := range tr.Messages {
			if got := conv.Turns[i].Messages[j]; got.Text != m.Text || got.Role != m.Role {
				t.Errorf("kept turn %d message %d changed: %+v", tr.N, j, got)
			}
		}
	}
	summarizer := f.model.seen[3]
	if len(summarizer.Tools) != 0 || !strings.Contains(summarizer.Messages[0].Text, "User: one") || strings.Contains(summarizer.Messages[0].Text, "User: two") {
		t.Errorf("the summarizer was sent %+v", summarizer)
	}
	// The next turn carries the summary, not the old turn.
	if _, err := f.agent.RunTurn(context.Background(), conv.Messages(), "four"); err != nil {
		t.Fatal(err)
	}
	next := f.model.seen[4].Messages
	if !strings.HasPrefix(next[0].Text, transcript.SummaryPrefix) || next[1].Text != "two" {
		t.Errorf("next request starts %q, %q", next[0].Text, next[1].Text)
	}
	if !strings.Contains(f.transcript.String(), `"type":"summary"`) || !strings.Contains(f.transcript.String(), `"through_turn":1`) {
		t.Errorf("no summary entry in the transcript:\n%s", f.transcript.String())
	}
	if _, err := f.agent.Compact(context.Background(), &transcript.Conversation{Turns: conv.Turns[:1]}, 2); !errors.Is(err, executor.ErrNothingToCompact) {
		t.Errorf("compacting one turn: %v", err)
	}
}

func TestNeedsCompactionNearTheWindow(t *testing.T) {
	t.Parallel()
	a := &executor.Agent{Compaction: executor.CompactPolicy{Auto: true, Window: 1000, Threshold: 0.5, KeepTurns: 1}}
	conv := &transcript.Conversation{}
	conv.Add(1, []provider.Message{{Role: provider.RoleUser, Text: "a"}, {Role: provider.RoleAssistant, Text: "b"}})
	conv.Add(2, []provider.Message{{Role: provider.RoleUser, Text: strings.Repeat("x", 2400)}, {Role: provider.RoleAssistant, Text: "b"}})
	if a.NeedsCompaction(conv, 400) {
		t.Error("400 of 1000 tokens at a 0.5 threshold compacts")
	}
	if !a.NeedsCompaction(conv, 600) {
		t.Error("600 of 1000 tokens at a 0.5 threshold does not compact")
	}
	if !a.NeedsCompaction(conv, 0) {
		t.Error("no reported usage: the estimate (about 600 tokens) does not compact")
	}
	a.Compaction.Auto = false
	if a.NeedsCompaction(conv, 900) {
		t.Error("auto = false compacts")
	}
}
