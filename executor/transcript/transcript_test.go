package transcript_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
)

func turn(n int, prompt, answer string, withCall bool) []provider.Message {
	msgs := []provider.Message{{Role: provider.RoleUser, Text: prompt}}
	if withCall {
		id := "c" + prompt
		msgs = append(msgs,
			provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: id, Name: "bash", Args: json.RawMessage(`{"script":"ls"}`)}}},
			provider.Message{Role: provider.RoleTool, ToolCallID: id, Text: "README\n[exit code 0]"})
	}
	if answer != "" {
		msgs = append(msgs, provider.Message{Role: provider.RoleAssistant, Text: answer})
	}
	return msgs
}

func write(t *testing.T, f io.Writer, id string, n int, msgs []provider.Message) {
	t.Helper()
	for _, m := range msgs {
		if _, err := f.Write(transcript.Line(transcript.MessageEntry(id, n, m))); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRoundTripRestoresEveryTurnTheUnfinishedRepaired(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	f, err := transcript.Create(data, transcript.Header{ID: "s1", Project: "/p", Provider: "openai", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, "s1", 1, turn(1, "one", "did one", true))
	write(t, f, "s1", 2, turn(2, "two", "", true)) // cancelled: no final answer
	write(t, f, "s1", 3, turn(3, "three", "did three", false))
	f.Close()

	raw, _ := os.ReadFile(transcript.Path(data, "s1"))
	for _, goName := range []string{`"ID"`, `"Name"`, `"Args"`, `"Role"`} {
		if strings.Contains(string(raw), goName) {
			t.Errorf("transcript has a Go field name %s:\n%s", goName, raw)
		}
	}
	if st, _ := os.Stat(transcript.Path(data, "s1")); st.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode %v", st.Mode().Perm())
	}
	s, err := transcript.Load(transcript.Path(data, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Project != "/p" || s.Completed != 2 || s.Incomplete != 1 || s.LastTurn != 3 || s.FirstPrompt != "one" {
		t.Fatalf("loaded %+v", s)
	}
	msgs := s.Messages()
	// Turn 2 has no answer: restored with the note that ends it.
	if len(msgs) != 10 || msgs[1].ToolCalls[0].Name != "bash" || string(msgs[1].ToolCalls[0].Args) != `{"script":"ls"}` || msgs[2].ToolCallID != "cone" ||
		msgs[7].Text != transcript.Unfinished {
		t.Fatalf("restored %+v", msgs)
	}
}

// A kill -9 in the middle of a write leaves a torn last line: every turn
// before it is restored, and the next entry starts on a line of its own.
func TestTornLastLineLosesNoCompletedTurn(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	f, err := transcript.Create(data, transcript.Header{ID: "s2", Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, "s2", 1, turn(1, "one", "did one", false))
	line := transcript.Line(transcript.MessageEntry("s2", 2, provider.Message{Role: provider.RoleUser, Text: "two"}))
	_, _ = f.Write(line[:len(line)/2])
	f.Close()
	s, err := transcript.Load(transcript.Path(data, "s2"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Completed != 1 || len(s.Messages()) != 2 {
		t.Fatalf("after a torn line: %+v", s)
	}
	f2, err := transcript.Reopen(context.Background(), s, transcript.NoWait)
	if err != nil {
		t.Fatal(err)
	}
	write(t, f2, "s2", 2, turn(2, "again", "did it", false))
	f2.Close()
	s, err = transcript.Load(transcript.Path(data, "s2"))
	if err != nil {
		t.Fatalf("the resumed transcript does not read back: %v", err)
	}
	if s.Completed != 2 {
		t.Fatalf("completed %d, want 2", s.Completed)
	}
}

func TestSummaryReplacesTurnsThroughIt(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	f, _ := transcript.Create(data, transcript.Header{ID: "s3", Project: "/p"})
	for n := 1; n <= 4; n++ {
		write(t, f, "s3", n, turn(n, "p"+string(rune('0'+n)), "a", false))
	}
	_, _ = f.Write(transcript.Line(transcript.Entry{Type: transcript.TypeSummary, SessionID: "s3", Text: "they said hi", ThroughTurn: 2, KeptTurns: 2}))
	write(t, f, "s3", 5, turn(5, "p5", "a", false))
	f.Close()
	s, err := transcript.Load(transcript.Path(data, "s3"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages()
	if s.Completed != 5 || len(s.Turns) != 3 || s.Turns[0].N != 3 || !strings.HasSuffix(msgs[0].Text, "they said hi") {
		t.Fatalf("after a summary: completed %d, turns %+v, first %q", s.Completed, s.Turns, msgs[0].Text)
	}
}

func TestReadsTranscriptsFromBeforeVersion1(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "old.jsonl")
	old := `{"session":"old","role":"user","text":"hi"}
{"session":"old","role":"assistant","tool_calls":[{"ID":"c1","Name":"bash","Args":{"script":"ls"}}]}
{"session":"old","role":"tool","text":"x","tool_call_id":"c1"}
{"session":"old","role":"assistant","text":"done"}
`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := transcript.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages()
	if s.Completed != 1 || len(msgs) != 4 || msgs[1].ToolCalls[0].ID != "c1" || string(msgs[1].ToolCalls[0].Args) != `{"script":"ls"}` {
		t.Fatalf("legacy transcript read as %+v", msgs)
	}
}

func TestLatestIsPerProject(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	for _, h := range []transcript.Header{{ID: "a", Project: "/one"}, {ID: "b", Project: "/two"}} {
		f, _ := transcript.Create(data, h)
		write(t, f, h.ID, 1, turn(1, "in "+h.Project, "ok", false))
		f.Close()
	}
	s, err := transcript.Latest(data, "/one")
	if err != nil || s.ID != "a" {
		t.Fatalf("latest of /one: %v %v", s, err)
	}
	if _, err := transcript.Latest(data, "/three"); err == nil {
		t.Fatal("a project without sessions got one")
	}
	if s, err := transcript.Find(data, "b"); err != nil || s.Project != "/two" {
		t.Fatalf("find b: %v %v", s, err)
	}
	if _, err := transcript.Find(data, "../x"); err == nil {
		t.Fatal("a path was taken as an id")
	}
}

// TestListAgreesWithLoad: a listing reads message lines the fast way
// (their heads only, without encoding/json) and must count what a full
// read counts: turns completed and not, the last turn, the first and last
// times, damaged lines. The sessions differ in what the fast way must
// refuse and hand to the slow one: an escaped session id, a role that is
// not one of the usual.
func TestListAgreesWithLoad(t *testing.T) {
	data := t.TempDir()
	for _, id := range []string{"plain", `quo"te`} {
		f, err := transcript.Create(data, transcript.Header{ID: strings.ReplaceAll(id, `"`, "_"), Project: "/p"})
		if err != nil {
			t.Fatal(err)
		}
		base := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
		for n := 1; n <= 3; n++ {
			msgs := turn(n, fmt.Sprintf("prompt %d", n), "done", true)
			if n == 3 {
				msgs = msgs[:2] // a call without its result: cut by a crash
			}
			for i, m := range msgs {
				e := transcript.MessageEntry(id, n, m)
				e.Time = base.Add(time.Duration(n*10+i) * time.Second)
				if _, err := f.Write(transcript.Line(e)); err != nil {
					t.Fatal(err)
				}
			}
		}
		e := transcript.MessageEntry(id, 3, provider.Message{Role: "critic", Text: "odd"})
		e.Time = base.Add(time.Hour)
		_, _ = f.Write(transcript.Line(e))
		_, _ = f.Write([]byte("{torn\n"))
		f.Close()
	}
	all, skipped, err := transcript.List(data)
	if err != nil || len(skipped) > 0 || len(all) != 2 {
		t.Fatalf("List: %d sessions, %v, %v", len(all), skipped, err)
	}
	for _, listed := range all {
		full, err := transcript.Load(listed.Path)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%s %s %d %d %d %d %s %s", listed.ID, listed.FirstPrompt, listed.Completed, listed.Incomplete, listed.LastTurn, listed.Damaged,
			listed.Started.Format(time.RFC3339Nano), listed.Last.Format(time.RFC3339Nano))
		want := fmt.Sprintf("%s %s %d %d %d %d %s %s", full.ID, full.FirstPrompt, full.Completed, full.Incomplete, full.LastTurn, full.Damaged,
			full.Started.Format(time.RFC3339Nano), full.Last.Format(time.RFC3339Nano))
		if got != want {
			t.Errorf("listed %s\nloaded %s", got, want)
		}
		if listed.Completed != 2 || listed.Incomplete != 1 || listed.Damaged != 1 || !listed.Last.Equal(time.Date(2026, 1, 2, 4, 4, 5, 600, time.UTC)) {
			t.Errorf("listed %s: want 2 completed, 1 incomplete, 1 damaged, last 04:04:05.0000006", got)
		}
	}
}
