package tools

import (
	"os"
	"strings"
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
	for k, v := range env {
		if MatchAny(coreNames, k) && !IsCredentialName(k) && !IsCredentialValue(v) {
			out[k] = v
		}
	}
	return out
}
