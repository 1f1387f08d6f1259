package redact

import "testing"

func TestFromMap(t *testing.T) {
	t.Parallel()
	r := FromMap(map[string]string{"B_TOKEN": "bbbb-secret-2", "A_TOKEN": "aaaa-secret-1"})
	got := r.String("x aaaa-secret-1 y bbbb-secret-2 z")
	if want := "x [REDACTED:A_TOKEN] y [REDACTED:B_TOKEN] z"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := FromMap(nil).String("aaaa-secret-1"); got != "aaaa-secret-1" {
		t.Errorf("empty redactor changed %q", got)
	}
}
