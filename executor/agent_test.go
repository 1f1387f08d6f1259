package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/bash"
)

// scripted is a provider that replays responses and records every request.
type scripted struct {
	mu    sync.Mutex
	steps []provider.Response
	seen  []provider.Request
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Stream(_ context.Context, req provider.Request, onText func(string)) (provider.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, req)
	if len(s.steps) == 0 {
		return provider.Response{Text: "done"}, nil
	}
	r := s.steps[0]
	s.steps = s.steps[1:]
	if onText != nil && r.Text != "" {
		onText(r.Text[:len(r.Text)/2])
		onText(r.Text[len(r.Text)/2:])
	}
	return r, nil
}

// recorder is an Events sink that keeps everything shown.
type recorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Text(d string) { r.mu.Lock(); r.buf.WriteString(d); r.mu.Unlock() }
func (r *recorder) ToolStart(c provider.ToolCall) {
	r.mu.Lock()
	r.buf.WriteString("\n[call " + c.Name + " " + string(c.Args) + "]\n")
	r.mu.Unlock()
}
func (r *recorder) ToolOutput(_ provider.ToolCall, b []byte) {
	r.mu.Lock()
	r.buf.Write(b)
	r.mu.Unlock()
}
func (r *recorder) ToolEnd(_ provider.ToolCall, res string, _ bool) {
	r.mu.Lock()
	r.buf.WriteString("\n[result " + res + "]\n")
	r.mu.Unlock()
}
func (r *recorder) String() string { r.mu.Lock(); defer r.mu.Unlock(); return r.buf.String() }

type mapVault map[string]string

func (m mapVault) Get(name string) (string, error) {
	v, ok := m[name]
	if !ok {
		return "", os.ErrNotExist
	}
	return v, nil
}

func call(id, script string, extra string) provider.ToolCall {
	args := `{"script":` + mustJSON(script) + extra + `}`
	return provider.ToolCall{ID: id, Name: "bash", Args: json.RawMessage(args)}
}

func mustJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

type fixture struct {
	agent      *executor.Agent
	model      *scripted
	events     *recorder
	transcript *bytes.Buffer
	auditPath  string
	dir        string
}

func newFixture(t *testing.T, rules []executor.Rule, steps ...provider.Response) *fixture {
	t.Helper()
	dir := t.TempDir()
	secrets := mapVault{"GRANTED": "canary-granted-value-1", "STORED": "canary-stored-value-2", "DENIED": "canary-denied-value-3"}
	f := &fixture{model: &scripted{steps: steps}, events: &recorder{}, transcript: &bytes.Buffer{}, auditPath: filepath.Join(dir, "data", "audit.jsonl"), dir: dir}
	f.agent = &executor.Agent{
		Provider:   f.model,
		Tools:      executor.NewRegistry(bash.Tool{}),
		Gate:       &executor.RuleGate{Rules: rules},
		Audit:      auditlog.Open(f.auditPath),
		Vault:      secrets,
		Secrets:    func() (map[string]string, error) { return secrets, nil },
		Ambient:    map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": dir, "API_TOKEN": "canary-ambient-4", "INNOCENT": "canary-stored-value-2"},
		Dir:        dir,
		Policy:     func(string) tools.Policy { return tools.Policy{} },
		Events:     f.events,
		Transcript: f.transcript,
		Session:    "test",
	}
	return f
}

var allowBash = []executor.Rule{{Gate: "tool.run:bash", Subject: "bash", Decision: executor.Allow}}

func TestTurnRunsEnvAndLeaksNothing(t *testing.T) {
	t.Parallel()
	rules := append(allowBash, executor.Rule{Gate: "vault.read:GRANTED", Subject: "bash", Decision: executor.Allow})
	f := newFixture(t, rules,
		provider.Response{Text: "Looking.", ToolCalls: []provider.ToolCall{call("c1", "env; echo \"positive=$POS\"; echo $POS | base64", `,"env":{"POS":"${GRANTED}"}`)}},
		provider.Response{Text: "All clean."},
	)
	added, err := f.agent.Turn(context.Background(), nil, "check the environment")
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 4 {
		t.Fatalf("added %d messages, want user, assistant, tool, assistant", len(added))
	}
	result := added[2].Text
	// The positive control reached the child and came back redacted, in
	// plain and base64 form.
	if !strings.Contains(result, "positive=[REDACTED:GRANTED]") || strings.Count(result, "[REDACTED:GRANTED]") < 3 {
		t.Fatalf("granted secret did not arrive redacted:\n%s", result)
	}
	if !strings.Contains(result, "[exit code 0]") {
		t.Fatalf("no exit status:\n%s", result)
	}
	// What the model received on the next step is the same redacted text.
	second := f.model.seen[1].Messages
	sent, _ := json.Marshal(second)
	audit, _ := os.ReadFile(f.auditPath)
	for where, text := range map[string]string{"model": string(sent), "screen": f.events.String(), "transcript": f.transcript.String(), "audit": string(audit)} {
		for _, canary := range []string{"canary-granted-value-1", "canary-stored-value-2", "canary-denied-value-3", "canary-ambient-4"} {
			if strings.Contains(text, canary) {
				t.Errorf("%s holds %q", where, canary)
			}
		}
	}
	if !strings.Contains(string(audit), `"gate":"vault.read:GRANTED","decision":"allow","source":"rule"`) {
		t.Errorf("audit lacks the grant:\n%s", audit)
	}
}

func TestDeniedSecretSpawnsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowBash,
		provider.Response{ToolCalls: []provider.ToolCall{call("c1", "touch spawned", `,"env":{"X":"${DENIED}"}`)}},
	)
	added, err := f.agent.Turn(context.Background(), nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	res := added[2]
	if !res.IsError || !strings.Contains(res.Text, "vault.read:DENIED for bash is denied: no rule allows it") ||
		!strings.Contains(res.Text, "gate = \"vault.read:DENIED\"") {
		t.Fatalf("tool result = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "spawned")); err == nil {
		t.Fatal("the script ran although its secret was denied")
	}
	if strings.Contains(res.Text, "canary-denied-value-3") {
		t.Fatal("denied value leaked")
	}
}

func TestToolRunDeniedWithoutRule(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, provider.Response{ToolCalls: []provider.ToolCall{call("c1", "touch spawned", "")}})
	added, err := f.agent.Turn(context.Background(), nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(added[2].Text, "denied: tool.run:bash for bash is denied") {
		t.Fatalf("result = %q", added[2].Text)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "spawned")); err == nil {
		t.Fatal("denied tool ran")
	}
}

func TestEmptyScopeGrantsNothing(t *testing.T) {
	t.Parallel()
	policy := tools.Policy{Secrets: []string{"GRANTED"}}
	rules := append(allowBash, executor.Rule{Gate: "vault.read:*", Subject: "bash", Decision: executor.Allow})
	f := newFixture(t, rules,
		provider.Response{ToolCalls: []provider.ToolCall{call("c1", "echo \"g=${GRANTED:-unset}\"", `,"secrets":[]`)}},
		provider.Response{ToolCalls: []provider.ToolCall{call("c2", "echo \"g=${GRANTED:-unset}\"", "")}},
	)
	f.agent.Policy = func(string) tools.Policy { return policy }
	added, err := f.agent.Turn(context.Background(), nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(added[2].Text, "g=unset\n") {
		t.Errorf("explicitly empty scope: %q", added[2].Text)
	}
	if !strings.HasPrefix(added[4].Text, "g=[REDACTED:GRANTED]\n") {
		t.Errorf("nil scope should apply the configured secrets: %q", added[4].Text)
	}
}

func TestLargeOutputIsCutForTheModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowBash, provider.Response{ToolCalls: []provider.ToolCall{call("c1", "head -c 5000000 /dev/zero | tr '\\0' a; echo; echo END", "")}})
	f.agent.OutputHead, f.agent.OutputTail = 1000, 1000
	added, err := f.agent.Turn(context.Background(), nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	res := added[2].Text
	if len(res) > 3000 || !strings.Contains(res, "bytes omitted") || !strings.Contains(res, "END\n") {
		t.Fatalf("result is %d bytes: %.300q ... %.300q", len(res), res, res[max(0, len(res)-300):])
	}
}

func TestUnknownToolAndMaxSteps(t *testing.T) {
	t.Parallel()
	loop := provider.Response{ToolCalls: []provider.ToolCall{{ID: "x", Name: "nope", Args: json.RawMessage(`{}`)}}}
	f := newFixture(t, nil, loop, loop, loop)
	f.agent.MaxSteps = 2
	added, err := f.agent.Turn(context.Background(), nil, "go")
	if err == nil || !strings.Contains(err.Error(), "too many model steps (2)") {
		t.Fatalf("err = %v", err)
	}
	if added[2].Text != `error: unknown tool "nope" (available: bash)` {
		t.Fatalf("result = %q", added[2].Text)
	}
}

// cancelWhenShown returns a context cancelled once the turn's events
// show text (a tool's output line: the tool is running).
func (f *fixture) cancelWhenShown(t *testing.T, text string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for !strings.Contains(f.events.String(), text) {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	return ctx
}

func TestCancelStopsTheTool(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowBash, provider.Response{ToolCalls: []provider.ToolCall{call("c1", "echo started; sleep 300", "")}})
	ctx := f.cancelWhenShown(t, "started")
	added, err := f.agent.Turn(ctx, nil, "go")
	if err != context.Canceled {
		t.Fatalf("err = %v", err)
	}
	if len(added) < 3 || added[2].ToolCallID != "c1" || !strings.Contains(added[2].Text, "cancelled by the user") {
		t.Fatalf("messages = %+v, want the call's result to say it was cancelled", added)
	}
}

