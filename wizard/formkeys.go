package wizard

import (
	"io"
	"os"

	"github.com/hushcli/hush/vault"
)

// keysToForm takes the terminal in out of line mode before a form's
// question is printed, and returns what puts it back (vault.ReadKeys). A
// question printed while the terminal was still in line mode was on the
// screen before the form read keys: an answer typed then was echoed, and
// its Enter reached the form as a line feed (the terminal's ICRNL), which
// answers nothing (TestChatTurnWithBackgroundAndMCPLeaksNothing's "allow
// once" was lost so on a loaded machine). bubbletea takes the terminal
// from this mode, into its raw mode, and gives it back.
func keysToForm(in io.Reader) (restore func()) {
	f, ok := in.(*os.File)
	if !ok {
		return func() {}
	}
	return vault.ReadKeys(int(f.Fd()))
}
