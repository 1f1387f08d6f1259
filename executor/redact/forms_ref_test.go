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
	var f formBuf // one buffer across values, as build uses it
	for _, v := range values {
		var got []string
		f.each([]byte(v), func(b []byte) { got = append(got, string(b)) })
		if want := formsReference(v); !slices.Equal(got, want) {
			t.Fatalf("forms of %q:\n got %q\nwant %q", v, got, want)
		}
		if got := forms(v); !slices.Equal(got, formsReference(v)) {
			t.Fatalf("forms(%q) = %q", v, got)
		}
	}
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
// Forms that vary (wrapping, escaping) are normalised instead (normal.go). Forms may
// repeat; the caller de-duplicates.
func forms(value string) []string {
	var out []string
	var f formBuf
	f.each([]byte(value), func(b []byte) { out = append(out, string(b)) })
	return out
}
