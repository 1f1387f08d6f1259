package selftest

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestProbeCommandReportsOrAttacks(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := (ProbeCommand{Probe: ProbeOptions{Env: map[string]string{"PROBE_SEEN": "1"}}}).Run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if reps := ParseProbeLines(out.String()); len(reps) != 1 {
		t.Errorf("the default probe printed %d report(s), want one:\n%s", len(reps), out.String())
	}

	out.Reset()
	missing := filepath.Join(t.TempDir(), "none.sock")
	err := ProbeCommand{Connect: []string{"bus=" + missing, "no-equals-sign"}}.Run(context.Background(), &out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(ParseProbeLines(out.String())) != 0 || len(lines) != 1 || !strings.Contains(lines[0], "connect-bus") {
		t.Errorf("--connect bus=SOCKET: want one attack line for connect-bus, got:\n%s", out.String())
	}
}
