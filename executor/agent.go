package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/tools"
)

// Events receives what a turn does, as it happens, for the terminal or the
// --json stream. Everything passed here is already redacted. Text deltas
// and tool output are also sanitized of escape sequences (before redaction,
// so a coloured secret is caught); call arguments and results are not, so
// a terminal sanitizes those itself.
type Events interface {
	Text(delta string)
	ToolStart(call provider.ToolCall)
	ToolOutput(call provider.ToolCall, chunk []byte)
	ToolEnd(call provider.ToolCall, result string, isError bool)
}

// UsageEvents is an optional capability of Events: it receives the token
// counts the server reported for each model call of a turn (several per
// turn when tools are called), as soon as the call's stream ends.
type UsageEvents interface {
	Usage(u provider.Usage)
}

// Agent runs turns: model → tool calls → model, until a final answer.
type Agent struct {
	Provider provider.Provider
	Tools    *Registry
	Gate     Gate
	Audit    *auditlog.Log
	// Network is the egress proxy host tools' calls go out through
	// (network.go); nil leaves them the network their sandbox gives.
	Network Network
	// Vault is the ungated vault; tools only ever see it through the gate.
	Vault SecretReader
	// Scrub is the session's secret snapshots, shared with its background
	// processes and MCP servers. The agent takes one per turn, so a secret
	// stored mid-session is scrubbed from the next turn on. When nil, the
	// agent makes its own from Secrets and SecretsVersion at its first turn.
	Scrub *SecretCache
	// Secrets returns every secret (name → value) for the redactor and the
	// env builder's classification; used only when Scrub is nil.
	Secrets func() (map[string]string, error)
	// SecretsVersion, if set, returns a number that changes whenever
	// Secrets' answer may have changed (vault.Layered.Version). While it
	// stays the same the agent skips reading the vault and keeps its
	// redactor; when it fails, the agent reads Secrets as without it.
	SecretsVersion func() (uint64, error)
	// Ambient is hush's start-up environment snapshot. It must not change
	// once the first turn has started.
	Ambient map[string]string
	// Dir is the project root.
	Dir string
	// Policy returns a tool's configured spawn policy.
	Policy func(tool string) tools.Policy
	Events Events
	// Transcript, if set, receives every message of the conversation as a
	// JSON line, redacted.
	Transcript io.Writer
	Session    string
	// PriorTurns is the highest turn number a resumed session already has;
	// this agent's turns are numbered after it.
	PriorTurns int
	System     string
	// UnsafeNoRedaction passes tool output through unscrubbed. It exists
	// only so `hush audit`'s tests can prove redaction is load-bearing.
	UnsafeNoRedaction bool
	// Compaction says when the conversation is compacted (see Compact).
	Compaction CompactPolicy
	// MaxSteps bounds model calls in one turn (default 25).
	MaxSteps int
	// OutputHead and OutputTail bound what the model sees of one tool
	// output (default 16 KiB each); the rest is cut with a note.
	OutputHead, OutputTail int
	// StartDenied says which MCP servers were not started for want of a
	// credential (the gate refused a secret one needs, or one signs in
	// with OAuth and no sign-in is stored), one phrase each; `hush run`
	// ends such a session with exit status 3.
	StartDenied []string

	mu      sync.Mutex
	turns   int
	ambient *tools.Ambient // the tools' view of Ambient, made at the first turn
	scrub   *SecretCache   // Scrub, or the agent's own
}

// SwitchSession makes the agent continue session id, writing to transcript
// and numbering turns after priorTurns; it returns the transcript it wrote
// before. It must not be called during a turn.
func (a *Agent) SwitchSession(id string, transcript io.Writer, priorTurns int) io.Writer {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := a.Transcript
	a.Session, a.Transcript, a.PriorTurns, a.turns = id, transcript, priorTurns, 0
	return old
}

// scrubbers returns the redactor and secret set for this turn's vault.
func (a *Agent) scrubbers() (*redact.Redactor, *tools.SecretSet, error) {
	a.mu.Lock()
	if a.scrub == nil {
		a.scrub = a.Scrub
		if a.scrub == nil && a.Secrets != nil {
			a.scrub = NewSecretCache(a.Secrets, a.SecretsVersion)
		}
	}
	c := a.scrub
	a.mu.Unlock()
	snap, err := c.Current()
	if err != nil {
		return nil, nil, fmt.Errorf("read the vault: %w", err)
	}
	return snap.Redactor, snap.Secrets, nil
}

