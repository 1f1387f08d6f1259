package session_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
)

func TestNotes(t *testing.T) {
	t.Parallel()
	if got := session.CompactNote(executor.Compacted{Through: 3, Kept: 2}); !strings.HasPrefix(got, "Compacted: turns 1–3 are now a summary") || !strings.Contains(got, "the last 2 turn(s)") {
		t.Errorf("CompactNote = %q", got)
	}
	s := &transcript.Session{ID: "s1", Started: time.Now(), Completed: 4, Incomplete: 1}
	s.Summary, s.SummaryThrough = "sum", 1
	got := session.ResumeNote(s)
	for _, want := range []string{"Resumed session s1 (started ", "4 turn(s)", " Turn 1 is a summary", "1 turn(s) that did not finish are restored as far as they were saved."} {
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
	if _, err := session.Find(session.Resume{Resume: true}, data, dir, nil, ident); !errors.Is(err, session.ErrNeedsID) {
		t.Errorf("--resume without an id or a picker: %v", err)
	}
	picked := false
	_, err := session.Find(session.Resume{Resume: true}, data, dir, func([]session.Choice) (string, error) { picked = true; return "", nil }, ident)
	if err == nil || picked || !strings.HasPrefix(err.Error(), "no session to resume in "+dir) {
		t.Errorf("nothing to pick: %v (picker asked: %v)", err, picked)
	}
	if _, err := session.Find(session.Resume{Continue: true}, data, dir, nil, ident); err == nil || !strings.HasPrefix(err.Error(), "nothing to continue: ") {
		t.Errorf("--continue: %v", err)
	}
	var out, errOut bytes.Buffer
	if err := session.List(&out, &errOut, data, dir, false, ident); err != nil || out.String() != "No sessions yet: each `hush chat` and `hush run` keeps one.\n" {
		t.Errorf("List = %q, %v", out.String(), err)
	}
}

// List shows when each session was last active, and sorts by it: an old
// session with a new turn comes before a newer one that stayed idle.
func TestListShowsLastActivityFirst(t *testing.T) {
	t.Parallel()
	data, dir := t.TempDir(), t.TempDir()
	day := time.Date(2026, 3, 1, 9, 0, 0, 0, time.Local)
	for _, s := range []struct {
		id          string
		start, last time.Time
		prompt      string
	}{
		{"old", day, day.Add(48 * time.Hour), "first session"},
		{"new", day.Add(24 * time.Hour), day.Add(24 * time.Hour), "second session"},
	} {
		f, err := transcript.Create(data, transcript.Header{ID: s.id, Project: dir})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range []transcript.Entry{
			transcript.MessageEntry(s.id, 1, provider.Message{Role: provider.RoleUser, Text: s.prompt}),
			transcript.MessageEntry(s.id, 1, provider.Message{Role: provider.RoleAssistant, Text: "ok"}),
		} {
			e.Time = s.last
			if _, err := f.Write(transcript.Line(e)); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		// The session line's own time is the start.
		if err := rewriteStart(transcript.Path(data, s.id), s.start); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if err := session.List(&out, &errOut, data, dir, true, ident); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "LAST ACTIVE") {
		t.Fatalf("List =\n%s", out.String())
	}
	if !strings.HasPrefix(lines[1], "old ") || !strings.Contains(lines[1], "2026-03-01 09:00  2026-03-03 09:00") ||
		!strings.HasPrefix(lines[2], "new ") || !strings.Contains(lines[2], "2026-03-02 09:00  2026-03-02 09:00") {
		t.Errorf("List, want old (active last) first with its start and last activity:\n%s", out.String())
	}
}

// rewriteStart sets the time of a transcript's session line.
func rewriteStart(path string, start time.Time) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	first, rest, _ := bytes.Cut(b, []byte("\n"))
	var e transcript.Entry
	if err := json.Unmarshal(first, &e); err != nil {
		return err
	}
	e.Time = start
	return os.WriteFile(path, append(transcript.Line(e), rest...), 0o600)
}
func ident(s string) string { return s }
