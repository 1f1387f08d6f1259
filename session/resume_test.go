package session_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
)

func TestCloseDanglingCalls(t *testing.T) {
	t.Parallel()
	h := []provider.Message{
		{Role: provider.RoleUser, Text: "go"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "a"}, {ID: "b"}}},
		{Role: provider.RoleTool, ToolCallID: "a", Text: "done"},
	}
	got := session.CloseDanglingCalls(h)
	if len(got) != 4 || got[2].ToolCallID != "b" || !got[2].IsError || got[2].Text != "cancelled by the user" || got[3].ToolCallID != "a" {
		t.Errorf("CloseDanglingCalls = %+v", got)
	}
	if got := session.CloseDanglingCalls(h[:1]); len(got) != 1 {
		t.Errorf("a history without calls changed: %+v", got)
	}
}

func TestNotes(t *testing.T) {
	t.Parallel()
	if got := session.CompactNote(executor.Compacted{Through: 3, Kept: 2}); !strings.HasPrefix(got, "Compacted: turns 1–3 are now a summary") || !strings.Contains(got, "the last 2 turn(s)") {
		t.Errorf("CompactNote = %q", got)
	}
	s := &transcript.Session{ID: "s1", Started: time.Now(), Completed: 4, Incomplete: 1}
	s.Summary, s.SummaryThrough = "sum", 1
	got := session.ResumeNote(s)
	for _, want := range []string{"Resumed session s1 (started ", "4 turn(s)", " Turn 1 is a summary", "1 turn(s) that did not finish are left out."} {
		if !strings.Contains(got, want) {
			t.Errorf("ResumeNote lacks %q: %q", want, got)
		}
	}
	if got := session.OneLine("a\n\tb\x1b[31m c", 60); got != "a b [31m c" && strings.ContainsAny(got, "\n\t\x1b") {
		t.Errorf("OneLine = %q", got)
	}
	if got := session.OneLine(strings.Repeat("é", 70), 60); len([]rune(got)) != 60 || !strings.HasSuffix(got, "…") {
		t.Errorf("OneLine cut = %q", got)
	}
}

func TestFindAndListWithoutSessions(t *testing.T) {
	t.Parallel()
	data, dir := t.TempDir(), t.TempDir()
	if _, err := session.Find(session.Resume{Resume: true}, data, dir, nil); !errors.Is(err, session.ErrNeedsID) {
		t.Errorf("--resume without an id or a picker: %v", err)
	}
	picked := false
	_, err := session.Find(session.Resume{Resume: true}, data, dir, func([]session.Choice) (string, error) { picked = true; return "", nil })
	if err == nil || picked || !strings.HasPrefix(err.Error(), "no session to resume in "+dir) {
		t.Errorf("nothing to pick: %v (picker asked: %v)", err, picked)
	}
	if _, err := session.Find(session.Resume{Continue: true}, data, dir, nil); err == nil || !strings.HasPrefix(err.Error(), "nothing to continue: ") {
		t.Errorf("--continue: %v", err)
	}
	var out, errOut bytes.Buffer
	if err := session.List(&out, &errOut, data, dir, false); err != nil || out.String() != "No sessions yet: each `hush chat` and `hush run` keeps one.\n" {
		t.Errorf("List = %q, %v", out.String(), err)
	}
}
