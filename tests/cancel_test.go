package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// wireMessage is one message of a Chat Completions request body.
type wireMessage struct {
	Role       string `json:"role"`
	Content    any    `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

// historyProblems says what in a Chat Completions request body the API
// refuses (an assistant's tool_calls not each answered by the tool messages
// right after it, a tool message that answers no call) or Anthropic's
// Messages API would (two user messages in a row: roles must alternate).
func historyProblems(t *testing.T, body string) []string {
	t.Helper()
	var req struct {
		Messages []wireMessage `json:"messages"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("the request body is not JSON: %v\n%s", err, body)
	}
	var problems []string
	ms := req.Messages
	for i := 0; i < len(ms); i++ {
		m := ms[i]
		switch {
		case m.Role == "user" && i > 0 && ms[i-1].Role == "user":
			problems = append(problems, fmt.Sprintf("message %d: two user messages in a row", i))
		case m.Role == "tool":
			problems = append(problems, fmt.Sprintf("message %d: a tool message (%s) that follows no assistant tool_calls", i, m.ToolCallID))
		case m.Role == "assistant" && len(m.ToolCalls) > 0:
			open := map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
			for i+1 < len(ms) && ms[i+1].Role == "tool" {
				i++
				if !open[ms[i].ToolCallID] {
					problems = append(problems, fmt.Sprintf("message %d: tool message for %q, which the assistant did not call (or answered twice)", i, ms[i].ToolCallID))
				}
				delete(open, ms[i].ToolCallID)
			}
			for id := range open {
				problems = append(problems, fmt.Sprintf("tool call %s has no tool message", id))
			}
		}
	}
	return problems
}

// lastBody is the last request body the model received.
func (f *fakeModel) lastBody() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[len(f.bodies)-1]
}

// messagesOf is a request body's messages, for a failure's message.
func messagesOf(body string) string {
	var req struct {
		Messages json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal([]byte(body), &req)
	return string(req.Messages)
}

// TestCancelledRunIsClosedForTheNextTurn: SIGINT stops `hush run` in the
// first of two tool calls; `hush run --continue` then sends a history in
// which both calls are answered, and the model is told the turn was
// cancelled, instead of a dangling call (a 400 from the API) or a turn
// silently missing.
func TestCancelledRunIsClosedForTheNextTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newRoutedModel(t, func(prompt string, k int) (step, bool) {
		switch {
		case prompt == "alpha-prompt" && k == 0:
			return step{calls: []fakeCall{
				{"bash", map[string]any{"script": "echo alpha-started; sleep 60"}},
				{"bash", map[string]any{"script": "touch SECOND"}},
			}}, true
		case prompt == "bravo-prompt":
			return step{text: "bravo-answer"}, true
		}
		return step{}, false
	})
	w.fakeModelConfig(model, allowBash)
	cmd := exec.Command(hushBin, "run", "--json", "alpha-prompt")
	cmd.Env, cmd.Dir = w.env, w.project
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && !strings.Contains(sc.Text(), "alpha-started") {
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
	if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != 130 {
		t.Fatalf("hush run: %v, want exit 130", err)
	}

	evs, stderr, code := runJSON(t, w, "run", "--continue", "--json", "bravo-prompt")
	if code != 0 {
		t.Fatalf("run --continue exited %d: %s", code, stderr)
	}
	if got := ofType(evs, "turn.completed"); len(got) != 1 || got[0].str("final_text") != "bravo-answer" {
		t.Errorf("turn.completed %v", got)
	}
	body := model.lastBody()
	if p := historyProblems(t, body); len(p) > 0 {
		t.Errorf("the resumed request is not a valid history: %s\n%s", strings.Join(p, "; "), messagesOf(body))
	}
	for _, want := range []string{"alpha-prompt", "alpha-started", "cancelled by the user", "turn cancelled", "bravo-prompt"} {
		if !strings.Contains(body, want) {
			t.Errorf("the resumed request lacks %q:\n%s", want, messagesOf(body))
		}
	}
	if _, err := os.Stat(filepath.Join(w.project, "SECOND")); err == nil {
		t.Error("the second call ran after the cancellation")
	}
}

// TestCancelledChatTurnsAreClosedForTheNextPrompt: in one chat, Ctrl-C
// while the model streams and Ctrl-C in the first of two tool calls; the
// next prompt's request alternates roles, answers every call and tells
// the model both turns were cancelled.
func TestCancelledChatTurnsAreClosedForTheNextPrompt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newRoutedModel(t, func(prompt string, k int) (step, bool) {
		switch {
		case prompt == "alpha-prompt":
			return step{hang: true}, true
		case prompt == "bravo-prompt" && k == 0:
			return step{calls: []fakeCall{
				{"bash", map[string]any{"script": "echo bravo-started; sleep 60"}},
				{"bash", map[string]any{"script": "echo bravo-second"}},
			}}, true
		case prompt == "charlie-prompt":
			return step{text: "charlie-answer"}, true
		}
		return step{}, false
	})
	w.fakeModelConfig(model, allowBash)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("alpha-prompt\r")
	for deadline := time.Now().Add(20 * time.Second); model.Requests() < 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the model was never asked")
		}
	}
	tm.send("\x03")
	tm.expect("(turn cancelled)", 10*time.Second)
	tm.send("bravo-prompt\r")
	tm.expect("bravo-started", 20*time.Second)
	tm.send("\x03")
	tm.expect("turn cancelled; the tool", 10*time.Second)
	tm.send("charlie-prompt\r")
	tm.expect("charlie-answer", 20*time.Second)
	tm.send("\x04")
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Errorf("exit code %d", code)
	}

	body := model.lastBody()
	if p := historyProblems(t, body); len(p) > 0 {
		t.Errorf("the next request is not a valid history: %s\n%s", strings.Join(p, "; "), messagesOf(body))
	}
	if n := strings.Count(body, "turn cancelled"); n != 2 {
		t.Errorf("the request tells the model of %d cancelled turn(s), want 2:\n%s", n, messagesOf(body))
	}
}
