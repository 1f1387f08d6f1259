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
