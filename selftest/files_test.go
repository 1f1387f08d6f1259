package selftest

import (
	"strings"
	"testing"
)

// The file-tools row can fail: a canary in a masked call's result is a
// LEAK, a masked path read without refusal is a FAIL, and a positive
// control that read nothing is a FAIL.
func TestFileCells(t *testing.T) {
	c := newCanaries()
	calls := fileToolCalls("/data")
	good := func() []string {
		var rs []string
		for _, fc := range calls {
			if fc.masked {
				rs = append(rs, "error: masked: secrets reach tools through the vault; see `hush vault import`")
			} else {
				rs = append(rs, "README:1:a project hush audit "+publicMarker)
			}
		}
		return rs
	}
	tests := []struct {
		name           string
		edit           func([]string)
		files, granted string
	}{
		{"all refused", func([]string) {}, "pass", "pass"},
		{"a symlink read through", func(rs []string) { rs[2] = "     1\tAUDIT_VAULT_SECRET=" + c[cVault] }, "LEAK", "pass"},
		{"not refused", func(rs []string) { rs[0] = "(no output)" }, "FAIL", "pass"},
		{"positive control read nothing", func(rs []string) { rs[len(rs)-1] = "no matches" }, "pass", "FAIL"},
		{"a call missing", func(rs []string) {}, "FAIL", "FAIL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := good()
			tt.edit(rs)
			if tt.name == "a call missing" {
				rs = rs[1:]
			}
			r := &runResult{w: &world{dataDir: "/data"}, results: map[string][]string{PathFiles: rs}}
			cells := r.fileCells(c)
			if cells[VecFiles].Status != tt.files || cells[VecGranted].Status != tt.granted {
				t.Errorf("files %v, granted %v; want %s, %s", cells[VecFiles], cells[VecGranted], tt.files, tt.granted)
			}
			if strings.Contains(cells[VecFiles].Detail, c[cVault]) {
				t.Error("a cell's detail holds a canary value")
			}
		})
	}
}
