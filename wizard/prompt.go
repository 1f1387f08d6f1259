// Package wizard holds hush's interactive forms (charmbracelet/huh): the
// permission prompt the gate shows when no rule decides, and the first-run
// setup, with what setup needs besides its forms — CheckKey (the one request
// that checks a key) and UpdateConfig (edits config.toml's tables in place).
// Forms read and write only the streams they are given; nothing here writes
// the process environment, stores a secret, or reads one for a tool.
package wizard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/huh"
	"github.com/hushcli/hush/executor"
)

// Prompter asks the person at the terminal about a gate request.
type Prompter struct {
	In  io.Reader
	Out io.Writer
	// Accessible uses huh's line-based mode (screen readers, dumb terminals).
	Accessible bool
}

// Confirm implements executor.Prompter.
func (p *Prompter) Confirm(ctx context.Context, req executor.Request) (executor.Choice, error) {
	title, desc := describe(req)
	if req.Diff != "" {
		// The whole diff, before the form: the terminal's scrollback holds
		// a long one, and nothing of what will be written is left out.
		WriteDiff(p.Out, req.Diff)
	}
	choice := executor.ChoiceAllowOnce
	// The title and description sit in a note of their own: a Select with a
	// title sizes its list from a first render at a default width, where the
	// description may wrap, and then scrolls its three options.
	note := huh.NewNote().Title(title).Description(desc)
	sel := huh.NewSelect[executor.Choice]().
		Options(choices(req)...).
		Value(&choice).
		Inline(true)
	form := huh.NewForm(huh.NewGroup(note, sel)).WithInput(p.In).WithOutput(p.Out).WithAccessible(p.Accessible).WithShowHelp(false)
	if err := form.RunWithContext(ctx); err != nil {
		if errors.Is(err, huh.ErrUserAborted) {
			fmt.Fprintln(p.Out, "denied: you pressed Ctrl-C at the prompt")
			return executor.ChoiceDeny, nil
		}
		return executor.ChoiceDeny, err
	}
	return choice, nil
}

// choices are the answers offered: a request about a file can be allowed
// for this session for that file or for its directory only.
func choices(req executor.Request) []huh.Option[executor.Choice] {
	if req.Path == "" {
		return []huh.Option[executor.Choice]{
			huh.NewOption("Allow once", executor.ChoiceAllowOnce),
			huh.NewOption("Allow for this session", executor.ChoiceAllowSession),
			huh.NewOption("Deny", executor.ChoiceDeny),
		}
	}
	dir := filepath.Dir(req.Path) + string(filepath.Separator)
	return []huh.Option[executor.Choice]{
		huh.NewOption("Allow once", executor.ChoiceAllowOnce),
		huh.NewOption("Allow for this session: "+sanitizeLine(req.Path), executor.ChoiceAllowSession),
		huh.NewOption("Allow for this session: every file in "+sanitizeLine(dir), executor.ChoiceAllowSessionDir),
		huh.NewOption("Deny", executor.ChoiceDeny),
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

func describe(req executor.Request) (string, string) {
	if name, ok := strings.CutPrefix(req.GateID, executor.GateVaultRead); ok {
		return fmt.Sprintf("%s wants the secret %s", req.Subject, name),
			"Only that tool gets it; output shows [REDACTED:" + name + "]."
	}
	if tool, ok := strings.CutPrefix(req.GateID, executor.GateToolRun); ok {
		detail := req.Detail
		if len(detail) > 70 {
			detail = detail[:70] + "…"
		}
		return fmt.Sprintf("Run %s?", tool), sanitizeLine(detail)
	}
	return fmt.Sprintf("Allow %s for %s?", req.GateID, req.Subject), ""
}

// sanitizeLine keeps a model-written detail from carrying terminal escapes.
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
