package vault

import (
	"regexp"
	"testing"
)

// namePolicy is the rule validName implements, as the regexp it replaced.
var namePolicy = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func TestValidNameIsTheNamePolicy(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "A", "_", "a1", "GITHUB_TOKEN", "1A", "A-B", "A B", "Ä", "A\x00", "x9_Z", "9", "_9", "A.B", "$A"} {
		if got, want := validName(name), namePolicy.MatchString(name); got != want {
			t.Errorf("validName(%q) = %t, want %t", name, got, want)
		}
	}
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"GITHUB_TOKEN", "1A", "", "a-b", "Ä"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := validName(name), namePolicy.MatchString(name); got != want {
			t.Fatalf("validName(%q) = %t, the policy says %t", name, got, want)
		}
	})
}