// ErrMaxSteps ends a turn whose model kept calling tools.
var ErrMaxSteps = errors.New("turn stopped: too many model steps")

// ErrModel is wrapped by the error of a turn whose model call failed.
var ErrModel = errors.New("model")

// RunTurn sends prompt after history and runs the conversation to a final
// answer. It returns everything the turn produced: the new messages (to
// append to history), its final text, the provider's token usage and the
// gate ids it was denied. On error the
// result still holds the messages added so far.
func (a *Agent) RunTurn(ctx context.Context, history []provider.Message, prompt string) (TurnResult, error) {
	a.mu.Lock()
	if a.turns < a.PriorTurns {
		a.turns = a.PriorTurns
	}
	a.turns++
	turn := a.turns
	if a.ambient == nil {
		amb := tools.NewAmbient(a.Ambient)
		a.ambient = &amb
	}
	ambient := *a.ambient
	a.mu.Unlock()

	res := TurnResult{Turn: turn}
	red, secrets, err := a.scrubbers()
	if err != nil {
		return res, err
	}
	if a.UnsafeNoRedaction {
		red = nil // a nil Redactor passes bytes through
	}
	denied := &denials{}
	gate := Gate(auditedGate{gate: a.Gate, log: a.Audit, session: a.Session, events: a.Events, denied: denied})
	te, _ := a.Events.(TurnEvents)
	if te != nil {
		te.TurnStarted(turn)
	}

	msgs := append([]provider.Message(nil), history...)
	add := func(m provider.Message) {
		msgs = append(msgs, m)
		res.Messages = append(res.Messages, m)
		a.writeTranscript(turn, m)
	}
	// The prompt goes to the model as given (the chat asked the user
	// first), but what is kept — the history of later turns, the
	// transcript, a compaction's summary request — holds no vault value.
	msgs = append(msgs, provider.Message{Role: provider.RoleUser, Text: prompt})
	kept := provider.Message{Role: provider.RoleUser, Text: red.String(prompt)}
	res.Messages = append(res.Messages, kept)
	a.writeTranscript(turn, kept)

	maxSteps := a.MaxSteps
	if maxSteps <= 0 {
		maxSteps = 25
	}
	specs := a.toolSpecs()
	for step := 0; step < maxSteps; step++ {
		textRed := red.HoldingWriter(textSink{a.Events}) // an answer shorter than every secret builds no redactor
		textOut := outbuf.NewSanitizeWriter(textRed)
		resp, err := a.Provider.Stream(ctx, provider.Request{System: a.System, Messages: msgs, Tools: specs, RetryStall: step == 0},
			func(delta string) { _, _ = io.WriteString(textOut, delta) })
		_ = textOut.Close()
		_ = textRed.Close()
		res.Steps++
		res.Denied = denied.list()
		if err != nil {
			if ctx.Err() != nil {
				closeCancelled(nil, add) // every call so far has its result
				return res, ctx.Err()
			}
			msg := red.String(err.Error())
			var me *provider.MalformedEventError
			if errors.As(err, &me) {
				msg = me.Redacted(red.String) // redacted whole, then cut
			}
			return res, fmt.Errorf("%w: %s", ErrModel, msg)
		}
		if ue, ok := a.Events.(UsageEvents); ok {
			ue.Usage(resp.Usage)
		}
		res.Usage.InputTokens += resp.Usage.InputTokens
		res.Usage.OutputTokens += resp.Usage.OutputTokens
		res.Usage.CachedTokens += resp.Usage.CachedTokens
		res.Context = resp.Usage.InputTokens + resp.Usage.OutputTokens
		if a.Provider.Name() == provider.Anthropic {
			res.Context += resp.Usage.CachedTokens // reported apart from input_tokens
		}
		calls := make([]provider.ToolCall, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			c.Args = json.RawMessage(red.String(string(c.Args)))
			calls[i] = c
		}
		final := red.String(outbuf.Sanitize(resp.Text))
		add(provider.Message{Role: provider.RoleAssistant, Text: final, ToolCalls: calls})
		if len(calls) == 0 {
			res.Final = final
			if te != nil {
				te.TurnCompleted(turn, res)
			}
			return res, nil
		}
		for i, call := range calls {
			text, isErr := a.runTool(ctx, gate, red, secrets, ambient, turn, call)
			add(provider.Message{Role: provider.RoleTool, ToolCallID: call.ID, Text: text, IsError: isErr})
			res.Denied = denied.list()
			if ctx.Err() != nil {
				closeCancelled(calls[i+1:], add)
				return res, ctx.Err()
			}
			if denied.stopped() {
				// The person ended the turn at an approval: the other
				// calls do not run and the model is not asked again.
				closeTurn(calls[i+1:], add, "not run: the user stopped the turn", StoppedNote)
				return res, ErrStopped
			}
		}
	}
	return res, fmt.Errorf("%w (%d); raise turn.max_steps in config.toml to allow more", ErrMaxSteps, maxSteps)
}

