package config_test

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
)

// errNotFound stands for the vault's ErrNotFound.
var errNotFound = errors.New("not in the vault")

// mapLookup resolves from m like the vault would: an unknown name is an
// error naming it and wrapping ErrNotFound.
func mapLookup(m map[string]string) config.Lookup {
	return func(name string) (string, error) {
		v, ok := m[name]
		if !ok {
			return "", fmt.Errorf("secret %s: %w", name, errNotFound)
		}
		return v, nil
	}
}

func TestSubstitute(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{
		"A":     "va-" + canary,
		"B":     "vb-" + canary,
		"_u1":   "u-" + canary,
		"REF":   "${A}", // a value is never expanded again
		"EMPTY": "",
	}
	const badName = "malformed secret reference: the ${...} at offset %d does not hold a valid secret name (letters, digits and _, not starting with a digit; write $${ for a literal ${)"
	tests := []struct {
		in, want, wantErr string
		notFound          bool
	}{
		{in: "", want: ""},
		{in: "plain text", want: "plain text"},
		{in: "${A}", want: "va-" + canary},
		{in: "x${A}y${B}z", want: "xva-" + canary + "yvb-" + canary + "z"},
		{in: "${A}${A}", want: "va-" + canary + "va-" + canary},
		{in: "${_u1}", want: "u-" + canary},
		{in: "[${EMPTY}]", want: "[]"},
		{in: "${REF}", want: "${A}"},
		{in: "$${A}", want: "${A}"},
		{in: "$${A} and ${A}", want: "${A} and va-" + canary},
		{in: "$${", want: "${"},
		{in: "$$${A}", want: "$${A}"},
		{in: "$A $1 $ $$ $(id) {A} $", want: "$A $1 $ $$ $(id) {A} $"},
		{in: `\${A}`, want: `\va-` + canary},
		{in: "${A}}", want: "va-" + canary + "}"},
		{in: "${", wantErr: "malformed secret reference: unterminated ${ at offset 0"},
		{in: "${A", wantErr: "malformed secret reference: unterminated ${ at offset 0"},
		{in: "ok ${A} then ${B", wantErr: "malformed secret reference: unterminated ${ at offset 13"},
		{in: "${1A}", wantErr: fmt.Sprintf(badName, 0)},
		{in: "${}", wantErr: fmt.Sprintf(badName, 0)},
		{in: "x ${A-B}", wantErr: fmt.Sprintf(badName, 2)},
		{in: "${ A }", wantErr: fmt.Sprintf(badName, 0)},
		{in: "${A:-default}", wantErr: fmt.Sprintf(badName, 0)},
		{in: "${{A}}", wantErr: fmt.Sprintf(badName, 0)},
		{in: "${sk-live-" + canary + "}", wantErr: fmt.Sprintf(badName, 0)}, // a value pasted in place of a name
		{in: "${NOPE}", wantErr: "secret NOPE: not in the vault", notFound: true},
		{in: "${A} ${NOPE} ${B}", wantErr: "secret NOPE: not in the vault", notFound: true},
	}
	for _, tt := range tests {
		got, err := config.Substitute(tt.in, mapLookup(secrets))
		if tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("Substitute(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			continue
		}
		if err == nil || err.Error() != tt.wantErr {
			t.Errorf("Substitute(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			continue
		}
		if got != "" {
			t.Errorf("Substitute(%q) returned %q with its error", tt.in, got)
		}
		if tt.notFound != errors.Is(err, errNotFound) || !tt.notFound != errors.Is(err, config.ErrBadReference) {
			t.Errorf("Substitute(%q) error %v: ErrNotFound=%v ErrBadReference=%v", tt.in, err,
				errors.Is(err, errNotFound), errors.Is(err, config.ErrBadReference))
		}
		if strings.Contains(err.Error(), canary) {
			t.Errorf("Substitute(%q) error %q contains a value", tt.in, err)
		}
	}
}

func TestSubstituteLooksUpOnlyWhatItUses(t *testing.T) {
	t.Parallel()
	var asked []string
	_, err := config.Substitute("${A} $${B} ${C} $D ${1} ${E}", func(name string) (string, error) {
		asked = append(asked, name)
		return "", nil
	})
	if !errors.Is(err, config.ErrBadReference) {
		t.Fatalf("error = %v, want ErrBadReference", err)
	}
	// Stops at the first bad reference: nothing after it is asked for.
	if !slices.Equal(asked, []string{"A", "C"}) {
		t.Errorf("looked up %q, want [A C]", asked)
	}
}

func TestReferences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"no refs", nil, ""},
		{"${A} and ${B} and ${A}", []string{"A", "B", "A"}, ""},
		{"$${A} ${B} $C", []string{"B"}, ""},
		{"Bearer ${GITHUB_TOKEN}", []string{"GITHUB_TOKEN"}, ""},
		{"${A}${1}", []string{"A"}, "malformed secret reference: the ${...} at offset 4 does not hold a valid secret name (letters, digits and _, not starting with a digit; write $${ for a literal ${)"},
		{"${A", nil, "malformed secret reference: unterminated ${ at offset 0"},
	}
	for _, tt := range tests {
		got, err := config.References(tt.in)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
			t.Errorf("References(%q) error = %v, want %q", tt.in, err, tt.wantErr)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("References(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

var substErr = regexp.MustCompile(`^malformed secret reference: (unterminated \$\{ at offset [0-9]+|the \$\{\.\.\.\} at offset [0-9]+ does not hold a valid secret name \(letters, digits and _, not starting with a digit; write \$\$\{ for a literal \$\{\))$`)

// FuzzSubstitute: never panics; with a lookup that cannot fail, an error is
// one of the two fixed malformed-reference messages (so it quotes nothing of
// the input); every name looked up is a valid name, and the ones References
// reports; and the output holds no "${" the input did not escape as "$${".
func FuzzSubstitute(f *testing.F) {
	for _, s := range []string{
		"", "${A}", "x${A}y${B}", "$${A}", "$$${A}", "$A $1", "${", "${A", "${1A}", "${}",
		"${A}}", "${{A}}", "$", "$$", "${A}$${B}${C}", "\\${A}", "${A-B}", "${\x00}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var asked []string
		out, err := config.Substitute(s, func(name string) (string, error) {
			if !config.ValidSecretName(name) {
				t.Fatalf("Substitute(%q) looked up the invalid name %q", s, name)
			}
			asked = append(asked, name)
			return "<" + name + ">", nil
		})
		refs, refErr := config.References(s)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("Substitute(%q) error %v but References error %v", s, err, refErr)
		}
		if !slices.Equal(asked, refs) {
			t.Fatalf("Substitute(%q) looked up %q, References = %q", s, asked, refs)
		}
		if err != nil {
			if !errors.Is(err, config.ErrBadReference) || !substErr.MatchString(err.Error()) {
				t.Fatalf("Substitute(%q) error %q is not a fixed malformed-reference message", s, err)
			}
			return
		}
		if strings.Contains(out, "${") && !strings.Contains(s, "$${") {
			t.Fatalf("Substitute(%q) = %q still holds a reference", s, out)
		}
		if !strings.Contains(s, "${") && out != s {
			t.Fatalf("Substitute(%q) = %q changed text without references", s, out)
		}
	})
}
