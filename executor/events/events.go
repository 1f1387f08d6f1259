// Package events writes the `hush run --json` event stream: one JSON
// object per line, version 1, described by docs/events.schema.json.
//
// Every line has "type", "v" (the stream's version, 1) and "time". The
// types, in the order a run emits them:
//
//	session.started  session_id, model, directory, sandbox, tools, transcript
//	session.compacted through_turn, summarized_turns, kept_turns, summary (made by the model)
//	turn.started     turn
//	text.delta       turn, text
//	tool.started     turn, call_id, name, arguments (as the model sent them, redacted)
//	permission       turn (0: an MCP server starting, reported after session.started), gate, subject, decision, source, rule
//	net.connect      turn, tool, method, host, port, secrets (names), decision, source, rule, reason, sent, received
//	tool.output      call_id, text
//	tool.finished    call_id, name, status, exit_code, duration_ms, result
//	turn.completed   turn, final_text, usage, denied
//	error            kind, message
//
// A field is added to a type without changing "v"; a field is never
// removed or given another meaning without a new "v". A consumer should
// ignore types and fields it does not know.
//
// The package never sees a secret value: the executor redacts everything
// before it reaches an [executor.Events] sink, and the writer adds nothing
// but names, ids and counts.
package events

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/provider"
)

// Version is the stream's "v".
const Version = 1

// Error kinds.
const (
	KindUsage       = "usage"       // the command line was wrong (exit 2)
	KindConfig      = "config"      // config, vault or provider setup failed (exit 1)
	KindModel       = "model"       // the model call failed (exit 1)
	KindMaxSteps    = "max_steps"   // the model kept calling tools (exit 1)
	KindDenied      = "denied"      // the turn ended with a denial (exit 3)
	KindInterrupted = "interrupted" // Ctrl-C (exit 130), SIGHUP (129) or SIGTERM (143)
	KindStorage     = "storage"     // the turn ran but its transcript could not be written (exit 1)
	KindInternal    = "internal"    // anything else (exit 1)
)

// Session is what session.started reports.
type Session struct {
	ID         string   `json:"session_id"`
	Model      Model    `json:"model"`
	Directory  string   `json:"directory"`
	Sandbox    Sandbox  `json:"sandbox"`
	Tools      []string `json:"tools"`
	Transcript string   `json:"transcript,omitempty"`
	// Resumed is true when the session continues an earlier one.
	Resumed bool `json:"resumed"`
	// Turns counts the turns the session already had.
	Turns int `json:"turns"`
}

// Model names the model a session talks to.
type Model struct {
	Provider string `json:"provider"`
	Name     string `json:"name"`
}

// Sandbox says how host tools are contained.
type Sandbox struct {
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
}

// Usage is the provider's token count for a turn.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CachedTokens int64 `json:"cached_tokens"`
}

// Writer emits events as JSON lines. It implements executor.Events and its
// optional capabilities. It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	enc  *json.Encoder
	now  func() time.Time
	turn int
	// Until session.started is written, permission events (an MCP server's
	// start-up reads, turn 0) wait here, so session.started stays first.
	started bool
	early   []any
}

// New returns a Writer on w.
func New(w io.Writer) *Writer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Writer{enc: enc, now: time.Now}
}

type header struct {
	Type string `json:"type"`
	V    int    `json:"v"`
	Time string `json:"time"`
}

func (w *Writer) head(typ string) header {
	return header{Type: typ, V: Version, Time: w.now().UTC().Format(time.RFC3339Nano)}
}

func (w *Writer) emit(v any) {
	// An event that cannot be written (closed pipe) is dropped: the run
	// itself goes on and its exit code still says how it ended.
	_ = w.enc.Encode(v)
}

// SessionStarted emits session.started.
func (w *Writer) SessionStarted(s Session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.Tools == nil {
		s.Tools = []string{}
	}
	w.emit(struct {
		header
		Session
	}{w.head("session.started"), s})
	w.started = true
	for _, e := range w.early {
		w.emit(e)
	}
	w.early = nil
}

// Compacted emits session.compacted: the model summarized turns 1..through
// (summarized of them this time) and kept the last kept turns verbatim.
func (w *Writer) Compacted(through, summarized, kept int, summary string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.emit(struct {
		header
		ThroughTurn int    `json:"through_turn"`
		Summarized  int    `json:"summarized_turns"`
		Kept        int    `json:"kept_turns"`
		Summary     string `json:"summary"`
	}{w.head("session.compacted"), through, summarized, kept, summary})
}

// Error emits error.
func (w *Writer) Error(kind, message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.emit(struct {
		header
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}{w.head("error"), kind, message})
}

// TurnStarted implements executor.TurnEvents.
func (w *Writer) TurnStarted(turn int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.turn = turn
	w.emit(struct {
		header
		Turn int `json:"turn"`
	}{w.head("turn.started"), turn})
}