// TestCancelledTurnIsClosed: a turn cancelled in the first of two calls
// ends with a result for each call, the second saying it did not run, and
// the cancelled note; the transcript reads back as a completed turn, so a
// resumed session sends the model a well-formed history.
func TestCancelledTurnIsClosed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowBash, provider.Response{ToolCalls: []provider.ToolCall{
		call("c1", "echo started; sleep 300", ""), call("c2", "touch SECOND", "")}})
	ctx := f.cancelWhenShown(t, "started")
	added, err := f.agent.Turn(ctx, nil, "go")
	if err != context.Canceled {
		t.Fatalf("err = %v", err)
	}
	var roles []string
	for _, m := range added {
		roles = append(roles, string(m.Role)+":"+m.ToolCallID)
	}
	if got := strings.Join(roles, " "); got != "user: assistant: tool:c1 tool:c2 assistant:" {
		t.Fatalf("messages %s, want the prompt, the calls, a result for each and a closing note", got)
	}
	if !strings.Contains(added[3].Text, "not run") || !added[3].IsError {
		t.Errorf("the call that never ran says %+v", added[3])
	}
	if last := added[4]; last.Text != executor.CancelledNote || len(last.ToolCalls) != 0 {
		t.Errorf("last message %+v, want the cancelled note", last)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "SECOND")); err == nil {
		t.Error("the second call ran after the cancellation")
	}
	path := filepath.Join(f.dir, "t.jsonl")
	if err := os.WriteFile(path, f.transcript.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := transcript.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Completed != 1 || s.Incomplete != 0 || len(s.Messages()) != 5 {
		t.Errorf("transcript read back: %d completed, %d incomplete, %d messages; want the closed turn whole", s.Completed, s.Incomplete, len(s.Messages()))
	}
}

// blocking is a provider whose stream waits for the turn to be cancelled.
type blocking struct{ asked chan struct{} }

func (b blocking) Name() string { return "blocking" }
func (b blocking) Stream(ctx context.Context, _ provider.Request, _ func(string)) (provider.Response, error) {
	close(b.asked)
	<-ctx.Done()
	return provider.Response{}, ctx.Err()
}

// TestCancelWhileStreamingIsClosed: cancelled while the model streams, the
// turn still ends with an assistant message, so the next prompt is not a
// second user message in a row.
func TestCancelWhileStreamingIsClosed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowBash)
	model := blocking{asked: make(chan struct{})}
	f.agent.Provider = model
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-model.asked; cancel() }()
	added, err := f.agent.Turn(ctx, nil, "go")
	if err != context.Canceled {
		t.Fatalf("err = %v", err)
	}
	if len(added) != 2 || added[0].Role != provider.RoleUser || added[1].Role != provider.RoleAssistant || added[1].Text != executor.CancelledNote {
		t.Fatalf("messages %+v, want the prompt and the cancelled note", added)
	}
}

func TestColouredSecretIsRedacted(t *testing.T) {
	t.Parallel()
	rules := append(allowBash, executor.Rule{Gate: "vault.read:GRANTED", Subject: "bash", Decision: executor.Allow})
	// The value is printed with a colour code in its middle, as grep --color does.
	f := newFixture(t, rules, provider.Response{ToolCalls: []provider.ToolCall{call("c1",
		`printf '%s\033[01;31m%s\033[m%s\n' "${POS:0:6}" "${POS:6:4}" "${POS:10}"`, `,"env":{"POS":"${GRANTED}"}`)}})
	added, err := f.agent.Turn(context.Background(), nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(added[2].Text, "[REDACTED:GRANTED]\n") {
		t.Fatalf("result = %q", added[2].Text)
	}
	if strings.Contains(f.events.String(), "granted-value") {
		t.Fatal("screen shows the coloured secret")
	}
}

// wireBody is the raw request body p sends for history, read by a server
// on 127.0.0.1 that refuses it (the answer does not matter here).
func wireBody(t *testing.T, name string, history []provider.Message) []byte {
	t.Helper()
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"recorded"}}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	o := provider.Options{BaseURL: srv.URL, Model: "m", HTTPClient: srv.Client()}
	var p provider.Provider
	var err error
	if name == provider.Anthropic {
		p, err = provider.NewAnthropic(o)
	} else {
		o.BaseURL += "/v1"
		p, err = provider.NewOpenAI(o)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, _ = p.Stream(context.Background(), provider.Request{Messages: history}, nil)
	if body == nil {
		t.Fatalf("%s: no request reached the server", name)
	}
	return body
}

