package selftest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hushcli/hush/tools/sandbox"
)

// TestProtectionRowsFailWhatTheFallbackLacks: where the namespaces are
// refused, each protection the Landlock world cannot give is a FAIL row
// (and fails the report), each it gives a pass; with the namespaces, or
// with the audit's own --sandbox off, there are no such rows.
func TestProtectionRowsFailWhatTheFallbackLacks(t *testing.T) {
	t.Parallel()
	st := sandbox.State{LandlockOnly: true, Reason: "the container's seccomp profile refuses user namespaces", Protections: []sandbox.Protection{
		{Name: sandbox.ProtectLandlockView, On: true, Why: "Landlock allowlist"},
		{Name: sandbox.ProtectPID, Why: "no PID namespace"},
		{Name: sandbox.ProtectMounts, Why: "the project's .env family is readable"},
	}}
	rows := protectionRows(st, false)
	got := map[string]string{}
	for _, r := range rows {
		got[r.Name] = r.Status
	}
	if len(rows) != 3 || got[sandbox.ProtectLandlockView] != "pass" || got[sandbox.ProtectPID] != "FAIL" || got[sandbox.ProtectMounts] != "FAIL" {
		t.Errorf("rows = %+v", rows)
	}
	rep := &Report{Protections: rows, Failed: 2, Verdict: "FAILED"}
	var out bytes.Buffer
	rep.Render(&out)
	if !strings.Contains(out.String(), "pid-namespace") || !strings.Contains(out.String(), "FAIL") || rep.OK() {
		t.Errorf("render:\n%s", out.String())
	}
	if r := protectionRows(sandbox.State{Namespaces: true, Protections: st.Protections}, false); r != nil {
		t.Errorf("with the namespaces: %+v", r)
	}
	if r := protectionRows(st, true); r != nil {
		t.Errorf("with --sandbox off: %+v", r)
	}
}
