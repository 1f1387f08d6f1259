package tools

import "github.com/hushcli/hush/tools/termquiet"

// RestoreTerm gives hush's environment back the TERM it was started with,
// which package initialisation ran without (package termquiet). Call it
// before Guard, which compares the environment with the one hush was
// started with.
func RestoreTerm() { termquiet.Restore() }
