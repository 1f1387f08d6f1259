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
