package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const allowBash = "[[rules]]\ngate = \"tool.run:bash\"\nsubject = \"bash\"\ndecision = \"allow\"\n"

// TestResumeAfterKill9LosesNoCompletedTurn: hush is killed with SIGKILL in
// the middle of its second turn; `hush run --continue` restores the first
// turn (prompt, tool call, result, answer) and the unfinished one repaired.
func TestResumeAfterKill9LosesNoCompletedTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newRoutedModel(t, func(prompt string, k int) (step, bool) {
		switch {
		case prompt == "alpha-prompt" && k == 0:
			return step{calls: []fakeCall{{"bash", map[string]any{"script": "echo alpha-tool-output"}}}}, true
		case prompt == "alpha-prompt":
			return step{text: "alpha-answer"}, true
		case prompt == "bravo-prompt":
			return step{calls: []fakeCall{{"bash", map[string]any{"script": "echo bravo-started; sleep 60"}}}}, true
		case prompt == "charlie-prompt":
			return step{text: "charlie-answer"}, true
		}
		return step{}, false
	})
	w.fakeModelConfig(model, allowBash)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("alpha-prompt\r")
	tm.expect("alpha-answer", 20*time.Second)
	tm.send("bravo-prompt\r")
	tm.expect("bravo-started", 20*time.Second)
	if err := tm.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := tm.wait(10 * time.Second); code != -1 {
		t.Logf("hush exited with %d after SIGKILL", code)
	}

	before := model.Requests()
	evs, stderr, code := runJSON(t, w, "run", "--continue", "--json", "charlie-prompt")
	if code != 0 {
		t.Fatalf("run --continue exited %d: %s", code, stderr)
	}
	started := ofType(evs, "session.started")[0]
	if started["resumed"] != true || started["turns"] != float64(1) {
		t.Errorf("session.started %v, want resumed with 1 completed turn", started)
	}
	if got := ofType(evs, "turn.started")[0]["turn"]; got != float64(3) {
		t.Errorf("the new turn is number %v, want 3 (after the unfinished second)", got)
	}
	bodies := strings.Split(model.Received(), "\n")
	req := strings.Join(bodies[before:], "\n")
	for _, want := range []string{"alpha-prompt", "alpha-tool-output", "alpha-answer", "charlie-prompt", `"tool_calls"`} {
		if !strings.Contains(req, want) {
			t.Errorf("the resumed request lacks %q:\n%s", want, req)
		}
	}
	// The unfinished turn is restored repaired: its call answered with
	// the note, then the turn ended, so every provider accepts the history.
	if !strings.Contains(req, "bravo-prompt") || !strings.Contains(req, "not recorded: hush stopped before the result was saved") {
		t.Errorf("the unfinished turn was not restored repaired:\n%s", req)
	}
	if p := historyProblems(t, model.lastBody()); len(p) > 0 {
		t.Errorf("the resumed history is not valid: %v\n%s", p, messagesOf(model.lastBody()))
	}
	out, err := runHush(w, "sessions", "list")
	if err != nil || !strings.Contains(out, started.str("session_id")) || !strings.Contains(out, "alpha-prompt") || !strings.Contains(out, w.project) {
		t.Errorf("sessions list (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "  2  ") {
		t.Errorf("sessions list does not count 2 completed turns:\n%s", out)
	}
}

// TestResumePickerEscLeaves: Esc at the --resume picker leaves it, as
// Ctrl-C does, instead of doing nothing; the model is never called.
func TestResumePickerEscLeaves(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "hello"})
	w.fakeModelConfig(model, "")
	if _, stderr, code := runJSON(t, w, "run", "--json", "the first session"); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	before := model.Requests()
	tm := startPTY(t, w, "chat", "--resume")
	tm.expect("Resume which session?", 20*time.Second)
	tm.expect("the first session", 5*time.Second)
	tm.send("\x1b")
	tm.expect("no session picked", 5*time.Second)
	if code := tm.wait(10 * time.Second); code != 1 {
		t.Errorf("Esc at the picker: exit %d, want 1", code)
	}
	if model.Requests() != before {
		t.Error("the model was called after the picker was left")
	}
}

// TestContinueRefusesAnotherProjectsSession: the data dir is shared by
// every project; --continue and --resume pick only the current project's.
func TestContinueRefusesAnotherProjectsSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "hello from A"})
	w.fakeModelConfig(model, "")
	evs, stderr, code := runJSON(t, w, "run", "--json", "in project A")
	if code != 0 {
		t.Fatalf("run in A: %d %s", code, stderr)
	}
	id := ofType(evs, "session.started")[0].str("session_id")

	other := filepath.Join(filepath.Dir(w.project), "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	before := model.Requests()
	for _, args := range [][]string{{"run", "--continue", "in B"}, {"chat", "--resume", id}} {
		cmd := exec.Command(hushBin, args...)
		cmd.Env, cmd.Dir = w.env, other
		outBytes, err := cmd.CombinedOutput()
		out := string(outBytes)
		if exitCodeOf(err) != 1 {
			t.Errorf("%v in another project exited %d, want 1:\n%s", args, exitCodeOf(err), out)
		}
		if args[0] == "run" && !strings.Contains(out, "nothing to continue") {
			t.Errorf("run --continue elsewhere says:\n%s", out)
		}
		if args[0] == "chat" && !strings.Contains(out, "belongs to the project "+w.project) {
			t.Errorf("chat --resume elsewhere says:\n%s", out)
		}
	}
	if model.Requests() != before {
		t.Error("the model was called for a refused resume")
	}
	// Positive control: in its own project the session continues.
	evs, stderr, code = runJSON(t, w, "run", "--continue", "--json", "again")
	if code != 0 || ofType(evs, "session.started")[0].str("session_id") != id {
		t.Fatalf("continue in A: exit %d, events %v, %s", code, evs, stderr)
	}
}

