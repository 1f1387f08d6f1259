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
	choice := executor.ChoiceAllowOnce
	// The title and description sit in a note of their own: a Select with a
	// title sizes its list from a first render at a default width, where the
	// description may wrap, and then scrolls its three options.
	note := huh.NewNote().Title(title).Description(desc)
	sel := huh.NewSelect[executor.Choice]().
		Options(
			huh.NewOption("Allow once", executor.ChoiceAllowOnce),
			huh.NewOption("Allow for this session", executor.ChoiceAllowSession),
			huh.NewOption("Deny", executor.ChoiceDeny),
		).
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
