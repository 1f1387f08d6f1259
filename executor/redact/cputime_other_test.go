//go:build !unix

package redact

import "time"

// cpuTime is not read here: cpu-ms/op reports 0.
func cpuTime() time.Duration { return 0 }