// TestAutomaticCompactionKeepsTheLastTurnsVerbatim: near the configured
// window, the model summarizes the older turns before the next one; the
// summary is what the model is sent instead of them, it is stored in the
// transcript as a summary, and the kept turn goes verbatim.
func TestAutomaticCompactionKeepsTheLastTurnsVerbatim(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newRoutedModel(t, func(prompt string, _ int) (step, bool) {
		if strings.HasPrefix(prompt, "Summarize this conversation.") {
			return step{text: "SUMMARY: the user said alpha."}, true
		}
		return step{text: "ok " + strings.Fields(prompt)[0]}, true
	})
	w.fakeModelConfig(model, "[compaction]\ncontext_window = 60\nthreshold = 0.5\nkeep_turns = 1\n")
	long := strings.Repeat(" filler", 20)
	for _, p := range []string{"alpha-prompt" + long, "bravo-prompt" + long} {
		args := []string{"run", "--json", p}
		if !strings.HasPrefix(p, "alpha") {
			args = []string{"run", "--continue", "--json", p}
		}
		if evs, stderr, code := runJSON(t, w, args...); code != 0 || len(ofType(evs, "session.compacted")) != 0 {
			t.Fatalf("%s: exit %d, %s", p[:12], code, stderr)
		}
	}
	before := model.Requests()
	evs, stderr, code := runJSON(t, w, "run", "--continue", "--json", "charlie-prompt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c := ofType(evs, "session.compacted")
	if len(c) != 1 || c[0]["through_turn"] != float64(1) || c[0]["kept_turns"] != float64(1) || c[0].str("summary") != "SUMMARY: the user said alpha." {
		t.Fatalf("session.compacted %v", c)
	}
	bodies := strings.Split(model.Received(), "\n")
	if len(bodies)-before != 2 {
		t.Fatalf("%d requests, want the summary and the turn", len(bodies)-before)
	}
	turn := bodies[len(bodies)-1]
	if !strings.Contains(turn, "SUMMARY: the user said alpha.") || strings.Contains(turn, "alpha-prompt") || !strings.Contains(turn, "bravo-prompt"+long) {
		t.Errorf("the turn after compaction sent:\n%s", turn)
	}
	if tr := w.transcripts(); !strings.Contains(tr, `"type":"summary"`) || !strings.Contains(tr, `"through_turn":1`) {
		t.Errorf("the transcript lacks the summary:\n%s", tr)
	}
	// Resuming again starts from the summary too.
	evs, _, _ = runJSON(t, w, "run", "--continue", "--json", "delta-prompt")
	if s := ofType(evs, "session.started")[0]; s["turns"] != float64(3) {
		t.Errorf("after compaction the session counts %v turns, want 3", s["turns"])
	}
	if last := strings.Split(model.Received(), "\n"); strings.Contains(last[len(last)-1], "alpha-prompt") {
		t.Error("a turn the summary replaced came back on resume")
	}
}

// TestChatCompactAndContinueInTheTerminal: /compact in the chat UI shows the
// model's summary and what stays verbatim; `hush chat --continue` says what
// it restored, and its next request carries the summary, not the turn it
// replaced.
func TestChatCompactAndContinueInTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newRoutedModel(t, func(prompt string, _ int) (step, bool) {
		if strings.HasPrefix(prompt, "Summarize this conversation.") {
			return step{text: "SUMMARY-OF-ALPHA"}, true
		}
		if f := strings.Fields(prompt); len(f) > 0 {
			return step{text: strings.TrimSuffix(f[0], "-prompt") + "-answer"}, true
		}
		return step{}, false
	})
	w.fakeModelConfig(model, "")
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("alpha-prompt\r")
	tm.expect("alpha-answer", 20*time.Second)
	tm.send("bravo-prompt\r")
	tm.expect("bravo-answer", 20*time.Second)
	tm.send("/compact 1\r")
	tm.expect("Compacted: turn 1 is now a summary made by the model (stored in the transcript); the last 1 turn(s) stay verbatim.", 20*time.Second)
	tm.expect("SUMMARY-OF-ALPHA", 5*time.Second)
	tm.quit()

	before := model.Requests()
	tm = startPTY(t, w, "chat", "--continue")
	tm.expect("Resumed session", 20*time.Second)
	tm.expect("Turn 1 is a summary the model made when the session was compacted.", 5*time.Second)
	tm.expect("› ", 10*time.Second)
	tm.send("charlie-prompt\r")
	tm.expect("charlie-answer", 20*time.Second)
	tm.send("\x04")
	tm.wait(10 * time.Second)
	req := strings.Join(strings.Split(model.Received(), "\n")[before:], "\n")
	if !strings.Contains(req, "SUMMARY-OF-ALPHA") || !strings.Contains(req, "bravo-prompt") || strings.Contains(req, "alpha-prompt") {
		t.Errorf("the resumed request after compaction:\n%s", req)
	}
}
