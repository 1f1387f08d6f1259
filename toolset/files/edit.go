package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hushcli/hush/executor"
)

// EditName is the edit tool's name and gate subject.
const EditName = "edit"

// Edit is the edit tool: exact-string replacements in one file, all
// applied or none. WriteCheck refuses what it must not change beyond
// Check (Tools).
type Edit struct{ Check, WriteCheck Check }

// EditParams are edit's arguments; the tags are its JSON schema. Either
// old/new (one replacement) or edits (several, applied in order).
type EditParams struct {
	Path       string        `json:"path"`
	Old        *string       `json:"old,omitempty"`
	New        *string       `json:"new,omitempty"`
	ReplaceAll bool          `json:"replace_all,omitempty"`
	Edits      []Replacement `json:"edits,omitempty"`
}

// Replacement is one exact-string replacement.
type Replacement struct {
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

func (Edit) Name() string { return EditName }

func (Edit) Description() string {
	return "Replace exact text in a file: `old` must appear exactly once (include enough surrounding lines to make it unique) " +
		"unless `replace_all` is true; it is replaced by `new`. Several replacements to one file go in `edits` and are applied " +
		"in order, all or none. Match the file's text exactly, indentation included (read it first; the line-number prefix " +
		"read adds is not part of the file). Prefer edit to sed or here-docs in bash: the user approves it by reading its diff."
}

func (Edit) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "file to edit, relative to the project directory or absolute"},
    "old": {"type": "string", "description": "exact text to replace"},
    "new": {"type": "string", "description": "replacement text"},
    "replace_all": {"type": "boolean", "description": "replace every occurrence of old (default: old must be unique)"},
    "edits": {"type": "array", "description": "several replacements, applied in order, all or none (instead of old/new)",
      "items": {"type": "object", "properties": {
        "old": {"type": "string"}, "new": {"type": "string"}, "replace_all": {"type": "boolean"}},
        "required": ["old", "new"], "additionalProperties": false}}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

func (p EditParams) replacements() ([]Replacement, error) {
	single := p.Old != nil || p.New != nil
	switch {
	case single && len(p.Edits) > 0:
		return nil, errors.New("bad arguments: give either old/new or edits, not both")
	case single && (p.Old == nil || p.New == nil):
		return nil, errors.New("bad arguments: old and new go together")
	case single:
		return []Replacement{{Old: *p.Old, New: *p.New, ReplaceAll: p.ReplaceAll}}, nil
	case len(p.Edits) == 0:
		return nil, errors.New("bad arguments: nothing to replace: give old and new, or edits")
	case p.ReplaceAll:
		return nil, errors.New("bad arguments: replace_all goes with old/new; inside edits, set it on each replacement")
	}
	return p.Edits, nil
}

// Preview implements executor.Previewer: every replacement is applied in
// memory, and any that cannot be refuses the whole call.
func (e Edit) Preview(_ context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Preview, error) {
	var p EditParams
	if err := executor.DecodeArgs(raw, &p); err != nil {
		return executor.Preview{}, err
	}
	reps, err := p.replacements()
	if err != nil {
		return executor.Preview{}, err
	}
	t, err := resolve(e.Check, tc.Dir, p.Path)
	if err != nil {
		return executor.Preview{}, err
	}
	if err := checkWrite(e.WriteCheck, t); err != nil {
		return executor.Preview{}, err
	}
	name := display(tc.Dir, t.Shown)
	if !t.Exists {
		return executor.Preview{}, fmt.Errorf("%s does not exist; use write to create it", name)
	}
	c, err := loadForChange(t, name)
	if err != nil {
		return executor.Preview{}, err
	}
	text, err := replaceAll(string(c.old), reps, name)
	if err != nil {
		return executor.Preview{}, err
	}
	if len(text) > MaxWriteBytes {
		return executor.Preview{}, fmt.Errorf("the edited %s would be %s; edit handles files up to %s", name, size(int64(len(text))), size(MaxWriteBytes))
	}
	c.new = []byte(text)
	if err := c.checkPlaceholders(name); err != nil {
		return executor.Preview{}, err
	}
	return c.preview("edit", name, t), nil
}

// replaceAll applies reps in order to text.
func replaceAll(text string, reps []Replacement, name string) (string, error) {
	for i, r := range reps {
		which := ""
		if len(reps) > 1 {
			which = fmt.Sprintf("edit %d of %d: ", i+1, len(reps))
		}
		if r.Old == "" {
			return "", fmt.Errorf("%sold is empty; to create a file use write, to add text include the lines around it in old", which)
		}
		if r.Old == r.New {
			return "", fmt.Errorf("%sold and new are the same; nothing would change", which)
		}
		n := strings.Count(text, r.Old)
		switch {
		case n == 0:
			hint := ""
			if strings.Contains(strings.ToLower(text), strings.ToLower(r.Old)) {
				hint = " (it does appear with different upper/lower case)"
			} else if strings.Contains(collapse(text), collapse(r.Old)) {
				hint = " (it does appear with different whitespace or indentation)"
			}
			if i > 0 {
				hint += " after the edits before it"
			}
			return "", fmt.Errorf("%sold text not found in %s%s; nothing was changed", which, name, hint)
		case n > 1 && !r.ReplaceAll:
			return "", fmt.Errorf("%sold text appears %d times in %s (lines %s); add surrounding lines to make it unique, or set replace_all; nothing was changed",
				which, n, name, lineNumbers(text, r.Old, 5))
		}
		if r.ReplaceAll {
			text = strings.ReplaceAll(text, r.Old, r.New)
		} else {
			text = strings.Replace(text, r.Old, r.New, 1)
		}
	}
	return text, nil
}

// collapse removes all whitespace, to tell a near miss.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), "")
}

// lineNumbers lists the lines where sub starts in text, at most max.
func lineNumbers(text, sub string, max int) string {
	var nums []string
	off := 0
	for len(nums) < max {
		i := strings.Index(text[off:], sub)
		if i < 0 {
			break
		}
		nums = append(nums, fmt.Sprint(1+strings.Count(text[:off+i], "\n")))
		off += i + len(sub)
	}
	s := strings.Join(nums, ", ")
	if strings.Count(text[off:], sub) > 0 {
		s += ", …"
	}
	return s
}

// Run implements executor.Tool: it applies the approved change to the file
// as it was when the diff was shown, or fails.
func (e Edit) Run(_ context.Context, tc *executor.ToolContext, _ json.RawMessage) (executor.Result, error) {
	c, err := approved(tc)
	if err != nil {
		return executor.Result{}, err
	}
	name := display(tc.Dir, c.path)
	if err := c.apply(name); err != nil {
		return executor.Result{}, err
	}
	added, removed := countDiff(tc.Preview.Diff)
	return executor.Result{Status: fmt.Sprintf("edited %s (+%d −%d lines)", name, added, removed)}, nil
}
