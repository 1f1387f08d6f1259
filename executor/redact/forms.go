package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
)

// formBuf makes forms without an allocation each: every form goes into
// one arena, in chunks that are never moved, so a form handed out stays
// valid; and the scratch a form is computed in is reused. Building the
// redactor of 8,000 secrets made some 100,000 strings and copied each to
// a []byte again; that, and the garbage collector after it, was a third
// of New's time.
type formBuf struct {
	arena   []byte
	scratch []byte
}

// chunk is the arena's growth; a form longer than it gets its own.
const chunk = 256 << 10

// take returns n bytes of the arena to fill in.
func (f *formBuf) take(n int) []byte {
	if cap(f.arena)-len(f.arena) < n {
		f.arena = make([]byte, 0, max(chunk, n))
	}
	b := f.arena[len(f.arena) : len(f.arena)+n]
	f.arena = f.arena[:len(f.arena)+n]
	return b
}

// copyOf returns a copy of b in the arena.
func (f *formBuf) copyOf(b []byte) []byte {
	out := f.take(len(b))
	copy(out, b)
	return out
}

// each calls emit with value and then each of its forms, in the order
// forms lists them; the slices stay valid after each returns.
func (f *formBuf) each(v []byte, emit func([]byte)) {
	emit(f.copyOf(v))
	f.base64Forms(v, emit)
	if q := url.QueryEscape(string(v)); q != string(v) {
		emit(f.copyOf([]byte(q)))
	}
	if p := url.PathEscape(string(v)); p != string(v) {
		emit(f.copyOf([]byte(p)))
	}
	// Continuous hex, as xxd -p, od -An -tx1 with its spaces joined, or
	// printf %x print it; line breaks are the wrap normaliser's.
	h := f.take(2 * len(v))
	hex.Encode(h, v)
	emit(h)
	u := f.take(len(h))
	for i, c := range h {
		if c >= 'a' && c <= 'f' {
			c -= 'a' - 'A'
		}
		u[i] = c
	}
	emit(u)
}

// base64Forms covers a value that was encoded on its own (padded and raw)
// and one that was encoded as part of a larger buffer, e.g. a token inside a
// base64-encoded JSON config or a Basic auth header "user:token". In the
// second case the value starts at byte offset 0, 1 or 2 modulo 3 of the
// encoded stream, and the characters at its edges mix its bits with the
// neighbours' bits, so only the characters computed from the value's bits
// alone are a fixed pattern.
func (f *formBuf) base64Forms(v []byte, emit func([]byte)) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		raw := enc.WithPadding(base64.NoPadding)
		for _, e := range []*base64.Encoding{enc, raw} {
			b := f.take(e.EncodedLen(len(v)))
			e.Encode(b, v)
			emit(b)
		}
		for off := range 3 {
			// Character c covers stream bits [6c, 6c+6); the value covers
			// bits [8·off, 8·(off+len)). Zero neighbours stand in for the
			// unknown ones: the kept characters do not depend on them.
			n := off + len(v) + 2
			if cap(f.scratch) < n+raw.EncodedLen(n) {
				f.scratch = make([]byte, 0, 2*(n+raw.EncodedLen(n)))
			}
			z := f.scratch[:n]
			clear(z)
			copy(z[off:], v)
			s := f.scratch[n : n+raw.EncodedLen(n)]
			raw.Encode(s, z)
			first := (8*off + 5) / 6
			end := 8 * (off + len(v)) / 6
			if end > first {
				emit(f.copyOf(s[first:end]))
			}
		}
	}
}
