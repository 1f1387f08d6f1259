package selftest

import "github.com/hushcli/hush/tools/sandbox"

// ProtectionRow is one protection of the host sandbox on this machine, as
// `hush audit` reports it where the kernel refuses the namespaces: a
// protection the fallback cannot give is a failed row, never a pass.
type ProtectionRow struct {
	Name   string `json:"name"`
	Status string `json:"status"` // "pass" or "FAIL"
	Why    string `json:"why"`
}

// protectionRows are st's protections as rows where the namespace
// sandbox is missing (the Landlock world, or nothing); none where it
// runs, or where the audit itself switched the sandbox off (the attack
// rows already show that).
func protectionRows(st sandbox.State, noSandbox bool) []ProtectionRow {
	if st.Namespaces || noSandbox {
		return nil
	}
	out := make([]ProtectionRow, 0, len(st.Protections))
	for _, p := range st.Protections {
		status := "pass"
		if !p.On {
			status = "FAIL"
		}
		out = append(out, ProtectionRow{Name: p.Name, Status: status, Why: p.Why})
	}
	return out
}
