package redact

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// formsReference is forms as it was written before it wrote into an
// arena: the plain way, kept as the oracle the arena version must equal.
func formsReference(value string) []string {
	out := []string{value}
	v := []byte(value)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		raw := enc.WithPadding(base64.NoPadding)
		out = append(out, enc.EncodeToString(v), raw.EncodeToString(v))
		for off := range 3 {
			z := make([]byte, off+len(v)+2)
			copy(z[off:], v)
			s := raw.EncodeToString(z)
			first, end := (8*off+5)/6, 8*(off+len(v))/6
			if end > first {
				out = append(out, s[first:end])
			}
		}
	}
	if q := url.QueryEscape(value); q != value {
		out = append(out, q)
	}
	if p := url.PathEscape(value); p != value {
		out = append(out, p)
	}
	h := hex.EncodeToString(v)
	return append(out, h, strings.ToUpper(h))
}

func TestFormsEqualTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := []string{"", "a", "ab", "abc", "abcd", "p@ss w/rd?&=%", "ghp_0123456789abcdefABCDEF", "\x00\xff\xfe binary"}
	for range 500 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		values = append(values, string(b))
	}
	var ps patternSet // one set across values, as the build uses it
	for _, v := range values {
		from := len(ps.start)
		ps.addForms([]byte(v), 0)
		var got []string
		for i := from; i < len(ps.start); i++ {
			got = append(got, string(ps.at(int32(i))))
		}
		// The build leaves out short forms and some that repeat an earlier
		// one (dedupe drops the rest): the same forms, in the same order.
		var want []string
		for _, f := range formsReference(v)[1:] {
			if len(f) >= MinLen {
				want = append(want, f)
			}
		}
		if got, want := firstEach(got), firstEach(want); !slices.Equal(got, want) {
			t.Fatalf("forms of %q:\n got %q\nwant %q", v, got, want)
		}
	}
}

// firstEach is list without the strings that occur earlier in it.
func firstEach(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// build is New with the normalised forms optional, so tests can compare
// the literal part with a plain reference; it builds at once.
func build(secrets []Secret, withForms bool) *Redactor {
	r := deferred(func() []Secret { return secrets }, shortest(secrets), withForms)
	r.ready()
	return r
}

// forms returns the byte strings under which value can appear in output:
// the value itself, its base64 encodings, its URL encodings and its hex.
// Forms that vary (wrapping, escaping) are normalised instead (normal.go).
// Forms shorter than MinLen are left out; forms may repeat.
func forms(value string) []string {
	var ps patternSet
	ps.addForms([]byte(value), 0)
	out := []string{value}
	for i := range ps.start {
		out = append(out, string(ps.at(int32(i))))
	}
	return out
}
