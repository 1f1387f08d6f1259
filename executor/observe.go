package executor

import (
	"sync"
	"time"

	"github.com/hushcli/hush/executor/provider"
)

// The interfaces below are optional capabilities of an [Events] sink, found
// by type assertion: the terminal needs only Events, the --json stream
// (executor/events) wants every one. Like Events, everything they receive
// is already redacted.

// TurnEvents is told where a turn starts and how it ended.
type TurnEvents interface {
	TurnStarted(turn int)
	// TurnCompleted is called once the model gave its final answer (not
	// when the turn failed or was cancelled: the caller reports that).
	TurnCompleted(turn int, r TurnResult)
}

// PermissionEvents is told every gate decision, after the audit log
// recorded it.
type PermissionEvents interface {
	Permission(req Request, v Verdict)
}

// ToolFinishEvents gets the end of a call with its status, exit code and
// duration. It is called after ToolEnd.
type ToolFinishEvents interface {
	ToolFinished(call provider.ToolCall, f ToolFinish)
}

// Tool call statuses, as ToolFinish.Status and the --json stream name them.
const (
	StatusOK        = "ok"        // ran; exit code 0 or no process
	StatusError     = "error"     // ran and failed, or could not run
	StatusDenied    = "denied"    // the gate said no: nothing ran
	StatusCancelled = "cancelled" // the user interrupted the turn
)

// ToolFinish is how one tool call ended.
type ToolFinish struct {
	Status   string
	Result   string // what the model sees
	IsError  bool
	ExitCode *int // nil when no process ran to its end
	Duration time.Duration
}

// TurnResult is what one turn produced.
type TurnResult struct {
	// Turn is the turn's number in the session.
	Turn int
	// Messages are the turn's new messages (to append to history).
	Messages []provider.Message
	// Final is the model's last text, redacted.
	Final string
	// Usage sums the provider's reports over the turn's model calls.
	Usage provider.Usage
	// Denied lists the gate ids denied during the turn, in order.
	Denied []string
	// Steps counts model calls.
	Steps int
	// Context is the size of the conversation at the last model call, in
	// tokens as the provider reported them (0 when it reported none).
	Context int64
}

// denials collects the gate ids denied during one turn.
type denials struct {
	mu   sync.Mutex
	ids  []string
	stop bool // the person ended the turn at an approval
}

func (d *denials) stopTurn() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.stop = true
	d.mu.Unlock()
}

func (d *denials) stopped() bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stop
}

func (d *denials) add(id string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.ids = append(d.ids, id)
	d.mu.Unlock()
}

func (d *denials) list() []string {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.ids...)
}

// Tee sends every event to each sink, and each optional capability to the
// sinks that have it. nil sinks are skipped.
func Tee(sinks ...Events) Events {
	var t tee
	for _, s := range sinks {
		if s != nil {
			t = append(t, s)
		}
	}
	if len(t) == 1 {
		return t[0]
	}
	return t
}

type tee []Events

func (t tee) Text(d string) {
	for _, s := range t {
		s.Text(d)
	}
}

func (t tee) ToolStart(c provider.ToolCall) {
	for _, s := range t {
		s.ToolStart(c)
	}
}

func (t tee) ToolOutput(c provider.ToolCall, b []byte) {
	for _, s := range t {
		s.ToolOutput(c, b)
	}
}

func (t tee) ToolEnd(c provider.ToolCall, r string, isErr bool) {
	for _, s := range t {
		s.ToolEnd(c, r, isErr)
	}
}

func (t tee) TurnStarted(turn int) {
	for _, s := range t {
		if e, ok := s.(TurnEvents); ok {
			e.TurnStarted(turn)
		}
	}
}

func (t tee) TurnCompleted(turn int, r TurnResult) {
	for _, s := range t {
		if e, ok := s.(TurnEvents); ok {
			e.TurnCompleted(turn, r)
		}
	}
}

func (t tee) Permission(req Request, v Verdict) {
	for _, s := range t {
		if e, ok := s.(PermissionEvents); ok {
			e.Permission(req, v)
		}
	}
}

// Usage forwards a model call's token counts to the sinks that show or
// export them: with telemetry on, the chat's status line still counts.
func (t tee) Usage(u provider.Usage) {
	for _, s := range t {
		if e, ok := s.(UsageEvents); ok {
			e.Usage(u)
		}
	}
}

// Notice forwards a one-line note about the model connection.
func (t tee) Notice(msg string) {
	for _, s := range t {
		if e, ok := s.(interface{ Notice(string) }); ok {
			e.Notice(msg)
		}
	}
}

func (t tee) ToolFinished(c provider.ToolCall, f ToolFinish) {
	for _, s := range t {
		if e, ok := s.(ToolFinishEvents); ok {
			e.ToolFinished(c, f)
		}
	}
}
