//go:build !linux

package sandbox

// totalMemory is unknown here: no default memory limit.
func totalMemory() uint64 { return 0 }

// Names of the limits in LimitStatus.
const (
	LimitProcesses = "max-processes"
	LimitMemory    = "max-memory"
)

// LimitStatus: host tools have no sandbox here, so no limits either.
func LimitStatus(l Limits, st State) []Protection {
	why := "not enforced: " + st.Reason
	return []Protection{{Name: LimitProcesses, Why: why}, {Name: LimitMemory, Why: why}}
}

// LimitWatch is never made here.
type LimitWatch struct{}

// WatchLimits watches nothing here.
func WatchLimits(int, *Config, func()) *LimitWatch { return nil }

// Stop returns err.
func (*LimitWatch) Stop(err error) error { return err }
