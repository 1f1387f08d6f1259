//go:build linux && cgo && !hush_no_early_guard

package guard

// The early guard hides hush's environment before the Go runtime starts,
// without a second exec.
//
// Guard runs in main, after the Go runtime and every package's
// initialisation — the model SDKs, the Docker client and the terminal
// libraries take several milliseconds of it — and its re-exec then pays
// all of that again. A real shell always exports something outside the
// core allowlist (PWD, SHLVL, OLDPWD), so that second start-up was the
// common case, doubling `hush --version`. It also doubled, in a terminal,
// the colour query bubbletea's init sends (a round trip each, a 5 s
// timeout each on a terminal that does not answer).
//
// This C constructor runs in the hush executable before the Go runtime
// exists. It copies the original environment into an anonymous memfd and
// then rewrites the environment where the kernel put it: the strings the
// kernel shows as /proc/<pid>/environ are compacted to the core allowlist
// in place, the rest of that memory is overwritten (one HUSH_ENV_HIDDEN
// entry padded with spaces), and envp — which the Go
// runtime and libc read after constructors — is cut to match. Go's Guard
// then reads the memfd (its number is in hush_early_env_fd, never in the
// environment) and checks the reduction against reduce: Go's rules stay
// the owner of what hush keeps, and should this copy of the list ever keep
// more than reduce would, Guard hides it again by re-executing.
//
// An earlier version re-executed /proc/self/exe with the reduced
// environment instead; that cost one more exec and dynamic link of the
// 80 MB file (1.2 ms of an 8 ms `hush --version`). If the strings are not
// laid out as the kernel lays them out (something rewrote them before this
// constructor), or anything fails, the constructor changes nothing and
// Guard does the whole job.
//
// It acts only in an executable named "hush", so test binaries and other
// programs that link this package keep their environment; only glibc
// passes a constructor argv and envp. Build with -tags hush_no_early_guard
// (or CGO_ENABLED=0) to leave everything to Guard. Go's own settings
// (GODEBUG, GOGC …) are off the allowlist, so they never reach hush's Go
// runtime; to trace hush's start-up, run a copy under another name.

/*
#include "early.h"
*/
import "C"

// earlyEnvFD is the memfd the early guard left, or -1.
func earlyEnvFD() int { return int(C.hush_early_env_fd) }
