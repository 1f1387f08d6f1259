package vault

import "golang.org/x/sys/unix"

// HideTyping turns the echo of the terminal fd off and returns what turns
// it back to how it was. A prompt for a secret is written after it: with
// the prompt first and the echo turned off only by the read that follows
// (term.ReadPassword, huh's line-by-line password prompt), what was typed
// or pasted the moment the prompt showed was echoed, the secret in clear
// on the terminal and in its scrollback. Not a terminal: nothing to do.
func HideTyping(fd int) (restore func()) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil || old.Lflag&unix.ECHO == 0 {
		return func() {}
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(fd, unix.TCSETS, &quiet) != nil {
		return func() {}
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }
}

// ReadKeys takes the terminal fd out of line mode and returns what puts it
// back: keys are read as a full-screen form's raw mode reads them (no
// echo, no line editing, no CR to LF, Ctrl-C a key), while output keeps
// its processing. Held from before a form is drawn until after it ends,
// it keeps what is typed ahead — while a question is printed, or while
// hush checks an answer between two forms — from being echoed, and its
// Enter from reaching the next form as a line feed (ICRNL), which answers
// nothing. A form's own raw mode starts from it and returns to it. Not a
// terminal: nothing to do.
func ReadKeys(fd int) (restore func()) {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
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
