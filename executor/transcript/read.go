package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hushcli/hush/config/userfile"
	"github.com/hushcli/hush/executor/provider"
)

// Bounds of reading transcripts.
const (
	// LineLimit is the longest line read (as the audit log's); a longer
	// one is skipped and counted as damaged, never held in memory whole.
	LineLimit = 1 << 20
	// ListHead is how much of a transcript a listing reads: its first
	// prompt and turns are near the start, and a listing of a thousand
	// sessions must not read gigabytes.
	ListHead = 10 << 20
	// FileLimit is the largest transcript resumed.
	FileLimit = 1 << 30
)

// NotRecorded answers, on resume, a tool call whose result was never
// written.
const NotRecorded = "not recorded: hush stopped before the result was saved"

// Unfinished ends, on resume, a turn that has no final answer.
const Unfinished = "(this turn did not finish: hush stopped before its answer was saved)"

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
	// Incomplete counts turns that did not finish (cut by a crash or a
	// failed write, or ended by a model error); they are restored
	// repaired (see the package doc).
	Incomplete int
	// Damaged counts lines that are not entries (a line torn by a crash,
	// one longer than LineLimit).
	Damaged int
	// Cut says a listing read only the first ListHead bytes.
	Cut bool
	Conversation
	torn bool
}

// ErrNotFound: no session matches.
var ErrNotFound = errors.New("no such session")

// open opens a transcript the way hush opens its own files: a regular
// file only, non-blocking (userfile.Open).
func open(path string, limit int64) (*os.File, error) {
	f, err := userfile.Open(path, limit)
	var pe *fs.PathError
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !(errors.As(err, &pe) && pe.Path == path) {
		err = fmt.Errorf("%s: %w", path, err) // userfile's refusals are sentences without the name
	}
	return f, err
}

// Load reads the transcript at path.
func Load(path string) (*Session, error) { return load(path, false) }

