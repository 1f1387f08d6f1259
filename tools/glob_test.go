package tools

import (
	"path"
	"testing"
)

// TestMatchGlobIsPathMatch pins matchGlob, BuildEnv's fast path, to
// path.Match on the shapes it short-cuts (literal names, a trailing '*')
// and on those it hands on.
func TestMatchGlobIsPathMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"PATH", "PATH", true},
		{"PATH", "PATHX", false},
		{"PATH", "PAT", false},
		{"PATH", "", false},
		{"", "", true},
		{"", "X", false},
		{"LC_*", "LC_ALL", true},
		{"LC_*", "LC_", true},
		{"LC_*", "LC", false},
		{"LC_*", "LC_A/B", false},
		{"LC_*", "XLC_ALL", false},
		{"*", "ANYTHING", true},
		{"*", "A/B", false},
		{"GO*PATH", "GOPATH", true},
		{"GO?", "GOX", true},
		{"[A-C]X", "BX", true},
		{`\*`, "*", true},
		{"AB[", "AB[", false}, // malformed: matches nothing
		{"AB[", "XY", false},
		{"A*B*", "AxxBy", true},
	}
	for _, tt := range tests {
		ok, err := path.Match(tt.pattern, tt.name)
		if ref := err == nil && ok; ref != tt.want {
			t.Fatalf("table is wrong: path.Match(%q, %q) = %t, %v", tt.pattern, tt.name, ok, err)
		}
		if got := matchGlob(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchGlob(%q, %q) = %t, want %t", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func FuzzMatchGlob(f *testing.F) {
	for _, s := range [][2]string{{"LC_*", "LC_ALL"}, {"PATH", "PATH"}, {"A?[b-d]*", "AXc/"}, {`\`, `\`}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		ok, err := path.Match(pattern, name)
		if got, want := matchGlob(pattern, name), err == nil && ok; got != want {
			t.Fatalf("matchGlob(%q, %q) = %t, path.Match says %t (%v)", pattern, name, got, want, err)
		}
	})
}
