package redact

import (
	"slices"
	"testing"
)

func TestNamesAreThoseRedactingAdded(t *testing.T) {
	r := New([]Secret{{Name: "GITHUB_TOKEN", Value: "ghp_abcdefghijklmnop"}, {Name: "B", Value: "bbbbbbbbbbbb"}})
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"nothing here", nil},
		{"my token is ghp_abcdefghijklmnop", []string{"GITHUB_TOKEN"}},
		{"[REDACTED:B] stays, bbbbbbbbbbbb and ghp_abcdefghijklmnop twice ghp_abcdefghijklmnop", []string{"B", "GITHUB_TOKEN"}},
		{"already [REDACTED:GITHUB_TOKEN]", nil},
	} {
		if got := Names(tc.in, r.String(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Placeholders([]string{"A", "B"}); got != "[REDACTED:A], [REDACTED:B]" {
		t.Errorf("Placeholders: %q", got)
	}
}
