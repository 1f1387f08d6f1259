//go:build !linux

package wizard

import "io"

// keysToForm leaves the terminal to the form's own raw mode where hush
// does not set terminal modes itself.
func keysToForm(io.Reader) (restore func()) { return func() {} }
