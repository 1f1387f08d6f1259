package wizard

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// keysToForm takes the terminal in out of line mode before a form's
// question is printed, and returns what puts it back. A question printed
// while the terminal was still in line mode was on the screen before the
// form read keys: an answer typed then was echoed, and its Enter reached
// the form as a line feed (the terminal's ICRNL), which answers nothing
// (TestChatTurnWithBackgroundAndMCPLeaksNothing's "allow once" was lost
// so on a loaded machine). Keys are read as the form's raw mode reads them
// (no echo, no line editing, no CR to LF, Ctrl-C a key); output keeps its
// processing, so the question's lines print as they did. bubbletea takes
// the terminal from this mode, into its raw mode, and gives it back.
func keysToForm(in io.Reader) (restore func()) {
	f, ok := in.(*os.File)
	if !ok {
		return func() {}
	}
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {} // not a terminal
	}
	keys := *old
	keys.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	keys.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	keys.Cc[unix.VMIN], keys.Cc[unix.VTIME] = 1, 0
	if unix.IoctlSetTermios(fd, unix.TCSETS, &keys) != nil {
		return func() {}
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }
}
