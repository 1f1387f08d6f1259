package config

import (
	"regexp"
	"testing"
)

// namePolicy is the rule ValidSecretName implements (with its 256-byte
// bound), as the regexp it replaced.
var namePolicy = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func TestValidSecretNameIsTheNamePolicy(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "A", "_", "a1", "GITHUB_TOKEN", "1A", "A-B", "A B", "Ä", "A\x00", "x9_Z", "9", "_9", "A.B", "$A"} {
		if got, want := ValidSecretName(name), len(name) <= 256 && namePolicy.MatchString(name); got != want {
			t.Errorf("ValidSecretName(%q) = %t, want %t", name, got, want)
		}
	}
}

func FuzzValidSecretName(f *testing.F) {
	for _, s := range []string{"GITHUB_TOKEN", "1A", "", "a-b", "Ä"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := ValidSecretName(name), len(name) <= 256 && namePolicy.MatchString(name); got != want {
			t.Fatalf("ValidSecretName(%q) = %t, the policy says %t", name, got, want)
		}
	})
}
