//go:build linux

package sandbox

import (
	"strings"
	"testing"
)

func TestLimitsFlagsAndStatus(t *testing.T) {
	l := Limits{Processes: 300, Memory: 1 << 30, Setting: "[tools.bash]"}
	if got := l.flags(); got != "p300m1342177280" { // RLIMIT_DATA a quarter above max_memory

		t.Errorf("flags = %q", got)
	}
	if got := (Limits{}).flags(); got != "" {
		t.Errorf("no limits: flags = %q", got)
	}
	refused := LimitStatus(l, State{Reason: "the kernel refused its namespaces (test)"})
	for _, p := range refused {
		if p.On || !strings.HasPrefix(p.Why, "not enforced: ") || !strings.Contains(p.Why, "(test)") {
			t.Errorf("without namespaces: %+v", p)
		}
	}
	on := LimitStatus(l, State{Namespaces: true})
	if !on[1].On || !strings.HasPrefix(on[1].Why, "1.0 GiB per call (max_memory in [tools.bash]): hush adds up") || !strings.Contains(on[1].Why, "RLIMIT_DATA of 1.2 GiB") {
		t.Errorf("memory: %+v", on[1])
	}
	off := LimitStatus(Limits{Setting: "[tools.mcp]"}, State{Namespaces: true})
	if off[0].On || off[0].Why != "off: max_processes = 0 in [tools.mcp]" || off[1].Why != `off: max_memory = "off" in [tools.mcp]` {
		t.Errorf("off: %+v", off)
	}
	if e := (&LimitError{Limits: Limits{Processes: 4096, Setting: "[tools.bash]"}}).Error(); e !=
		"stopped: the call reached its limit of 4,096 processes (max_processes in [tools.bash]), so hush ended it and everything it started" {
		t.Errorf("LimitError = %q", e)
	}
	if e := (&LimitError{Limits: Limits{Memory: 512 << 20, Setting: "[tools.bash]"}, What: "memory"}).Error(); e !=
		"stopped: the call used more than its memory limit of 512.0 MiB (max_memory in [tools.bash]), so hush ended it and everything it started" {
		t.Errorf("LimitError = %q", e)
	}
}
