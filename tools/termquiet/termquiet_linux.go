// Package termquiet keeps hush's package initialisation from asking the
// terminal anything (see quietInit).
package termquiet

import (
	"os"

	"golang.org/x/sys/unix"
)

// bubbletea's package init asks the terminal for its background colour
// (lipgloss.HasDarkBackground: OSC 11 and a cursor-position report), in
// every program that links it, before main runs — so `hush --version`,
// `hush run` and `hush vault list` wrote `ESC]11;?ESC[6n` to the user's
// terminal and, where nothing answers (`script -c`, some CI PTYs, serial
// consoles), waited termenv's 5 s timeout twice: 10.06 s for --version.
// termenv skips the query when TERM says "dumb", so while packages
// initialise, hush's own TERM says so; Restore (through tools.RestoreTerm), the first thing hush's
// main does, puts the real value back before anything else reads it. The
// background then counts as unknown (dark, or COLORFGBG's) until a command
// that draws colours asks with a short timeout (wizard.ResolveBackground).
//
// It must run before bubbletea's init. Go initialises packages in import
// path order among those whose imports are done; this package sorts before
// muesli/termenv and is ready no later than it (it imports only os and
// x/sys/unix, which termenv imports too), so it runs first. It is a
// package of its own so that nothing package tools imports can delay it:
// tools importing a package that sorts after termenv once did (checked by
// `GODEBUG=inittrace=1` and by TestVersionAsksTheTerminalNothing in tests/,
// which fails if the order ever changes). A process whose standard output
// is not a terminal is left alone: nothing would be asked there anyway.
var quietInit = startQuiet()

type savedTerm struct {
	value  string
	set    bool
	active bool
}

func startQuiet() savedTerm {
	if _, err := unix.IoctlGetTermios(int(os.Stdout.Fd()), unix.TCGETS); err != nil {
		return savedTerm{}
	}
	v, set := os.LookupEnv("TERM")
	if os.Setenv("TERM", "dumb") != nil {
		return savedTerm{}
	}
	return savedTerm{value: v, set: set, active: true}
}

// Restore gives hush's environment back the TERM it was started with,
// which package initialisation ran without (see quietInit). Call it before
// Guard, which compares the environment with the one hush was started with.
func Restore() {
	if !quietInit.active {
		return
	}
	quietInit.active = false
	if quietInit.set {
		_ = os.Setenv("TERM", quietInit.value)
	} else {
		_ = os.Unsetenv("TERM")
	}
}
