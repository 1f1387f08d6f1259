package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/sahilm/fuzzy"
)

// @path: Tab completes a project path (fuzzy, over what the file tools'
// walk lists: .gitignore honoured, masked paths left out); on send, each
// @path that names a project file is attached to the prompt, read through
// the file tools' checks (Config.Attach).

// filesMsg carries the project's file list, loaded off the event loop.
type filesMsg struct {
	files []string
	err   error
}

// atToken returns the @word the editor's text ends with ("" when none).
func atToken(text string) string {
	i := strings.LastIndexAny(text, " \t\n")
	tok := text[i+1:]
	if strings.HasPrefix(tok, "@") {
		return tok
	}
	return ""
}

// completeAt completes the @word at the end of the editor.
func (m *model) completeAt() (tea.Model, tea.Cmd) {
	if m.files == nil {
		if m.filesLoading {
			return m, nil
		}
		m.filesLoading = true
		list := m.c.cfg.Files
		return m, func() tea.Msg {
			files, err := list(context.Background())
			if files == nil && err == nil {
				files = []string{}
			}
			return filesMsg{files, err}
		}
	}
	text := m.ta.Value()
	tok := atToken(text)
	query := strings.TrimPrefix(tok, "@")
	matches := fuzzy.Find(query, m.files)
	switch {
	case query == "":
		return m, nil
	case len(matches) == 0:
		return m, tea.Println(m.c.st.dim.Render("no project file matches @" + outbuf.Sanitize(query)))
	}
	best := matches[0].Str
	m.ta.SetValue(strings.TrimSuffix(text, tok) + "@" + best + " ")
	m.fit()
	if len(matches) == 1 {
		return m, nil
	}
	var others []string
	for _, mt := range matches[1:min(len(matches), 9)] {
		others = append(others, "@"+outbuf.Sanitize(mt.Str))
	}
	more := ""
	if len(matches) > 9 {
		more = fmt.Sprintf("  (+%d more)", len(matches)-9)
	}
	return m, tea.Println(m.c.st.dim.Render("also: " + strings.Join(others, "  ") + more))
}

// attachments reads the files a prompt names with @path and returns the
// prompt with them appended, and one note per @path that was refused. A
// word that names no file (@someone) is left as it is, silently.
func (c *Chat) attachments(prompt string) (string, []string) {
	if c.cfg.Attach == nil || !strings.Contains(prompt, "@") {
		return prompt, nil
	}
	var b strings.Builder
	var notes []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(prompt) {
		p, ok := strings.CutPrefix(w, "@")
		p = strings.TrimRight(p, ".,;:!?)")
		if !ok || p == "" || seen[p] {
			continue
		}
		seen[p] = true
		text, err := c.cfg.Attach(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			notes = append(notes, "@"+p+" not attached: "+err.Error())
			continue
		}
		fmt.Fprintf(&b, "\n\n<file path=%q>\n%s", p, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("</file>")
		notes = append(notes, fmt.Sprintf("attached @%s (%d lines)", p, lineCount(text)))
	}
	return prompt + b.String(), notes
}
