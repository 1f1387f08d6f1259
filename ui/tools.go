package ui

import (
	"encoding/json"
	"strings"
)

// toolPreview bounds the output shown for one tool call to whole lines.
type toolPreview struct {
	max, lines int
	cut        bool
	partial    strings.Builder
}

// add takes a chunk of (sanitized, redacted) output and returns the
// complete lines to show.
func (p *toolPreview) add(chunk string) []string {
	var out []string
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
	return out
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
	rest := ""
	if len(m) > 0 {
		b, _ := json.Marshal(m)
		rest = string(b)
	}
	switch {
	case script == "":
		return shorten(rest, max)
	case rest == "":
		return shorten(strings.ReplaceAll(script, "\n", "; "), max)
	}
	return shorten(strings.ReplaceAll(script, "\n", "; "), max) + "  " + shorten(rest, max/2)
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
