//go:build linux && (!cgo || hush_no_early_guard)

package guard

// earlyEnvFD is -1: the early guard is not linked in, and Guard does the
// whole job.
func earlyEnvFD() int { return -1 }
