package ui

import (
	"os"
	"os/exec"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/hushcli/hush/executor/outbuf"
)

// Ctrl-G: the prompt's text in the user's own $VISUAL or $EDITOR, which
// gets the terminal until it exits (Config.Editor builds it through the
// spawn layer); what it saved becomes the prompt.

type editedMsg struct {
	text string
	err  error
}

// openEditor writes the prompt to a 0600 file, runs the editor on it in
// the foreground and reads it back.
func (m *model) openEditor() (tea.Model, tea.Cmd) {
	f, err := os.CreateTemp("", "hush-prompt-*.md")
	if err != nil {
		m.notice = "Ctrl-G: " + err.Error()
		return m, nil
	}
	path := f.Name()
	_, werr := f.WriteString(m.ta.Value())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	var cmd *exec.Cmd
	if werr == nil {
		cmd, werr = m.c.cfg.Editor(path)
	}
	if werr != nil {
		os.Remove(path)
		m.notice = "Ctrl-G: " + outbuf.Sanitize(werr.Error())
		return m, nil
	}
	return m, tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editedMsg{err: err}
		}
		b, err := os.ReadFile(path)
		return editedMsg{text: string(b), err: err}
	})
}

func (m *model) edited(msg editedMsg) (tea.Model, tea.Cmd) {
	if msg.err != nil {
		m.notice = "the editor failed: " + outbuf.Sanitize(msg.err.Error()) + " (the prompt is unchanged)"
		return m, nil
	}
	m.notice = ""
	m.ta.SetValue(outbuf.Sanitize(strings.TrimRight(msg.text, "\n")))
	m.fit()
	return m, nil
}
