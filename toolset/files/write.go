package files

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hushcli/hush/executor"
)

// WriteName is the write tool's name and gate subject.
const WriteName = "write"

// Write is the write tool: a whole file, created or replaced. WriteCheck
// refuses what it must not change beyond Check (Tools).
type Write struct{ Check, WriteCheck Check }

// WriteParams are write's arguments; the tags are its JSON schema.
type WriteParams struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (Write) Name() string { return WriteName }

func (Write) Description() string {
	return "Create a file or replace its whole content. Prefer edit for changing part of an existing file, " +
		"and either to shell redirections or here-docs in bash: the user approves a write by reading its diff. " +
		"Parent directories are created. Paths outside the project directory are refused unless a rule allows them; " +
		"hush's own files, credential stores and .env files are masked."
}

func (Write) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "file to write, relative to the project directory or absolute"},
    "content": {"type": "string", "description": "the file's complete new content"}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`)
}

// Preview implements executor.Previewer: the diff of exactly what will be
// written.
func (w Write) Preview(_ context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Preview, error) {
	var p WriteParams
	if err := executor.DecodeArgs(raw, &p); err != nil {
		return executor.Preview{}, err
	}
	if len(p.Content) > MaxWriteBytes {
		return executor.Preview{}, fmt.Errorf("content is %s; write handles files up to %s", size(int64(len(p.Content))), size(MaxWriteBytes))
	}
	t, err := resolve(w.Check, tc.Dir, p.Path)
	if err != nil {
		return executor.Preview{}, err
	}
	if err := checkWrite(w.WriteCheck, t); err != nil {
		return executor.Preview{}, err
	}
	name := display(tc.Dir, t.Shown)
	c, err := loadForChange(t, name)
	if err != nil {
		return executor.Preview{}, err
	}
	c.new = []byte(p.Content)
	if err := c.checkPlaceholders(name); err != nil {
		return executor.Preview{}, err
	}
	return c.preview("write", name, t), nil
}

// Run implements executor.Tool: it writes what was approved.
func (w Write) Run(_ context.Context, tc *executor.ToolContext, _ json.RawMessage) (executor.Result, error) {
	c, err := approved(tc)
	if err != nil {
		return executor.Result{}, err
	}
	name := display(tc.Dir, c.path)
	if err := c.apply(name); err != nil {
		return executor.Result{}, err
	}
	verb := "wrote"
	if !c.existed {
		verb = "created"
	}
	return executor.Result{Status: fmt.Sprintf("%s %s (%s, %d lines)", verb, name, size(int64(len(c.new))), lineCount(c.new))}, nil
}

func lineCount(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
