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
	"os"
	"strings"

	"github.com/hushcli/hush/executor/outbuf"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/hushcli/hush/executor"
	"golang.org/x/term"
)

// Prompter asks the person at the terminal about a gate request.
type Prompter struct {
	In  io.Reader
	Out io.Writer
	// Accessible uses huh's line-based mode (screen readers, dumb terminals).
	Accessible bool
	// NoColor prints no colour and no reverse video (NO_COLOR, --plain).
	NoColor bool
}

// Confirm implements executor.Prompter. It prints the request whole — the
// diff of a file change (in a pager inside the prompt when it is longer
// than the screen), the command verbatim with its directory and the
// secrets it would receive — and then asks for one key: y allow once, s
// allow for this session (the rule it records is in the label), d (file
// tools) every file in the directory, p (a command) always in this
// project, n deny, t deny with a reason for the model. Esc and Ctrl-C
// deny and end the turn.
func (p *Prompter) Confirm(ctx context.Context, req executor.Request) (executor.Answer, error) {
	a := NewApproval(req)
	a.NoColor = p.NoColor
	if !p.Accessible {
		defer keysToForm(p.In)()
	}
	rows, cols := terminalSize(p.Out, p.In)
	a.Width = cols
	m := NewChoiceModel(a).WithWidth(cols)
	header := a.Header()
	switch {
	case req.Diff == "":
	case !p.Accessible && rows > 0 && len(diffLines(req.Diff))+strings.Count(header, "\n")+len(a.Options)+3 > rows:
		// Longer than the screen: the diff is shown in a pager inside
		// the prompt, whole, a page at a time.
		m = m.WithDiffPager(req.Diff, rows, cols)
		fmt.Fprintf(p.Out, "\n%d-line diff of what will be written, longer than the screen: page through it below.\n", len(diffLines(req.Diff)))
	default:
		// The whole diff, before the form.
		writeDiff(p.Out, req.Diff, !p.NoColor)
	}
	if _, err := io.WriteString(p.Out, header); err != nil {
		return executor.Answer{}, err
	}
	if p.Accessible {
		return p.confirmLine(a)
	}
	prog := tea.NewProgram(m, tea.WithInput(p.In), tea.WithOutput(p.Out), tea.WithContext(ctx))
	res, err := prog.Run()
	if err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return executor.Answer{}, ctx.Err()
		}
		return executor.Answer{}, err
	}
	return res.(ChoiceModel).Answer(), nil
}

// confirmLine asks on one line, for screen readers and dumb terminals: the
// answer is a key and Enter; anything else asks again, end of input denies.
func (p *Prompter) confirmLine(a Approval) (executor.Answer, error) {
	r := bufio.NewReader(p.In)
	for {
		fmt.Fprintf(p.Out, "  %s\n  answer %s: ", a.ChoiceLine(), strings.TrimPrefix(a.Hint(), "press "))
		line, err := r.ReadString('\n')
		if o, ok := a.Choose(strings.TrimSpace(line)); ok {
			if o.Choice == executor.ChoiceDenyReason {
				fmt.Fprint(p.Out, "  why not? one line for the model: ")
				reason, _ := r.ReadString('\n')
				return executor.Answer{Choice: o.Choice, Reason: strings.TrimSpace(reason)}, nil
			}
			return executor.Answer{Choice: o.Choice}, nil
		}
		if err != nil {
			// End of input: nobody will answer, the turn ends.
			return executor.Answer{Choice: executor.ChoiceStop}, nil
		}
	}
}

// writeDiff writes a unified diff for a person: additions green (with
// color), removals red, hunk headers cyan, every line cleaned of terminal
// escapes (the diff holds file content, which may carry them).
func writeDiff(w io.Writer, diff string, color bool) {
	var b strings.Builder
	lines := diffLines(diff)
	fmt.Fprintf(&b, "\n%d-line diff; everything below is what will be written:\n", len(lines))
	for _, l := range lines {
		if color {
			b.WriteString(colorDiffLine(l, cleanDiffLine(l)) + "\n")
		} else {
			b.WriteString(cleanDiffLine(l) + "\n")
		}
	}
	_, _ = io.WriteString(w, b.String())
}

func diffLines(diff string) []string {
	return strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
}

// cleanDiffLine makes a diff line (file content) visible: every control
// byte, escape and invisible format character (a bidi override) written
// as an escape, tabs kept.
func cleanDiffLine(l string) string { return outbuf.Visible(l) }

// colorDiffLine colours text, a piece of the diff line l, by l's kind:
// additions green, removals red, hunk headers cyan, file headers bold.
func colorDiffLine(l, text string) string {
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
	if color == "" {
		return text
	}
	return color + text + "\x1b[0m"
}

// sanitizeLine keeps a model- or tool-written string to one line of plain
// text for a form's label (outbuf's Line mode).
func sanitizeLine(s string) string { return outbuf.VisibleLine(s) }

// terminalSize is the size of the first of ws that is a terminal; 0, 0
// when none is.
func terminalSize(ws ...any) (rows, cols int) {
	for _, w := range ws {
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			if c, r, err := term.GetSize(int(f.Fd())); err == nil && r > 0 {
				return r, c
			}
		}
	}
	return 0, 0
}