// TestCancelledHistoryIsWellFormedOnTheWire: the history a cancelled turn
// leaves, followed by the next prompt, is what both APIs accept: in Chat
// Completions every tool_call id is answered by a tool message right after
// its assistant message; in Messages roles alternate and every tool_use is
// answered by a tool_result in the next user message.
func TestCancelledHistoryIsWellFormedOnTheWire(t *testing.T) {
	t.Parallel()
	f := newFixture(t, allowBash, provider.Response{ToolCalls: []provider.ToolCall{
		call("c1", "echo started; sleep 300", ""), call("c2", "true", "")}})
	ctx := f.cancelWhenShown(t, "started")
	added, _ := f.agent.Turn(ctx, nil, "go")
	history := append(added, provider.Message{Role: provider.RoleUser, Text: "next"})

	var chat struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(wireBody(t, provider.OpenAI, history), &chat); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for i, m := range chat.Messages {
		roles = append(roles, m.Role)
		for j, c := range m.ToolCalls {
			if k := i + 1 + j; k >= len(chat.Messages) || chat.Messages[k].Role != "tool" || chat.Messages[k].ToolCallID != c.ID {
				t.Errorf("openai: tool call %s is not answered in order right after its assistant message", c.ID)
			}
		}
	}
	if got := strings.Join(roles, " "); got != "user assistant tool tool assistant user" {
		t.Errorf("openai roles: %s", got)
	}

	var msgs struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(wireBody(t, provider.Anthropic, history), &msgs); err != nil {
		t.Fatal(err)
	}
	roles = nil
	for i, m := range msgs.Messages {
		roles = append(roles, m.Role)
		for _, b := range m.Content {
			if b.Type != "tool_use" {
				continue
			}
			answered := false
			if i+1 < len(msgs.Messages) {
				for _, r := range msgs.Messages[i+1].Content {
					answered = answered || (r.Type == "tool_result" && r.ToolUseID == b.ID)
				}
			}
			if !answered {
				t.Errorf("anthropic: tool_use %s has no tool_result in the next message", b.ID)
			}
		}
	}
	if got := strings.Join(roles, " "); got != "user assistant user assistant user" {
		t.Errorf("anthropic roles: %s, want them alternating", got)
	}
}

// stopPrompter answers every ask with one answer.
type stopPrompter struct {
	ans   executor.Answer
	asked int
}

func (p *stopPrompter) Confirm(context.Context, executor.Request) (executor.Answer, error) {
	p.asked++
	return p.ans, nil
}

// TestStopAtApprovalEndsTheTurn: Esc at an approval denies the call, runs
// none of the calls after it, and sends the model no further request; the
// history still closes every call. Its positive control: a plain deny
// goes back to the model.
func TestStopAtApprovalEndsTheTurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ans      executor.Answer
		requests int
		err      error
	}{
		{executor.Answer{Choice: executor.ChoiceStop}, 1, executor.ErrStopped},
		{executor.Answer{Choice: executor.ChoiceDeny}, 2, nil},
		{executor.Answer{Choice: executor.ChoiceDenyReason, Reason: "use make test instead"}, 2, nil},
	} {
		f := newFixture(t, nil,
			provider.Response{ToolCalls: []provider.ToolCall{call("c1", "touch one", ""), call("c2", "touch two", "")}},
			provider.Response{Text: "ok"},
		)
		p := &stopPrompter{ans: tc.ans}
		f.agent.Gate = &executor.RuleGate{Prompter: p}
		if tc.ans.Choice == executor.ChoiceDeny || tc.ans.Choice == executor.ChoiceDenyReason {
			p.ans = tc.ans
		}
		added, err := f.agent.Turn(context.Background(), nil, "go")
		if !errors.Is(err, tc.err) && err != tc.err {
			t.Fatalf("%v: err = %v, want %v", tc.ans.Choice, err, tc.err)
		}
		if got := len(f.model.seen); got != tc.requests {
			t.Errorf("%v: %d model requests, want %d", tc.ans.Choice, got, tc.requests)
		}
		for _, name := range []string{"one", "two"} {
			if _, err := os.Stat(filepath.Join(f.dir, name)); err == nil {
				t.Errorf("%v: %s ran", tc.ans.Choice, name)
			}
		}
		if tc.ans.Choice == executor.ChoiceStop {
			if p.asked != 1 || len(added) != 5 || added[2].Text != "denied: "+executor.StoppedMessage || !strings.Contains(added[3].Text, "not run") || added[4].Text != executor.StoppedNote {
				t.Errorf("stop: asked %d, history %+v", p.asked, added)
			}
		}
		if tc.ans.Reason != "" && !strings.Contains(added[2].Text, "The user's reason: use make test instead") {
			t.Errorf("reason not sent to the model: %q", added[2].Text)
		}
	}
}
