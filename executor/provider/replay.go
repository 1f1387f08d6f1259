package provider

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/hushcli/hush/config/userfile"
)

// DefaultReplay is the replay the CLI runs when no provider is configured:
// one bash call that prints what a tool can see (its environment, the
// project's .env and the agent's /proc/$PPID/environ), then a summary.
// examples/leak-check.json is the same file for users to copy. Treat it as
// read-only; it is a variable only because go:embed requires one.
//
//go:embed replays/leak-check.json
var DefaultReplay []byte

// replayFinishedText is the answer once every step has been used.
const replayFinishedText = "(replay finished)"

// replayFile is the on-disk format; see the package comment.
type replayFile struct {
	Model string       `json:"model"`
	Steps []replayStep `json:"steps"`
}

type replayStep struct {
	Text      string           `json:"text"`
	ToolCalls []replayToolCall `json:"tool_calls"`
}

type replayToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type replayProvider struct {
	steps []Response

	mu   sync.Mutex
	next int
}

// NewReplay loads a replay file; see the package comment for the format.
func NewReplay(path string) (Provider, error) {
	data, err := userfile.Read(context.Background(), path, userfile.ReplayLimit)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	return NewReplayBytes(path, data)
}

// NewReplayBytes parses replay data; name identifies it in errors (a path,
// or e.g. "embedded leak-check.json").
func NewReplayBytes(name string, data []byte) (Provider, error) {
	var f replayFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, replayDecodeError(name, data, err)
	}
	after := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		rest := data[after:]
		skip := len(rest) - len(bytes.TrimLeft(rest, " \t\r\n"))
		line, col := position(data, after+int64(skip))
		return nil, fmt.Errorf("replay %s:%d:%d: unexpected data after the JSON document", name, line, col)
	}
	if len(f.Steps) == 0 {
		return nil, fmt.Errorf("replay %s: no steps", name)
	}

	p := &replayProvider{}
	seen := map[string]bool{}
	n := 0
	for i, st := range f.Steps {
		resp := Response{Text: st.Text, StopReason: "end_turn"}
		for j, tc := range st.ToolCalls {
			n++
			where := fmt.Sprintf("replay %s: step %d, tool call %d", name, i+1, j+1)
			if tc.Name == "" {
				return nil, fmt.Errorf("%s: missing \"name\"", where)
			}
			args := argsOrEmpty(tc.Args)
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
				return nil, fmt.Errorf("%s: \"args\" must be a JSON object", where)
			}
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", n)
			}
			if seen[id] {
				return nil, fmt.Errorf("%s: duplicate id %q", where, id)
			}
			seen[id] = true
			var compact bytes.Buffer
			if err := json.Compact(&compact, args); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: tc.Name, Args: compact.Bytes()})
		}
		if len(resp.ToolCalls) > 0 {
			resp.StopReason = "tool_use"
		}
		p.steps = append(p.steps, resp)
	}
	return p, nil
}

// replayDecodeError names the file and, where the decoder knows it, the
// line and column of the problem.
func replayDecodeError(name string, data []byte, err error) error {
	var (
		syntax  *json.SyntaxError
		typeErr *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		// Offset counts the bytes read, the offending one included.
		line, col := position(data, syntax.Offset-1)
		return fmt.Errorf("replay %s:%d:%d: malformed JSON: %w", name, line, col, err)
	case errors.As(err, &typeErr):
		// Offset is just past a literal or the opening bracket of an
		// object or array: either way, inside the offending value.
		line, col := position(data, typeErr.Offset-1)
		return fmt.Errorf("replay %s:%d:%d: field %q: got JSON %s, want %s", name, line, col, typeErr.Field, typeErr.Value, typeErr.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(data, int64(len(data)))
		return fmt.Errorf("replay %s:%d:%d: malformed JSON: unexpected end of input", name, line, col)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no typed error for this, and reports it after
		// decoding the whole document; find the key's first use instead.
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		where := name
		if at := keyOffset(data, field); at >= 0 {
			line, col := position(data, int64(at))
			where = fmt.Sprintf("%s:%d:%d", name, line, col)
		}
		return fmt.Errorf("replay %s: unknown field %s (known: model, steps; in a step: text, tool_calls; in a tool call: id, name, args)", where, field)
	}
	return fmt.Errorf("replay %s: %w", name, err)
}

// keyOffset finds quoted (a JSON string literal) used as an object key.
func keyOffset(data []byte, quoted string) int {
	for from := 0; ; {
		i := bytes.Index(data[from:], []byte(quoted))
		if i < 0 {
			return -1
		}
		at := from + i
		rest := bytes.TrimLeft(data[at+len(quoted):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return at
		}
		from = at + len(quoted)
	}
}

// position converts a byte offset to a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	if offset < 0 {
		offset = 0
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

func (p *replayProvider) Name() string { return Replay }

// Stream ignores req and plays the next step.
func (p *replayProvider) Stream(ctx context.Context, _ Request, onText func(string)) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	p.mu.Lock()
	resp := Response{Text: replayFinishedText, StopReason: "end_turn"}
	if p.next < len(p.steps) {
		resp = cloneResponse(p.steps[p.next])
		p.next++
	}
	p.mu.Unlock()

	for _, chunk := range words(resp.Text) {
		if err := ctx.Err(); err != nil {
			return Response{}, err
		}
		if onText != nil {
			onText(chunk)
		}
	}
	return resp, nil
}

// cloneResponse copies the tool calls so that a caller editing Args cannot
// change a later replay of the same step.
func cloneResponse(r Response) Response {
	out := r
	out.ToolCalls = make([]ToolCall, len(r.ToolCalls))
	for i, tc := range r.ToolCalls {
		tc.Args = append(json.RawMessage(nil), tc.Args...)
		out.ToolCalls[i] = tc
	}
	if len(out.ToolCalls) == 0 {
		out.ToolCalls = nil
	}
	return out
}

// words splits s into chunks that concatenate back to s: each chunk is a
// word followed by the whitespace after it (leading whitespace is its own
// chunk). It imitates a model streaming tokens.
func words(s string) []string {
	var out []string
	start := 0
	inSpace := true
	for i, r := range s {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if !space && inSpace && i > start {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
