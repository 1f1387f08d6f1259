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
