package ui

import (
	"encoding/json"
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
)

// completeBlocks returns the length of the longest prefix of s that ends on
// a Markdown block boundary: after a blank line, a heading line or a code
// fence's closing line, never inside a fence. What follows it is still
// being streamed and may change meaning (a table's next row, a list item).
func completeBlocks(s string) int {
	cut, pos := 0, 0
	fence := ""
	for pos < len(s) {
		nl := strings.IndexByte(s[pos:], '\n')
		if nl < 0 {
			break // an unfinished line
		}
		line := strings.TrimSpace(s[pos : pos+nl])
		next := pos + nl + 1
		switch {
		case fence != "":
			if strings.HasPrefix(line, fence) && strings.Trim(line, fence[:1]) == "" {
				fence = ""
				cut = next
			}
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			fence = line[:3]
		case line == "" || strings.HasPrefix(line, "#"):
			cut = next
		}
		pos = next
	}
	return cut
}

// markdown renders Markdown for the terminal with glamour. It is built on
// first use (style parsing costs a few milliseconds) and rebuilt when the
// width changes. Not safe for concurrent use: each goroutine that renders
// keeps its own.
type markdown struct {
	color bool
	width int
	r     *glamour.TermRenderer
}

// styleConfig is glamour's dark style with headings shown by colour and
// weight rather than by their "##" markers, and no left margin, so the
// text lines up with the tool call lines.
//
// Without colour (NO_COLOR) it is the same style with every colour taken
// out: headings, bold and code blocks keep their weight and layout, which
// NO_COLOR allows, and no colour sequence is sent.
func styleConfig(color bool) ansi.StyleConfig {
	s := styles.DarkStyleConfig
	if !color {
		s = withoutColor(s)
	}
	s.Document.Margin = uintPtr(0)
	for _, h := range []*ansi.StyleBlock{&s.H2, &s.H3, &s.H4, &s.H5, &s.H6} {
		h.Prefix = ""
	}
	s.H1.Prefix, s.H1.Suffix = " ", " "
	return s
}

func uintPtr(u uint) *uint { return &u }

// withoutColor drops every color and background_color of a style, and
// the code highlighting theme.
func withoutColor(s ansi.StyleConfig) ansi.StyleConfig {
	b, err := json.Marshal(s)
	if err != nil {
		return styles.NoTTYStyleConfig
	}
	var tree any
	if json.Unmarshal(b, &tree) != nil {
		return styles.NoTTYStyleConfig
	}
	var strip func(v any)
	strip = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			delete(t, "color")
			delete(t, "background_color")
			delete(t, "chroma")
			for _, c := range t {
				strip(c)
			}
		case []any:
			for _, c := range t {
				strip(c)
			}
		}
	}
	strip(tree)
	b, _ = json.Marshal(tree)
	var out ansi.StyleConfig
	if json.Unmarshal(b, &out) != nil {
		return styles.NoTTYStyleConfig
	}
	return out
}

// render returns md rendered, without the blank lines glamour puts around
// a document. On a renderer error the text is shown as it came.
func (m *markdown) render(md string, width int) string {
	if width <= 0 {
		width = 80
	}
	if m.r == nil || m.width != width {
		r, err := glamour.NewTermRenderer(glamour.WithStyles(styleConfig(m.color)), glamour.WithWordWrap(width), glamour.WithTableWrap(true))
		if err != nil {
			return md
		}
		m.r, m.width = r, width
	}
	// A tab is drawn 8 columns wide by the terminal but counted as one by
	// the renderer, which then pads the line past the width.
	out, err := m.r.Render(strings.ReplaceAll(md, "\t", "    "))
	if err != nil {
		return md
	}
	return trimBlankLines(out)
}

// trimBlankLines removes leading and trailing lines that hold only spaces
// (glamour pads each line to the wrap width) and the spaces ending each line.
func trimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = trimRightSpace(l)
	}
	for len(lines) > 0 && visibleEmpty(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && visibleEmpty(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// trimRightSpace drops the spaces ending a line, also where they are
// interleaved with SGR sequences (glamour writes "text\x1b[0m\x1b[38;5;252m   ");
// a line that had sequences ends with a reset.
func trimRightSpace(l string) string {
	if !strings.Contains(l, "\x1b") {
		return strings.TrimRight(l, " ")
	}
	end := 0 // after the last visible non-space byte
	for i := 0; i < len(l); i++ {
		if l[i] == 0x1b && i+1 < len(l) && l[i+1] == '[' {
			j := i + 2
			for j < len(l) && (l[j] < 0x40 || l[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		if l[i] != ' ' {
			end = i + 1
		}
	}
	return l[:end] + "\x1b[0m"
}

func visibleEmpty(l string) bool {
	return strings.TrimSpace(stripANSI(l)) == ""
}

// stripANSI removes CSI sequences (what glamour emits).
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
