// Package wizard holds hush's interactive forms (charmbracelet/huh): the
// permission prompt the gate shows when no rule decides, and the first-run
// setup, with what setup needs besides its forms — CheckKey (the one request
// that checks a key); config.UpdateConfig writes what setup decided.
// Forms read and write only the streams they are given; nothing here writes
// the process environment, stores a secret, or reads one for a tool.
package wizard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/hushcli/hush/executor"
)

// Prompter asks the person at the terminal about a gate request.
type Prompter struct {
	In  io.Reader
	Out io.Writer
	// Accessible uses huh's line-based mode (screen readers, dumb terminals).
	Accessible bool
}

// Confirm implements executor.Prompter. It prints the request whole — the
// diff of a file change, the command verbatim with its directory and the
// secrets it would receive — and then asks for one key: y allow once, s
// allow for this session (the rule it records is in the label), d (file
// tools) every file in the directory, n deny. Esc and Ctrl-C deny.
func (p *Prompter) Confirm(ctx context.Context, req executor.Request) (executor.Choice, error) {
	a := NewApproval(req)
	if req.Diff != "" {
		// The whole diff, before the form: the terminal's scrollback holds
		// a long one, and nothing of what will be written is left out.
		WriteDiff(p.Out, req.Diff)
	}
	if _, err := io.WriteString(p.Out, a.Header()); err != nil {
		return executor.ChoiceDeny, err
	}
	if p.Accessible {
		return p.confirmLine(a)
	}
	prog := tea.NewProgram(NewChoiceModel(a), tea.WithInput(p.In), tea.WithOutput(p.Out), tea.WithContext(ctx))
	m, err := prog.Run()
	if err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return executor.ChoiceDeny, ctx.Err()
		}
		return executor.ChoiceDeny, err
	}
	return m.(ChoiceModel).Choice(), nil
}

// confirmLine asks on one line, for screen readers and dumb terminals: the
// answer is a key and Enter; anything else asks again, end of input denies.
func (p *Prompter) confirmLine(a Approval) (executor.Choice, error) {
	r := bufio.NewReader(p.In)
	for {
		fmt.Fprintf(p.Out, "  %s\n  answer %s: ", a.ChoiceLine(), strings.TrimPrefix(a.Hint(), "press "))
		line, err := r.ReadString('\n')
		if o, ok := a.Choose(strings.TrimSpace(line)); ok {
			return o.Choice, nil
		}
		if err != nil {
			return executor.ChoiceDeny, nil
		}
	}
}

// WriteDiff writes a unified diff for a person: additions green, removals
// red, hunk headers cyan, every line cleaned of terminal escapes (the
// diff holds file content, which may carry them).
func WriteDiff(w io.Writer, diff string) {
	var b strings.Builder
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	fmt.Fprintf(&b, "\n%d-line diff; everything below is what will be written:\n", len(lines))
	for _, l := range lines {
		clean := strings.Map(func(r rune) rune {
			if r == '\t' {
				return r
			}
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				return '?'
			}
			return r
		}, l)
		color := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			color = "\x1b[1m"
		case strings.HasPrefix(l, "+"):
			color = "\x1b[32m"
		case strings.HasPrefix(l, "-"):
			color = "\x1b[31m"
		case strings.HasPrefix(l, "@@"):
			color = "\x1b[36m"
		}
		if color != "" {
			b.WriteString(color + clean + "\x1b[0m\n")
		} else {
			b.WriteString(clean + "\n")
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// sanitizeLine keeps a model- or tool-written string to one line of plain
// text for a form's label: newlines and tabs become spaces, other control
// bytes are dropped.
func sanitizeLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}