// CancelledNote ends a turn the user cancelled, in the history and the
// transcript: the model is told the turn stopped, and the next request
// alternates roles (a user message follows an assistant one).
const CancelledNote = "(turn cancelled by the user before it finished)"

// closeCancelled ends a cancelled turn with add: each call the model
// made that did not run (open) gets a result saying so (an unanswered
// call makes both providers' APIs refuse the next request), then
// CancelledNote. A turn so closed is complete in the transcript, so a
// resumed session keeps it.
func closeCancelled(open []provider.ToolCall, add func(provider.Message)) {
	closeTurn(open, add, "not run: cancelled by the user", CancelledNote)
}

// StoppedNote ends a turn the user stopped at an approval (Esc).
const StoppedNote = "(turn stopped by the user at a tool call's approval)"

// ErrStopped ends a turn the person stopped at an approval (Esc or Ctrl-C
// at the prompt): the call was denied, nothing more ran, and the model
// was not asked again.
var ErrStopped = errors.New("turn stopped at the approval")

// closeTurn gives each call that did not run (open) the result why, so
// the next request is valid for both providers, then the closing note.
func closeTurn(open []provider.ToolCall, add func(provider.Message), why, note string) {
	for _, c := range open {
		add(provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, Text: why, IsError: true})
	}
	add(provider.Message{Role: provider.RoleAssistant, Text: note})
}

// runTool is the decorator chain every call passes: gate, audit, redact, tool.
func (a *Agent) runTool(ctx context.Context, gate Gate, red *redact.Redactor, secrets *tools.SecretSet, ambient tools.Ambient, turn int, call provider.ToolCall) (string, bool) {
	a.Events.ToolStart(call)
	start := time.Now()
	status := StatusError
	var exitCode *int
	finish := func(text string, isErr bool) (string, bool) {
		a.Events.ToolEnd(call, text, isErr)
		if fe, ok := a.Events.(ToolFinishEvents); ok {
			fe.ToolFinished(call, ToolFinish{Status: status, Result: text, IsError: isErr, ExitCode: exitCode, Duration: time.Since(start)})
		}
		return text, isErr
	}
	tool, ok := a.Tools.Get(call.Name)
	if !ok {
		return finish(fmt.Sprintf("error: unknown tool %q (available: %s)", call.Name, strings.Join(a.toolNames(), ", ")), true)
	}
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	req := Request{GateID: GateToolRun + call.Name, Subject: call.Name, Turn: turn, Detail: string(call.Args), Dir: a.Dir}
	var configured []string
	if a.Policy != nil {
		configured = a.Policy(call.Name).Secrets
	}
	if sum := SummarizeCall(args, configured); sum.HasCommand {
		// The command is what runs; the secrets are names, never values.
		req.Command, req.HasCommand, req.Secrets = sum.Command, true, sum.Secrets
	} else {
		req.Secrets = sum.Secrets
	}
	var preview *Preview
	if pv, ok := tool.(Previewer); ok {
		// Before the gate: the person deciding sees the resolved path or the
		// diff. A refusal here has nothing to approve and asks nobody.
		p, err := pv.Preview(ctx, a.toolContext(ctx, gate, secrets, ambient, turn, call.Name, io.Discard), args)
		if err != nil {
			return finish("error: "+red.String(err.Error()), true)
		}
		preview = &p
		if p.Detail != "" {
			req.Detail = red.String(p.Detail)
		}
		req.Path, req.Diff = p.Path, red.String(p.Diff)
		if h := p.HTTP; h != nil {
			rh := &HTTPCall{Method: h.Method, URL: red.String(h.URL), Body: red.String(h.Body), Host: h.Host}
			for _, kv := range h.Headers {
				rh.Headers = append(rh.Headers, [2]string{kv[0], red.String(kv[1])})
			}
			req.HTTP = rh
		}
		req.Default, req.DefaultReason = p.Default, p.DefaultReason
	}
	v, err := gate.Decide(ctx, req)
	if err != nil {
		return finish("error: "+red.String(err.Error()), true)
	}
	if v.Decision != Allow {
		status = StatusDenied
		return finish(DenialText(red.String(v.Message)), true)
	}

	head, tail := a.OutputHead, a.OutputTail
	if head <= 0 {
		head = 16 << 10
	}
	if tail <= 0 {
		tail = 16 << 10
	}
	kept := outbuf.NewHeadTail(head, tail)
	// Sanitize before redacting: a secret printed with colour codes inside it
	// (grep --color) only matches once the codes are gone.
	redacted := red.Writer(io.MultiWriter(kept, outputSink{a.Events, call}))
	out := outbuf.NewSanitizeWriter(redacted)
	tc := a.toolContext(ctx, gate, secrets, ambient, turn, call.Name, out)
	tc.Preview = preview
	res, runErr := tool.Run(ctx, tc, args)
	_ = out.Close()
	_ = redacted.Close()

	var b strings.Builder
	b.WriteString(kept.String())
	isErr := res.IsError
	exitCode = res.ExitCode
	var denial *DeniedError
	switch {
	case ctx.Err() != nil:
		appendLine(&b, "cancelled by the user")
		isErr = true
		status = StatusCancelled
	case errors.As(runErr, &denial):
		// A secret it asked for was refused: one sentence, not an error.
		appendLine(&b, DenialText(red.String(denial.Message)))
		isErr = true
	case runErr != nil:
		appendLine(&b, "error: "+red.String(runErr.Error()))
		isErr = true
	case res.Status != "":
		appendLine(&b, "["+red.String(res.Status)+"]")
	}
	switch {
	case ctx.Err() != nil:
	case errors.Is(runErr, ErrDenied):
		status = StatusDenied // a secret it asked for was refused: nothing ran
	case runErr == nil && !isErr:
		status = StatusOK
	}
	if b.Len() == 0 {
		b.WriteString("(no output)")
	}
	return finish(b.String(), isErr)
}

