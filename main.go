// Command hush is a coding agent that keeps one promise: a tool gets a
// secret only when it was granted that secret, by ${NAME} substitution
// through a permission-gated vault — never through ambient state.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args))
}

// exitNow ends the process at once with code, for the one case that cannot
// return through run: `hush chat` told to terminate while it waits for a
// line of input, after it stopped its tools.
func exitNow(code int) { os.Exit(code) }
