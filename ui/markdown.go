package ui

import (
	"github.com/charmbracelet/x/ansi"
	"strings"
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
			if closesFence(line, fence) {
				fence = ""
				cut = next
			}
		case opensFence(line):
			fence = line[:3]
		case line == "" || strings.HasPrefix(line, "#"):
			cut = next
		}
		pos = next
	}
	return cut
}

// opensFence reports whether a trimmed line opens a code fence; its first
// three bytes are then the fence.
func opensFence(line string) bool {
	return strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~")
}

// closesFence reports whether a trimmed line closes the fence opened by
// fence (its first three bytes).
func closesFence(line, fence string) bool {
	return strings.HasPrefix(line, fence[:3]) && strings.Trim(line, fence[:1]) == ""
}

// markdown renders Markdown for the terminal (renderMarkdown). It keeps
// no state beyond its settings; each goroutine that renders has its own.
type markdown struct {
	color bool
}

// render returns md rendered for a terminal width columns wide, without
// blank lines around it.
func (m *markdown) render(md string, width int) string {
	if width <= 0 {
		width = 80
	}
	// A tab is drawn 8 columns wide by the terminal but counted as one by
	// the wrapping, which would then overflow the line.
	return trimBlankLines(renderMarkdown(strings.ReplaceAll(md, "\t", "    "), width, m.color))
}

// trimBlankLines removes leading and trailing lines that hold only spaces
// and the spaces ending each line.
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
// interleaved with SGR sequences ("text\x1b[0m\x1b[38;5;252m   ");
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

// stripANSI removes the renderer's escape sequences (x/ansi's parser).
func stripANSI(s string) string { return ansi.Strip(s) }
