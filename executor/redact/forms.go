package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
)

// forms returns the byte strings under which value can appear in output:
// the value itself, its base64 encodings, its URL encodings and its hex.
// Forms that vary (wrapping, escaping) are normalised instead (normal.go). Forms may
// repeat; the caller de-duplicates.
func forms(value string) []string {
	out := make([]string, 0, 16)
	out = append(out, value)
	out = append(out, base64Forms([]byte(value))...)
	if q := url.QueryEscape(value); q != value {
		out = append(out, q)
	}
	if p := url.PathEscape(value); p != value {
		out = append(out, p)
	}
	// Continuous hex, as xxd -p, od -An -tx1 with its spaces joined, or
	// printf %x print it; line breaks are the wrap normaliser's.
	h := hex.EncodeToString([]byte(value))
	out = append(out, h, strings.ToUpper(h))
	return out
}

// base64Forms covers a value that was encoded on its own (padded and raw)
// and one that was encoded as part of a larger buffer, e.g. a token inside a
// base64-encoded JSON config or a Basic auth header "user:token". In the
// second case the value starts at byte offset 0, 1 or 2 modulo 3 of the
// encoded stream, and the characters at its edges mix its bits with the
// neighbours' bits, so only the characters computed from the value's bits
// alone are a fixed pattern.
func base64Forms(v []byte) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		raw := enc.WithPadding(base64.NoPadding)
		out = append(out, enc.EncodeToString(v), raw.EncodeToString(v))
		for off := range 3 {
			// Character c covers stream bits [6c, 6c+6); the value covers
			// bits [8·off, 8·(off+len)). Zero neighbours stand in for the
			// unknown ones: the kept characters do not depend on them.
			z := make([]byte, off+len(v)+2)
			copy(z[off:], v)
			s := raw.EncodeToString(z)
			first := (8*off + 5) / 6
			end := 8 * (off + len(v)) / 6
			if end > first {
				out = append(out, s[first:end])
			}
		}
	}
	return out
}