// TurnCompleted implements executor.TurnEvents.
func (w *Writer) TurnCompleted(turn int, r executor.TurnResult) {
	w.mu.Lock()
	defer w.mu.Unlock()
	denied := r.Denied
	if denied == nil {
		denied = []string{}
	}
	w.emit(struct {
		header
		Turn      int      `json:"turn"`
		FinalText string   `json:"final_text"`
		Usage     Usage    `json:"usage"`
		Steps     int      `json:"steps"`
		Denied    []string `json:"denied"`
	}{w.head("turn.completed"), turn, r.Final, usageOf(r.Usage), r.Steps, denied})
}

func usageOf(u provider.Usage) Usage {
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedTokens: u.CachedTokens}
}

// Text implements executor.Events.
func (w *Writer) Text(delta string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.emit(struct {
		header
		Turn int    `json:"turn"`
		Text string `json:"text"`
	}{w.head("text.delta"), w.turn, delta})
}

// ToolStart implements executor.Events.
func (w *Writer) ToolStart(call provider.ToolCall) {
	w.mu.Lock()
	defer w.mu.Unlock()
	args := call.Args
	if !json.Valid(args) {
		// The executor hands over an object; anything else is sent as text
		// rather than breaking the line.
		b, _ := json.Marshal(map[string]string{"raw": string(args)})
		args = b
	}
	w.emit(struct {
		header
		Turn      int             `json:"turn"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}{w.head("tool.started"), w.turn, call.ID, call.Name, args})
}

// ToolOutput implements executor.Events.
func (w *Writer) ToolOutput(call provider.ToolCall, chunk []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.emit(struct {
		header
		CallID string `json:"call_id"`
		Text   string `json:"text"`
	}{w.head("tool.output"), call.ID, string(chunk)})
}

// ToolEnd implements executor.Events; tool.finished comes from ToolFinished,
// which carries the status, exit code and duration.
func (w *Writer) ToolEnd(provider.ToolCall, string, bool) {}

// ToolFinished implements executor.ToolFinishEvents.
func (w *Writer) ToolFinished(call provider.ToolCall, f executor.ToolFinish) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.emit(struct {
		header
		CallID     string `json:"call_id"`
		Name       string `json:"name"`
		Status     string `json:"status"`
		ExitCode   *int   `json:"exit_code"`
		DurationMS int64  `json:"duration_ms"`
		IsError    bool   `json:"is_error"`
		Result     string `json:"result"`
	}{w.head("tool.finished"), call.ID, call.Name, f.Status, f.ExitCode, f.Duration.Milliseconds(), f.IsError, f.Result})
}

// Permission implements executor.PermissionEvents.
func (w *Writer) Permission(req executor.Request, v executor.Verdict) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ev := struct {
		header
		Turn     int    `json:"turn"`
		Gate     string `json:"gate"`
		Subject  string `json:"subject"`
		Decision string `json:"decision"`
		Source   string `json:"source"`
		Rule     string `json:"rule,omitempty"`
		Message  string `json:"message,omitempty"`
		Path     string `json:"path,omitempty"`
		Diff     string `json:"diff,omitempty"`
	}{w.head("permission"), req.Turn, req.GateID, req.Subject, string(v.Decision), v.Source, v.Rule, v.Message, req.Path, req.Diff}
	if !w.started {
		w.early = append(w.early, ev)
		return
	}
	w.emit(ev)
}

// NetConnect writes one connection through hush's egress proxy
// (net.connect), from its audit record: names and counts, never a value.
func (w *Writer) NetConnect(e auditlog.Entry) {
	if e.Net == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ev := struct {
		header
		Turn     int      `json:"turn"`
		Tool     string   `json:"tool"`
		Method   string   `json:"method"`
		Host     string   `json:"host"`
		Port     int      `json:"port"`
		Secrets  []string `json:"secrets,omitempty"`
		Decision string   `json:"decision"`
		Source   string   `json:"source"`
		Rule     string   `json:"rule,omitempty"`
		Reason   string   `json:"reason,omitempty"`
		Sent     int64    `json:"sent"`
		Received int64    `json:"received"`
		Error    string   `json:"error,omitempty"`
	}{w.head("net.connect"), e.Turn, e.Tool, e.Net.Method, e.Net.Host, e.Net.Port, e.Net.Secrets, string(e.Decision), e.Source, e.Rule,
		e.Net.Reason, e.Net.Sent, e.Net.Received, e.Net.Error}
	if !w.started {
		w.early = append(w.early, ev)
		return
	}
	w.emit(ev)
}

var (
	_ executor.Events           = (*Writer)(nil)
	_ executor.TurnEvents       = (*Writer)(nil)
	_ executor.ToolFinishEvents = (*Writer)(nil)
	_ executor.PermissionEvents = (*Writer)(nil)
)
