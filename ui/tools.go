package ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// toolPreview bounds the output shown for one tool call to whole lines.
type toolPreview struct {
	max, lines int
	cut        bool
	partial    strings.Builder
	// after counts the lines that came after the cut; open says the last
	// of them has not ended.
	after int
	open  bool
}

// hidden is how many lines of output the preview did not show.
func (p *toolPreview) hidden() int {
	n := p.after
	if p.open {
		n++
	}
	return n
}

// add takes a chunk of (sanitized, redacted) output and returns the
// complete lines to show.
func (p *toolPreview) add(chunk string) []string {
	var out []string
	if p.cut {
		p.countAfter(chunk)
		return nil
	}
	for chunk != "" && !p.cut {
		i := strings.IndexByte(chunk, '\n')
		if i < 0 {
			p.partial.WriteString(chunk)
			if p.partial.Len() > 4096 { // one endless line
				out = append(out, p.take())
			}
			return out
		}
		p.partial.WriteString(chunk[:i])
		chunk = chunk[i+1:]
		out = append(out, p.take())
	}
	if p.cut {
		p.countAfter(chunk)
	}
	return out
}

func (p *toolPreview) countAfter(chunk string) {
	if chunk == "" {
		return
	}
	p.after += strings.Count(chunk, "\n")
	p.open = !strings.HasSuffix(chunk, "\n")
}

// lastOutput keeps the output of the last tool call, bounded, so that
// Ctrl-O can show what the preview cut.
type lastOutput struct {
	b     strings.Builder
	full  bool
	shown int // lines the preview showed
}

// maxLastOutput bounds what Ctrl-O can show: the model sees at most 32 KiB.
const maxLastOutput = 1 << 20

func (l *lastOutput) add(chunk []byte) {
	if l.full {
		return
	}
	if room := maxLastOutput - l.b.Len(); len(chunk) > room {
		chunk = chunk[:room]
		l.full = true
	}
	l.b.Write(chunk)
}

// rest is the lines the preview did not show.
func (l *lastOutput) rest() []string {
	s := strings.TrimRight(l.b.String(), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if l.shown >= len(lines) {
		return nil
	}
	return lines[l.shown:]
}

func (p *toolPreview) take() string {
	s := p.partial.String()
	p.partial.Reset()
	p.lines++
	if p.lines >= p.max {
		p.cut = true
	}
	return s
}

// rest returns an unfinished last line, if any.
func (p *toolPreview) rest() (string, bool) {
	if p.cut || p.partial.Len() == 0 {
		return "", false
	}
	return p.take(), true
}

// ResultSummary picks the line shown after a tool's output: the whole
// result when nothing was shown, else its last line when that is a status
// ("[exit code 2]"), an error or a denial.
func ResultSummary(result string, shown int) (string, bool) {
	if strings.HasPrefix(result, "denied:") {
		return strings.TrimSpace(result), true
	}
	last := result
	if i := strings.LastIndexByte(strings.TrimRight(result, "\n"), '\n'); i >= 0 {
		last = result[i+1:]
	}
	last = strings.TrimSpace(last)
	if shown == 0 || strings.HasPrefix(last, "[") || strings.HasPrefix(last, "error:") || strings.HasPrefix(last, "cancelled") {
		return last, true
	}
	return "", false
}

// SummarizeArgs renders tool arguments on one line, shortened: a script
// first, then the other arguments.
func SummarizeArgs(args json.RawMessage, max int) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return shorten(string(args), max)
	}
	var script string
	if raw, ok := m["script"]; ok && json.Unmarshal(raw, &script) == nil {
		delete(m, "script")
	}
	rest := flatArgs(m)
	switch {
	case script == "":
		return shorten(rest, max)
	case rest == "":
		return shorten(strings.ReplaceAll(script, "\n", "; "), max)
	}
	return shorten(strings.ReplaceAll(script, "\n", "; "), max) + "  " + shorten(rest, max/2)
}

// flatArgs renders arguments as "key: value · key: value", sorted by key:
// a string as it is, an object as k=v pairs, a list comma-separated.
func flatArgs(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+": "+flatValue(m[k]))
	}
	return strings.Join(parts, " · ")
}

func flatValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.ReplaceAll(s, "\n", "; ")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+"="+flatValue(obj[k]))
		}
		return strings.Join(parts, ", ")
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		parts := make([]string, 0, len(list))
		for _, v := range list {
			parts = append(parts, flatValue(v))
		}
		return strings.Join(parts, ", ")
	}
	return string(raw)
}

func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	// Cut on a rune boundary.
	for max > 0 && max < len(s) && s[max]&0xc0 == 0x80 {
		max--
	}
	return s[:max] + "…"
}

// ToolTitle is the one line a tool call is shown as, for people: the file
// tools by what they did (`Read wc.py (1–120)`, `Edit wc.py +1 −1`,
// `Grep "count_words" · 3 matches`, `Glob **/*.py · 12 files`), other
// tools by their name and arguments, never as raw JSON. result, once the
// call has ended, adds what the file tools' status line says ("" before).
// Nothing here is sanitized: the caller does that.
func ToolTitle(name string, args json.RawMessage, result string, max int) string {
	var a struct {
		Path    string                      `json:"path"`
		Pattern string                      `json:"pattern"`
		Offset  int                         `json:"offset"`
		Limit   int                         `json:"limit"`
		Old     *string                     `json:"old"`
		New     *string                     `json:"new"`
		Edits   []struct{ Old, New string } `json:"edits"`
		Content *string                     `json:"content"`
	}
	fileTool := name == "read" || name == "edit" || name == "write" || name == "grep" || name == "glob"
	if !fileTool || json.Unmarshal(args, &a) != nil {
		return name + " " + SummarizeArgs(args, max)
	}
	status := resultStatus(result)
	var n1, n2 int
	switch name {
	case "read":
		t := "Read " + a.Path
		if _, err := fmt.Sscanf(status, "lines %d–%d of", &n1, &n2); err == nil {
			return t + fmt.Sprintf(" (%d–%d)", n1, n2)
		}
		if a.Offset > 0 || a.Limit > 0 {
			first := max1(a.Offset)
			if a.Limit > 0 {
				return t + fmt.Sprintf(" (%d–%d)", first, first+a.Limit-1)
			}
			return t + fmt.Sprintf(" (from %d)", first)
		}
		return t
	case "edit":
		t := "Edit " + a.Path
		if i := strings.LastIndex(status, "(+"); i >= 0 {
			if _, err := fmt.Sscanf(status[i:], "(+%d −%d", &n1, &n2); err == nil {
				return t + fmt.Sprintf(" +%d −%d", n1, n2)
			}
		}
		if a.Old != nil && a.New != nil {
			return t + fmt.Sprintf(" +%d −%d", lineCount(*a.New), lineCount(*a.Old))
		}
		if len(a.Edits) > 0 {
			return t + fmt.Sprintf(" (%d edits)", len(a.Edits))
		}
		return t
	case "write":
		t := "Write " + a.Path
		if a.Content != nil {
			return t + fmt.Sprintf(" (%d lines)", lineCount(*a.Content))
		}
		return t
	case "grep":
		t := "Grep " + strconv.Quote(a.Pattern)
		if a.Path != "" {
			t += " in " + a.Path
		}
		switch {
		case strings.HasPrefix(status, "no match"):
			return t + " · no matches"
		case status != "":
			if _, err := fmt.Sscanf(status, "%d matching line", &n1); err == nil {
				return t + " · " + plural(n1, "match", "matches")
			}
		}
		return t
	case "glob":
		t := "Glob " + a.Pattern
		if a.Path != "" {
			t += " in " + a.Path
		}
		if _, err := fmt.Sscanf(status, "%d files match", &n1); err == nil {
			return t + " · " + plural(n1, "file", "files")
		}
		if strings.HasPrefix(status, "no file") {
			return t + " · no files"
		}
		return t
	}
	return name + " " + SummarizeArgs(args, max)
}

func max1(n int) int { return max(n, 1) }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// lineCount counts the lines of s, a last line without a newline included.
func lineCount(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// resultStatus is the status line a tool appended to its result
// ("[lines 1–120 of wc.py (3.2 KiB)]"), without its brackets; "" when the
// result has none.
func resultStatus(result string) string {
	r := strings.TrimRight(result, "\n")
	last := r
	if i := strings.LastIndexByte(r, '\n'); i >= 0 {
		last = r[i+1:]
	}
	if strings.HasPrefix(last, "[") && strings.HasSuffix(last, "]") {
		return last[1 : len(last)-1]
	}
	return ""
}
