// Package transcript owns the session transcript: its file format
// (version 1, JSON lines, snake_case), writing it as a session goes, and
// reading it back to resume, list or continue a session.
//
// A transcript lives at <data dir>/transcripts/<session id>.jsonl, 0600.
// Every line is one entry with "type", "v" (1), "time" and "session_id":
//
//	session  the first line: project (the directory tools ran in), provider, model
//	message  turn, role (user, assistant, tool), text, tool_calls [{id, name, arguments}],
//	         tool_call_id, is_error
//	summary  text (made by the model), through_turn (the last turn it replaces), kept_turns
//	resumed  the session was picked up again by another hush process
//
// What is written here was redacted by the executor first: secret values
// appear as [REDACTED:NAME], and resuming restores them that way.
//
// One hush process at a time writes a session: it holds an exclusive lock
// (flock on <id>.jsonl.lock, which holds its pid) while the session is
// open. Each entry is one write(2) on a file opened O_APPEND, so a hush
// killed at any moment leaves every earlier line whole; a torn last line is
// skipped on reading. After one write fails (a full disk) the session's
// file takes no further entry, so what is on disk is every entry up to a
// point, never a later one past a hole.
//
// A turn counts as completed once its final assistant message (one without
// tool calls) is written. A turn that did not complete (hush stopped, a
// write failed) is restored repaired, so the history is valid for every
// provider: a tool call without a result gets NotRecorded, a result that
// answers no call is dropped, and the turn ends with an assistant note. A
// turn the user cancelled is completed by the executor (every open call
// answered, then a note saying the turn was cancelled).
//
// Reading is bounded: only regular files are read, opened non-blocking
// (a named pipe or a device in transcripts/ is refused, not waited on),
// lines longer than LineLimit are skipped, and a listing reads at most
// ListHead bytes of each transcript.
package transcript

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/hushcli/hush/executor/provider"
)

// Version is the entries' "v".
const Version = 1

// DirName is the transcripts' directory in the data dir.
const DirName = "transcripts"

// Entry types.
const (
	TypeSession = "session"
	TypeMessage = "message"
	TypeSummary = "summary"
	TypeResumed = "resumed"
)

// ToolCall is a tool call as stored.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Args reads transcripts written before version 1, whose tool calls
	// had Go field names ("ID", "Name", "Args"); it is never written.
	Args json.RawMessage `json:"Args,omitempty"`
}

// Entry is one line of a transcript.
type Entry struct {
	Type      string    `json:"type"`
	V         int       `json:"v"`
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id"`

	// session
	Project  string `json:"project,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// ForkedFrom is the session a fork (--fork) was copied from.
	ForkedFrom string `json:"forked_from,omitempty"`

	// message (and summary: Text)
	Turn       int        `json:"turn,omitempty"`
	Role       string     `json:"role,omitempty"`
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`

	// summary
	ThroughTurn int `json:"through_turn,omitempty"`
	KeptTurns   int `json:"kept_turns,omitempty"`

	// Legacy (before version 1): the session id was "session".
	LegacySession string `json:"session,omitempty"`
}

// Line encodes e as one transcript line, stamping the version and, if
// unset, the time.
func Line(e Entry) []byte {
	e.V = Version
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	b, err := json.Marshal(e)
	if err != nil {
		// Entry has no field json cannot encode except invalid arguments,
		// which the executor never stores; keep the line well-formed.
		e.ToolCalls = nil
		b, _ = json.Marshal(e)
	}
	return append(b, '\n')
}

// MessageEntry is the entry of one message of turn.
func MessageEntry(session string, turn int, m provider.Message) Entry {
	e := Entry{Type: TypeMessage, SessionID: session, Turn: turn, Role: string(m.Role), Text: m.Text, ToolCallID: m.ToolCallID, IsError: m.IsError}
	for _, c := range m.ToolCalls {
		args := c.Args
		if len(args) == 0 || !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		e.ToolCalls = append(e.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
	}
	return e
}

// Header is what a session's first line says.
type Header struct {
	ID, Project, Provider, Model string
	// ForkedFrom is the session a fork continues ("" for a new one).
	ForkedFrom string
}

// Path is the transcript of session id in dataDir.
func Path(dataDir, id string) string { return filepath.Join(dataDir, DirName, id+".jsonl") }

// Turn is one completed turn: the user's prompt, the model's calls and
// their results, and its final answer.
type Turn struct {
	N        int
	Messages []provider.Message
}

// Conversation is what a session sends the model: a summary of compacted
// turns, if any, then turns verbatim.
type Conversation struct {
	// Summary replaces turns 1..SummaryThrough; "" when never compacted.
	Summary        string
	SummaryThrough int
	Turns          []Turn
}

// SummaryPrefix starts the message that carries a summary to the model.
const SummaryPrefix = "[Summary of the earlier conversation, made by the model when the session was compacted]\n\n"

// Messages is the history to send the model.
func (c *Conversation) Messages() []provider.Message {
	var out []provider.Message
	if c.Summary != "" {
		out = append(out, provider.Message{Role: provider.RoleUser, Text: SummaryPrefix + c.Summary})
	}
	for _, t := range c.Turns {
		out = append(out, t.Messages...)
	}
	return out
}

// Add appends turn n.
func (c *Conversation) Add(n int, msgs []provider.Message) {
	c.Turns = append(c.Turns, Turn{N: n, Messages: append([]provider.Message(nil), msgs...)})
}

// ToolCalls counts the tool calls of the verbatim turns.
func (c *Conversation) ToolCalls() int {
	n := 0
	for _, t := range c.Turns {
		for _, m := range t.Messages {
			n += len(m.ToolCalls)
		}
	}
	return n
}