// toolContext is what one call of the named tool gets. A tool that holds
// no vault (NoVault) gets a ToolContext whose Vault is nil: nothing it
// does can reach a secret.
func (a *Agent) toolContext(ctx context.Context, gate Gate, secrets *tools.SecretSet, ambient tools.Ambient, turn int, name string, out io.Writer) *ToolContext {
	tc := &ToolContext{
		Subject: name,
		Turn:    turn,
		Dir:     a.Dir,
		Ambient: ambient,
		Vault:   GatedVault(ctx, gate, name, turn, a.Vault),
		Secrets: secrets,
		Output:  out,
		Confirm: func(gateID, detail string) (Verdict, error) {
			return gate.Decide(ctx, Request{GateID: gateID, Subject: name, Turn: turn, Detail: detail})
		},
	}
	if a.Policy != nil {
		tc.Policy = a.Policy(name)
	}
	tc.Network = a.Network
	if t, ok := a.Tools.Get(name); ok {
		if nv, ok := t.(NoVault); ok && nv.NoVault() {
			tc.Vault, tc.Secrets = nil, nil
		}
	}
	return tc
}

func appendLine(b *strings.Builder, s string) {
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(s)
}

func (a *Agent) toolSpecs() []provider.ToolSpec {
	var specs []provider.ToolSpec
	for _, t := range a.Tools.List() {
		specs = append(specs, provider.ToolSpec{Name: t.Name(), Description: t.Description(), Schema: t.Schema()})
	}
	return specs
}

func (a *Agent) toolNames() []string {
	var names []string
	for _, t := range a.Tools.List() {
		names = append(names, t.Name())
	}
	return names
}

func (a *Agent) writeTranscript(turn int, m provider.Message) {
	if a.Transcript == nil {
		return
	}
	// One write per entry, to a file opened O_APPEND: a crash leaves every
	// earlier entry whole (see executor/transcript).
	_, _ = a.Transcript.Write(transcript.Line(transcript.MessageEntry(a.Session, turn, m)))
}

type textSink struct{ ev Events }

func (t textSink) Write(p []byte) (int, error) {
	t.ev.Text(string(p))
	return len(p), nil
}

type outputSink struct {
	ev   Events
	call provider.ToolCall
}

func (o outputSink) Write(p []byte) (int, error) {
	o.ev.ToolOutput(o.call, append([]byte(nil), p...))
	return len(p), nil
}
