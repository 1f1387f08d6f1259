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
// Each entry is one write(2) on a file opened O_APPEND, so a hush killed
// at any moment leaves every earlier line whole; a torn last line is
// skipped on reading. A turn counts as completed once its final assistant
// message (one without tool calls) is written; resuming restores completed
// turns only, so the model never sees a call without its result. A turn
// the user cancelled is completed by the executor (every open call
// answered, then a note saying the turn was cancelled).
package transcript

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
}

// Path is the transcript of session id in dataDir.
func Path(dataDir, id string) string { return filepath.Join(dataDir, DirName, id+".jsonl") }

// Create starts the transcript of a new session: it creates the file
// (0600, its directory 0700) and writes the session line.
func Create(dataDir string, h Header) (*os.File, error) {
	path := Path(dataDir, h.ID)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the transcript directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create the transcript: %w", err)
	}
	if _, err := f.Write(Line(Entry{Type: TypeSession, SessionID: h.ID, Project: h.Project, Provider: h.Provider, Model: h.Model})); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the transcript: %w", err)
	}
	return f, nil
}

// Reopen opens an existing transcript to add turns to it, and records that
// the session was resumed.
func Reopen(s *Session) (*os.File, error) {
	f, err := os.OpenFile(s.Path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the transcript: %w", err)
	}
	if s.torn {
		// The last line was cut by a crash: end it, so the next entry
		// starts a line of its own.
		_, _ = f.Write([]byte("\n"))
	}
	if _, err := f.Write(Line(Entry{Type: TypeResumed, SessionID: s.ID})); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the transcript: %w", err)
	}
	return f, nil
}

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

// Session is a transcript read back.
type Session struct {
	ID, Project, Provider, Model string
	Path                         string
	Started, Last                time.Time
	// FirstPrompt is the first user message.
	FirstPrompt string
	// Completed counts completed turns, including summarized ones.
	Completed int
	// LastTurn is the highest turn number in the file, completed or not:
	// a resumed session numbers its next turn after it.
	LastTurn int
	// Incomplete counts turns that did not finish (cancelled, failed, or
	// cut by a crash); they are not restored.
	Incomplete int
	// Damaged counts lines that are not entries (a line torn by a crash).
	Damaged int
	Conversation
	torn bool
}

// ErrNotFound: no session matches.
var ErrNotFound = errors.New("no such session")

// Load reads the transcript at path.
func Load(path string) (*Session, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &Session{Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	if err := s.read(f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if s.Last.IsZero() { // a transcript from before version 1 has no times
		if st, err := f.Stat(); err == nil {
			s.Started, s.Last = st.ModTime(), st.ModTime()
		}
	}
	return s, nil
}

func (s *Session) read(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		cur      *Turn // the turn being read
		legacyN  int
		complete = map[int]bool{}
	)
	finish := func() {
		if cur == nil {
			return
		}
		msgs := cur.Messages
		if last := msgs[len(msgs)-1]; last.Role == provider.RoleAssistant && len(last.ToolCalls) == 0 {
			s.Turns = append(s.Turns, *cur)
			complete[cur.N] = true
		} else {
			s.Incomplete++
		}
		cur = nil
	}
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			torn := line[len(line)-1] != '\n'
			var e Entry
			if jerr := json.Unmarshal(line, &e); jerr != nil {
				// Cut by a crash mid-write (every earlier line is whole), or
				// damaged: skipped, and counted.
				s.Damaged++
				s.torn = torn
			} else {
				if s.Started.IsZero() {
					s.Started = e.Time
				}
				if !e.Time.IsZero() {
					s.Last = e.Time
				}
				s.torn = false
				switch e.Type {
				case TypeSession:
					s.Project, s.Provider, s.Model = e.Project, e.Provider, e.Model
					if e.SessionID != "" {
						s.ID = e.SessionID
					}
				case TypeSummary:
					finish()
					s.Summary, s.SummaryThrough = e.Text, e.ThroughTurn
					var kept []Turn
					for _, t := range s.Turns {
						if t.N > e.ThroughTurn {
							kept = append(kept, t)
						}
					}
					s.Turns = kept
				case TypeMessage, "": // "": before version 1
					n := e.Turn
					if e.V == 0 {
						if e.Role == string(provider.RoleUser) {
							legacyN++
						}
						n = legacyN
					}
					if cur != nil && (n != cur.N || e.Role == string(provider.RoleUser)) {
						finish()
					}
					if cur == nil {
						cur = &Turn{N: n}
						if n > s.LastTurn {
							s.LastTurn = n
						}
					}
					m := provider.Message{Role: provider.Role(e.Role), Text: e.Text, ToolCallID: e.ToolCallID, IsError: e.IsError}
					for _, c := range e.ToolCalls {
						args := c.Arguments
						if len(args) == 0 {
							args = c.Args
						}
						m.ToolCalls = append(m.ToolCalls, provider.ToolCall{ID: c.ID, Name: c.Name, Args: args})
					}
					if s.FirstPrompt == "" && m.Role == provider.RoleUser {
						s.FirstPrompt = m.Text
					}
					cur.Messages = append(cur.Messages, m)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	finish()
	s.Completed = len(complete)
	if s.SummaryThrough > 0 {
		// Summarized turns were completed; count them once.
		s.Completed = 0
		for n := range complete {
			if n > s.SummaryThrough {
				s.Completed++
			}
		}
		s.Completed += s.SummaryThrough
	}
	return nil
}

// List reads every transcript in dataDir, most recently active first. A
// transcript that cannot be read is skipped and reported in skipped.
func List(dataDir string) (sessions []*Session, skipped []error, err error) {
	files, err := filepath.Glob(filepath.Join(dataDir, DirName, "*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		sessions = append(sessions, s)
	}
	sort.SliceStable(sessions, func(i, j int) bool {
		if !sessions[i].Last.Equal(sessions[j].Last) {
			return sessions[i].Last.After(sessions[j].Last)
		}
		return sessions[i].ID > sessions[j].ID
	})
	return sessions, skipped, nil
}

// Latest is the most recently active session of project that has a
// completed turn.
func Latest(dataDir, project string) (*Session, error) {
	all, _, err := List(dataDir)
	if err != nil {
		return nil, err
	}
	for _, s := range all {
		if s.Project == project && s.Completed > 0 {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%w in %s yet (hush sessions list shows every project's)", ErrNotFound, project)
}

// Find is the session whose id is id or starts with it.
func Find(dataDir, id string) (*Session, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil, fmt.Errorf("%w: %q is not a session id", ErrNotFound, id)
	}
	s, err := Load(Path(dataDir, id))
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	matches, _ := filepath.Glob(filepath.Join(dataDir, DirName, id+"*.jsonl"))
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("%w with id %s (hush sessions list shows them)", ErrNotFound, id)
	case 1:
		return Load(matches[0])
	}
	return nil, fmt.Errorf("%w: %s matches %d sessions; give more of the id", ErrNotFound, id, len(matches))
}
