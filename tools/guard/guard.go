// Package guard is hush's own start-up hardening: before anything else runs
// it hides the environment hush was started with from /proc/<pid>/environ
// (in place, in a C constructor, early.c, or by re-executing hush), keeps
// the original in memory for hush alone, and makes hush undumpable with no
// core file. It starts no tool; the spawn layer (package tools) does.
package guard

import (
	"os"
	"strings"

	"github.com/hushcli/hush/tools"
)

// envFDVar tells the re-executed hush which inherited descriptor holds its
// original environment (Linux). It carries a number, never a value.
const envFDVar = "HUSH_ENV_FD"

// environMap is the one read of the process environment in hush.
func environMap() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if i := strings.IndexByte(kv, '='); i > 0 {
			env[kv[:i]] = kv[i+1:]
		}
	}
	return env
}

// reduce is what hush keeps in its own environ: the core allowlist, minus
// anything credential-shaped by name or value.
func reduce(env map[string]string) map[string]string {
	out := map[string]string{}
	core := tools.CoreNames()
	for k, v := range env {
		if tools.MatchAny(core, k) && !tools.IsCredentialName(k) && !tools.IsCredentialValue(v) {
			out[k] = v
		}
	}
	return out
}
