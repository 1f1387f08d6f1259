package transcript_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
)

func TestRepairAnswersEveryCallAndDropsStrayResults(t *testing.T) {
	t.Parallel()
	call := func(ids ...string) provider.Message {
		m := provider.Message{Role: provider.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, provider.ToolCall{ID: id, Name: "bash", Args: json.RawMessage(`{}`)})
		}
		return m
	}
	result := func(id string) provider.Message {
		return provider.Message{Role: provider.RoleTool, ToolCallID: id, Text: "ok"}
	}
	user := provider.Message{Role: provider.RoleUser, Text: "go"}
	for _, tc := range []struct {
		name string
		in   []provider.Message
		want string // role:id:text per message
	}{
		{"prompt only", []provider.Message{user}, "user::go assistant::" + transcript.Unfinished},
		{"call without result", []provider.Message{user, call("a", "b"), result("a")},
			"user::go assistant:a,b: tool:a:ok tool:b:" + transcript.NotRecorded + " assistant::" + transcript.Unfinished},
		{"result without call", []provider.Message{user, result("x"), call("a"), result("a"), result("a")},
			"user::go assistant:a: tool:a:ok assistant::" + transcript.Unfinished},
		{"second step cut", []provider.Message{user, call("a"), result("a"), call("b")},
			"user::go assistant:a: tool:a:ok assistant:b: tool:b:" + transcript.NotRecorded + " assistant::" + transcript.Unfinished},
	} {
		var got []string
		for _, m := range transcript.Repair(tc.in) {
			id := m.ToolCallID
			for i, c := range m.ToolCalls {
				if i > 0 {
					id += ","
				}
				id += c.ID
			}
			got = append(got, string(m.Role)+":"+id+":"+m.Text)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, g, tc.want)
		}
	}
}

// One writer per session: a second Reopen is refused with the holder's
// pid while the first holds it, waits with Wait, and succeeds once it is
// closed; the second writer sees the turn the first added.
func TestOneWriterPerSession(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	f, err := transcript.Create(data, transcript.Header{ID: "w1", Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, f, "w1", 1, turn(1, "one", "did one", false))
	s, err := transcript.Load(transcript.Path(data, "w1"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = transcript.Reopen(context.Background(), s, transcript.NoWait)
	var busy *transcript.BusyError
	if !errors.As(err, &busy) || busy.PID != os.Getpid() {
		t.Fatalf("a second writer: %v, want a BusyError naming pid %d", err, os.Getpid())
	}
	if want := "is open in another hush (pid"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--fork") || !strings.Contains(err.Error(), "--wait") {
		t.Errorf("message %q", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := transcript.Reopen(ctx, s, transcript.Wait); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting while it is held: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		w, err := transcript.Reopen(context.Background(), s, transcript.Wait)
		if err == nil {
			w.Close()
		}
		done <- err
	}()
	write(t, f, "w1", 2, turn(2, "two", "did two", false))
	f.Close()
	if err := <-done; err != nil {
		t.Fatalf("waiting until it is closed: %v", err)
	}
	if s.Completed != 2 {
		t.Errorf("the waiting writer read %d completed turns, want the 2 the first wrote", s.Completed)
	}
	fork, err := transcript.Fork(data, s, transcript.Header{ID: "w2"})
	if err != nil {
		t.Fatal(err)
	}
	fork.Close()
	if s.ID != "w2" || s.Completed != 2 || s.Project != "/p" || len(s.Messages()) != 4 {
		t.Errorf("fork: %+v", s)
	}
}

// A FIFO, a link to /dev/zero, a directory named like a transcript and a
// line longer than LineLimit are skipped, each quickly; the good
// transcript beside them is listed.
func TestListSkipsWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	f, _ := transcript.Create(data, transcript.Header{ID: "good", Project: "/p"})
	write(t, f, "good", 1, turn(1, "one", "did one", true))
	big := strings.Repeat("x", transcript.LineLimit+10)
	write(t, f, "good", 2, turn(2, big, "did two", false))
	write(t, f, "good", 3, turn(3, "three", "did three", false))
	f.Close()
	dir := filepath.Join(data, transcript.DirName)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var all []*transcript.Session
	var skipped []error
	go func() {
		defer close(done)
		all, skipped, _ = transcript.List(data)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("List hangs on a FIFO or a device")
	}
	if len(all) != 1 || all[0].ID != "good" || all[0].Completed != 2 || all[0].Incomplete != 1 || all[0].Damaged != 1 {
		t.Fatalf("listed %d: %+v", len(all), *all[0])
	}
	var notes []string
	for _, e := range skipped {
		notes = append(notes, e.Error())
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"fifo.jsonl: it is a named pipe", "zero.jsonl: it is a symlink to /dev/zero", "dir.jsonl: it is a directory"} {
		if !strings.Contains(joined, want) {
			t.Errorf("skipped notes lack %q:\n%s", want, joined)
		}
	}
	if _, err := transcript.Find(data, "fifo"); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("resuming the FIFO: %v", err)
	}
}

// The listing's fast path counts what a full read counts, also when a
// prompt's text holds the keys it cuts at.
func TestListCountsAsLoadDoes(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	f, _ := transcript.Create(data, transcript.Header{ID: "l", Project: "/p"})
	write(t, f, "l", 1, turn(1, `first ,"text": and "tool_calls":[`, "ok", true))
	write(t, f, "l", 2, turn(2, `,"tool_calls":[1]`, "", true))
	write(t, f, "l", 3, turn(3, "three", `answer "tool_calls": ,"text":`, false))
	f.Close()
	all, _, _ := transcript.List(data)
	full, err := transcript.Load(transcript.Path(data, "l"))
	if err != nil || len(all) != 1 {
		t.Fatal(err, all)
	}
	l := all[0]
	if l.Completed != full.Completed || l.Incomplete != full.Incomplete || l.LastTurn != full.LastTurn || l.FirstPrompt != full.FirstPrompt ||
		full.Completed != 2 || full.Incomplete != 1 {
		t.Errorf("list: completed %d incomplete %d last %d first %q; load: %d %d %d %q",
			l.Completed, l.Incomplete, l.LastTurn, l.FirstPrompt, full.Completed, full.Incomplete, full.LastTurn, full.FirstPrompt)
	}
}

// A session's lock file goes when the session closes, and a hush that
// was waiting takes the lock at the path: a third writer is then refused,
// and once both have closed no lock file is left. (The window lock's
// same-file check guards — a waiter that opened the file just before its
// holder removed it — is too narrow for a test to land in: the waiter
// opens the file again on every try.)
func TestLockFilesGoWithTheirSession(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	f, err := transcript.Create(data, transcript.Header{ID: "l1", Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	lockFile := transcript.Path(data, "l1") + ".lock"
	if _, err := os.Stat(lockFile); err != nil {
		t.Fatalf("no lock file while the session is open (the control): %v", err)
	}
	s, err := transcript.Load(transcript.Path(data, "l1"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *transcript.File, 1)
	go func() {
		w, err := transcript.Reopen(context.Background(), s, transcript.Wait)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	time.Sleep(150 * time.Millisecond) // the waiter has opened the lock file and waits on it
	f.Close()
	w := <-got
	if w == nil {
		t.FailNow()
	}
	third := *s
	_, err = transcript.Reopen(context.Background(), &third, transcript.NoWait)
	var busy *transcript.BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("a third writer while the waiter holds the session: %v, want a BusyError", err)
	}
	w.Close()
	ents, _ := os.ReadDir(filepath.Dir(lockFile))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("%s left after every writer closed", e.Name())
		}
	}
}
