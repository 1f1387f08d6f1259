package tests

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestAuditNetworkRowsInTheLandlockFallback runs `hush audit` where the
// kernel refuses user namespaces without touching the host (inside a user
// namespace whose own limit forbids another, as uid 1000 in a second one,
// as TestLandlockWorldWhereUsernsRefused does): the Landlock fallback. Its
// network rows, each with the audit's own raw-byte listeners and positive
// controls, must pass there: a granted secret posted to an unbound host,
// the user's loopback service reached by an ungranted call, and a program
// that ignores the proxy. The squatter row is what the fallback cannot
// give (a tool may listen on the host's loopback): it is not asserted.
func TestAuditNetworkRowsInTheLandlockFallback(t *testing.T) {
	t.Parallel()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare(1) is missing (util-linux): %v", err)
	}
	w := newWorld(t)
	w.config("")
	cmd := exec.Command(unshare, "-U", "-r", "sh", "-c",
		`echo 1 > /proc/sys/user/max_user_namespaces && exec unshare -U --map-user=1000 --map-group=1000 "$0" audit --json --no-docker`, hushBin)
	cmd.Env, cmd.Dir = w.env, w.project
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	var rep struct {
		Attacks []struct {
			Attack string `json:"attack"`
			Cells  map[string]struct {
				Status string `json:"status"`
				Detail string `json:"detail"`
			} `json:"cells"`
		} `json:"attacks"`
		Protections []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"protections"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("audit --json printed %q (stderr %q): %v", out, stderr.String(), err)
	}
	w.assertNoCanary("hush audit's output", string(out)+stderr.String())
	landlock := false
	for _, p := range rep.Protections {
		if p.Name == "landlock-view" {
			landlock = true
		}
	}
	if !landlock {
		t.Fatalf("the audit did not run in the Landlock fallback (no landlock-view protection):\n%s\n%s", out, stderr.String())
	}
	want := map[string]bool{
		"network: a granted secret posted to an unbound host": false,
		"network: the user's loopback service, ungranted":     false,
		"network: a program that ignores the proxy":           false,
	}
	for _, a := range rep.Attacks {
		if _, ok := want[a.Attack]; !ok {
			continue
		}
		want[a.Attack] = true
		if c := a.Cells["unprivileged"]; c.Status != "pass" {
			t.Errorf("%s: %s in the Landlock fallback: %s", a.Attack, c.Status, c.Detail)
		}
	}
	for row, seen := range want {
		if !seen {
			t.Errorf("the audit has no row %q", row)
		}
	}
}