func load(path string, head bool) (*Session, error) {
	limit := int64(FileLimit)
	if head {
		limit = 1 << 62 // the head is read, whatever the size
	}
	f, err := open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &Session{Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	var r io.Reader = f
	if head {
		r = io.LimitReader(f, ListHead)
	}
	if err := s.read(r, head); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	st, serr := f.Stat()
	if head && serr == nil && st.Size() > ListHead {
		s.Cut = true
		s.Last = st.ModTime()
	}
	if s.Last.IsZero() && serr == nil { // a transcript from before version 1 has no times
		s.Started, s.Last = st.ModTime(), st.ModTime()
	}
	return s, nil
}

var linesPool = sync.Pool{New: func() any { return &lines{br: bufio.NewReaderSize(nil, 64<<10)} }}

// lines reads lines of at most LineLimit bytes; a longer one is skipped
// as it streams past.
type lines struct {
	br  *bufio.Reader
	buf []byte
}

// next returns the next line (with its newline, if it has one); long says
// it was over LineLimit and skipped. err is io.EOF after the last line.
func (l *lines) next() (line []byte, long bool, err error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		if !long {
			if len(l.buf)+len(chunk) > LineLimit {
				long, l.buf = true, l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if long {
			return nil, true, err
		}
		return l.buf, false, err
	}
}

// entryHead is what a listing decodes of a message line: the fields
// before its text, which is all it needs to count turns.
type entryHead struct {
	Type string    `json:"type"`
	V    int       `json:"v"`
	Time time.Time `json:"time"`
	Turn int       `json:"turn"`
	Role string    `json:"role"`
}

var (
	textKey  = []byte(`,"text":`)
	callsKey = []byte(`"tool_calls":`)
)

// decodeHead decodes a version 1 message line up to its text. Line writes
// the fields in a fixed order and a JSON string holds no bare quote, so the
// first `,"text":` ends the head and `"tool_calls":` anywhere means the
// message has tool calls. ok is false for any other line.
//
// raw is the entry's time as written, not yet parsed, when the fast way
// read it (e.Time is then zero).
func decodeHead(line []byte, e *Entry) (ok bool, raw []byte) {
	if !bytes.HasPrefix(line, messagePrefix) {
		return false, nil
	}
	cut := bytes.Index(line, textKey)
	if cut < 0 {
		cut = bytes.Index(line, []byte(`,"tool_calls":`))
	}
	if cut < 0 {
		return false, nil
	}
	raw, ok = scanHead(line[:cut], e)
	if !ok {
		var h entryHead
		if json.Unmarshal(append(line[:cut:cut], '}'), &h) != nil {
			return false, nil
		}
		*e = Entry{Type: h.Type, V: h.V, Time: h.Time, Turn: h.Turn, Role: h.Role}
	}
	if bytes.Contains(line[cut:], callsKey) {
		e.ToolCalls = []ToolCall{{}}
	}
	return true, raw
}

var messagePrefix = []byte(`{"type":"message","v":1,`)

// scanHead reads the head Line writes for a message,
// {"type":"message","v":1,"time":"…","session_id":"…","turn":N,"role":"…",
// without encoding/json, which took most of a listing's time (a 1,000
// session listing spent 0.40 s of its 1.0 s of CPU decoding heads). It
// reads the time only as far as finding its end; the caller parses the
// times it keeps (rawTime). false: anything else (an escape in a string,
// a field out of order), which decodeHead decodes the slow way.
func scanHead(head []byte, e *Entry) (rawTime []byte, ok bool) {
	p := head[len(messagePrefix):]
	str := func(key string) ([]byte, bool) {
		if !bytes.HasPrefix(p, []byte(key)) {
			return nil, false
		}
		p = p[len(key):]
		end := bytes.IndexByte(p, '"')
		if end < 0 || bytes.IndexByte(p[:end], '\\') >= 0 {
			return nil, false
		}
		v := p[:end]
		p = p[end+1:]
		return v, true
	}
	tm, ok := str(`"time":"`)
	if !ok {
		return nil, false
	}
	if _, ok := str(`,"session_id":"`); !ok {
		return nil, false
	}
	turn := 0
	if bytes.HasPrefix(p, []byte(`,"turn":`)) {
		p = p[len(`,"turn":`):]
		i := 0
		for i < len(p) && p[i] >= '0' && p[i] <= '9' && i < 9 {
			turn = turn*10 + int(p[i]-'0')
			i++
		}
		if i == 0 {
			return nil, false
		}
		p = p[i:]
	}
	var role []byte
	if bytes.HasPrefix(p, []byte(`,"role":"`)) {
		if role, ok = str(`,"role":"`); !ok {
			return nil, false
		}
	}
	if len(p) != 0 || len(tm) == 0 {
		return nil, false
	}
	*e = Entry{Type: TypeMessage, V: 1, Turn: turn, Role: roleName(role)}
	return tm, true
}

// roleName returns the role without allocating for the usual four.
func roleName(b []byte) string {
	for _, r := range []provider.Role{provider.RoleUser, provider.RoleAssistant, provider.RoleTool} {
		if string(b) == string(r) {
			return string(r)
		}
	}
	return string(b)
}

// read reads entries from r. head (a listing) decodes message lines only
// as far as decodeHead does, except the first user message's.
func (s *Session) read(r io.Reader, head bool) error {
	// One reader per file cost a listing of 1,000 sessions 64 MB of
	// buffers to allocate and clear: they are kept for the next file.
	src := linesPool.Get().(*lines)
	src.br.Reset(r)
	defer func() {
		src.br.Reset(nil)
		if cap(src.buf) > 64<<10 {
			src.buf = nil // a long line's buffer is not kept
		}
		linesPool.Put(src)
	}()
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
		last := msgs[len(msgs)-1]
		switch {
		case msgs[0].Role != provider.RoleUser:
			s.Incomplete++ // its prompt's line is lost: nothing to restore it as
		case last.Role == provider.RoleAssistant && len(last.ToolCalls) == 0:
			complete[cur.N] = true
			s.Turns = append(s.Turns, *cur)
		default:
			s.Incomplete++
			cur.Messages = Repair(msgs)
			s.Turns = append(s.Turns, *cur)
		}
		cur = nil
	}
	// lastRaw is the latest entry's time as written, when the fast way
	// read it: parsed once, at the end.
	var lastRaw []byte
	for {
		line, long, err := src.next()
		if long {
			s.Damaged++
			s.torn = false
		} else if len(line) > 0 {
			torn := line[len(line)-1] != '\n'
			var e Entry
			var raw []byte
			decoded := false
			if head && s.FirstPrompt != "" {
				decoded, raw = decodeHead(line, &e)
			}
			if !decoded {
				decoded = json.Unmarshal(line, &e) == nil
			}
			if !decoded {
				// Cut by a crash mid-write (every earlier line is whole), or
				// damaged: skipped, and counted.
				s.Damaged++
				s.torn = torn
			} else {
				if raw != nil {
					lastRaw = append(lastRaw[:0], raw...)
					if s.Started.IsZero() {
						s.Started, _ = time.Parse(time.RFC3339Nano, string(raw))
					}
				} else {
					if s.Started.IsZero() {
						s.Started = e.Time
					}
					if !e.Time.IsZero() {
						s.Last, lastRaw = e.Time, lastRaw[:0]
					}
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
	if len(lastRaw) > 0 {
		if t, err := time.Parse(time.RFC3339Nano, string(lastRaw)); err == nil {
			s.Last = t
		}
	}
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

// Repair makes the messages of one turn that did not finish valid for
// every provider's API: every tool call answered (NotRecorded where no
// result was saved), no result that answers no call, and a final assistant
// message (Unfinished) so the next turn's prompt follows an answer.
func Repair(msgs []provider.Message) []provider.Message {
	out := make([]provider.Message, 0, len(msgs)+2)
	var open []string // calls of the last assistant message not yet answered
	pending := map[string]bool{}
	answer := func() {
		for _, id := range open {
			if pending[id] {
				out = append(out, provider.Message{Role: provider.RoleTool, ToolCallID: id, Text: NotRecorded, IsError: true})
			}
		}
		open, pending = nil, map[string]bool{}
	}
	for _, m := range msgs {
		switch m.Role {
		case provider.RoleTool:
			if !pending[m.ToolCallID] {
				continue // answers no open call
			}
			delete(pending, m.ToolCallID)
			out = append(out, m)
		case provider.RoleAssistant:
			answer()
			out = append(out, m)
			for _, c := range m.ToolCalls {
				open = append(open, c.ID)
				pending[c.ID] = true
			}
		default:
			answer()
			out = append(out, m)
		}
	}
	answer()
	if last := out[len(out)-1]; last.Role != provider.RoleAssistant || len(last.ToolCalls) > 0 {
		out = append(out, provider.Message{Role: provider.RoleAssistant, Text: Unfinished})
	}
	return out
}

// Skipped is an entry of transcripts/ a listing did not read: not a
// regular file, or unreadable.
type Skipped struct {
	Path string
	Err  error
}

func (s Skipped) Error() string {
	if strings.Contains(s.Err.Error(), s.Path) {
		return s.Err.Error()
	}
	return s.Path + ": " + s.Err.Error()
}

// List reads every transcript in dataDir, most recently active first, each
// as far as ListHead. An entry that is not a regular file (a named pipe, a
// link to a device) is skipped without being opened for long; it and any
// transcript that cannot be read are reported in skipped.
func List(dataDir string) (sessions []*Session, skipped []error, err error) {
	entries, err := os.ReadDir(filepath.Join(dataDir, DirName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var paths []string
	for _, de := range entries {
		if strings.HasSuffix(de.Name(), ".jsonl") {
			paths = append(paths, filepath.Join(dataDir, DirName, de.Name()))
		}
	}
	// Read by a few workers: most of a listing's time is system calls
	// (open, read), which overlap.
	loaded := make([]*Session, len(paths))
	errs := make([]error, len(paths))
	workers := min(runtime.GOMAXPROCS(0), 4, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(paths); i = int(next.Add(1) - 1) {
				loaded[i], errs[i] = load(paths[i], true)
			}
		}()
	}
	wg.Wait()
	for i, path := range paths {
		if errs[i] != nil {
			skipped = append(skipped, Skipped{Path: path, Err: errs[i]})
			continue
		}
		sessions = append(sessions, loaded[i])
	}
	sort.SliceStable(sessions, func(i, j int) bool {
		if !sessions[i].Last.Equal(sessions[j].Last) {
			return sessions[i].Last.After(sessions[j].Last)
		}
		return sessions[i].ID > sessions[j].ID
	})
	return sessions, skipped, nil
}

// Latest is the most recently active session of project that has a turn,
// read whole.
func Latest(dataDir, project string) (*Session, error) {
	all, _, err := List(dataDir)
	if err != nil {
		return nil, err
	}
	for _, s := range all {
		if s.Project == project && s.Completed+s.Incomplete > 0 {
			return Load(s.Path)
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
