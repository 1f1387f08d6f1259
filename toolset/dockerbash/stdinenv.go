package dockerbash

import (
	"fmt"
	"strings"

	"github.com/hushcli/hush/tools"
)

// The container's environment does not travel in the create request's Env:
// the engine keeps that in the container's Config.Env, and anyone who can
// inspect the container — `docker inspect`, `docker ps --format '{{.Env}}'`,
// any client of the Engine API — would read every granted secret there for
// as long as the container exists. It travels instead on the container's
// stdin, attached once and closed (StdinOnce), where the engine keeps no
// copy: entrypoint, run by sh before the script, reads it into the shell,
// exports it and execs the script in a fresh sh, whose stdin is then at its
// end (as it was when no stdin was attached).

// entrypoint reads `export NAME='value'` lines from stdin until it ends,
// evaluates them and runs the script ($1) with sh. It uses only sh
// built-ins, so it works in any image that has sh (busybox, dash, bash).
// The payload's last line is envEnd: a stream cut short (the engine or the
// connection failed) stops the container before the script runs without
// its environment.
const entrypoint = `__hush_s=; __hush_e=; while IFS= read -r __hush_l; do __hush_s="$__hush_s$__hush_l
"; __hush_e=$__hush_l; done; ` +
	`if [ "$__hush_e" != '` + envEnd + `' ]; then echo 'hush: the container did not receive its environment; the script did not run' >&2; exit 125; fi; ` +
	`eval "$__hush_s" || exit 125; unset __hush_s __hush_l __hush_e; exec sh -c "$1"`

// envEnd ends the payload.
const envEnd = "# end of hush environment"

// entrypointCmd is the container's command line: the entrypoint, then the
// script as its $1. It holds no value of the environment.
func entrypointCmd(script string) []string {
	return []string{"sh", "-c", entrypoint, "sh", script}
}

// envPayload is what is written to the container's stdin: one export per
// variable, each value single-quoted (a quote inside it becomes '\”), so a
// newline, a quote, a backslash or a $ in a value arrives exactly. A name
// the shell cannot export (or one of the entrypoint's own, __hush_*) is
// refused before anything starts.
func envPayload(env tools.Env) ([]byte, error) {
	var b strings.Builder
	for _, v := range env {
		if !shellName(v.Name) || strings.HasPrefix(v.Name, "__hush_") {
			return nil, fmt.Errorf("%q cannot be set in a container: a variable name there must be letters, digits and _ and not start with a digit", v.Name)
		}
		b.WriteString("export " + v.Name + "='" + strings.ReplaceAll(v.Value, "'", `'\''`) + "'\n")
	}
	b.WriteString(envEnd + "\n")
	return []byte(b.String()), nil
}

func shellName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
