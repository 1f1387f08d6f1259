package wizard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/huh"
	"golang.org/x/term"
)

// ErrNoTerminal is what commands that need a person say without one.
var ErrNoTerminal = errors.New("no controlling terminal")

// ControllingTerminal opens the process's controlling terminal. A tool's
// process has none (the spawn layer starts each in a new session), so the
// open fails there whatever its stdin or stdout are.
func ControllingTerminal() (*os.File, error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, ErrNoTerminal
	}
	return f, nil
}

// AskTTY asks a yes/no question on tty; only "y" or "yes" (any case) is yes.
func AskTTY(tty io.ReadWriter, question string) bool {
	fmt.Fprint(tty, question)
	line, _ := bufio.NewReader(tty).ReadString('\n')
	ans := strings.ToLower(strings.TrimSpace(line))
	return ans == "y" || ans == "yes"
}

// Terminal returns r as a terminal, or nil when it is not one.
func Terminal(r io.Reader) *os.File {
	if f, ok := r.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return f
	}
	return nil
}

// ChooseDisposal asks, in a form on in/out, what to do with the file path
// `hush vault import` copied: delete it (offered only when safe, every
// entry being in the vault), rename it to renamed, or keep it. It returns
// "delete", "rename" or "keep"; "keep" when the form fails.
func ChooseDisposal(in io.Reader, out io.Writer, accessible bool, path, renamed string, safe bool) string {
	var choices []huh.Option[string]
	if safe {
		choices = append(choices, huh.NewOption("Delete "+path+" (every entry is in the vault)", "delete"))
	}
	choices = append(choices,
		huh.NewOption("Rename it to "+filepath.Base(renamed)+" (hush stops reading it)", "rename"),
		huh.NewOption("Keep it (hush keeps reading it, and tools can read the file)", "keep"))
	action := choices[0].Value
	form := huh.NewForm(huh.NewGroup(huh.NewSelect[string]().Title("What about " + path + "?").Options(choices...).Value(&action))).
		WithInput(in).WithOutput(out).WithAccessible(accessible).WithShowHelp(false)
	if err := form.RunWithContext(context.Background()); err != nil {
		return "keep"
	}
	return action
}
