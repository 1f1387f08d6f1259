package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
)

// patternSet holds the patterns as spans of one byte array: pattern i is
// text[start[i]:end[i]], matched for secret owner[i]. With a slice per
// pattern, the 100,000 patterns of 8,000 secrets were 100,000 pointers
// for the garbage collector to scan and a copy of every form; spans let a
// form that is a prefix of another (unpadded base64 of padded, the
// offset-0 stream form of unpadded) share its bytes, and the array grows
// without a chunk per 256 KiB.
type patternSet struct {
	text       []byte
	start, end []int32
	owner      []int32
	scratch    []byte
}

// at returns pattern i.
func (ps *patternSet) at(i int32) []byte { return ps.text[ps.start[i]:ps.end[i]] }

// add makes text[lo:hi] a pattern of secret owner, if it is MinLen bytes
// or longer.
func (ps *patternSet) add(lo, hi int, owner int32) {
	if hi-lo >= MinLen {
		ps.start = append(ps.start, int32(lo))
		ps.end = append(ps.end, int32(hi))
		ps.owner = append(ps.owner, owner)
	}
}

// addText appends b to text and makes it a pattern of owner.
func (ps *patternSet) addText(b []byte, owner int32) {
	lo := len(ps.text)
	ps.text = append(ps.text, b...)
	ps.add(lo, len(ps.text), owner)
}

// raw64 are the unpadded encodings, by alphabet: made once, not per value
// (WithPadding copies the whole Encoding).
var raw64 = [2]*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding}

// addForms adds the forms of v, without v itself, in the order forms
// lists them (forms_ref_test.go), leaving out a form that equals one added
// before it for v: the URL alphabet's base64 where it has no '+' or '/' to
// change, the unpadded base64 of a value of 3n bytes, upper-case hex
// without a letter, the escapes of a value with nothing to escape. Those
// would be dropped as duplicates (dedupe) after costing their sort.
// v must not alias text beyond its length.
func (ps *patternSet) addForms(v []byte, owner int32) {
	// Standard alphabet: padded; unpadded, its prefix; the value at
	// offset 0 of a larger stream, a prefix of that; offsets 1 and 2.
	var spans [5][2]int // padded, unpadded, offsets 0, 1, 2
	lo := len(ps.text)
	ps.text = base64.StdEncoding.AppendEncode(ps.text, v)
	spans[0] = [2]int{lo, len(ps.text)}
	spans[1] = [2]int{lo, lo + base64.RawStdEncoding.EncodedLen(len(v))}
	spans[2] = [2]int{lo, lo + 8*len(v)/6}
	for off := 1; off < 3; off++ {
		spans[2+off] = ps.offsetForm(v, off)
	}
	for k, s := range spans {
		if k == 1 && s[1] == spans[0][1] || k == 2 && s[1] == spans[1][1] {
			continue // equal to the one before
		}
		ps.add(s[0], s[1], owner)
	}
	lo = -1 // where the padded form in the URL alphabet starts
	// URL alphabet: the same characters with '-' for '+' and '_' for
	// '/'; a form without either is the standard one again. The
	// padded form is translated once, the two before it are its
	// prefixes.
	for k, s := range spans {
		if k == 1 && s[1] == spans[0][1] || k == 2 && s[1] == spans[1][1] || !hasStd62(ps.text[s[0]:s[1]]) {
			continue
		}
		if k < 3 && lo >= 0 { // the padded form is translated already
			ps.add(lo, lo+s[1]-s[0], owner)
			continue
		}
		at := len(ps.text)
		for i := s[0]; i < s[1]; i++ { // indexes: text may move as it grows
			c := ps.text[i]
			switch c {
			case '+':
				c = '-'
			case '/':
				c = '_'
			}
			ps.text = append(ps.text, c)
		}
		if k == 0 {
			lo = at
		}
		ps.add(at, len(ps.text), owner)
	}
	if !unreserved(v) {
		if q := url.QueryEscape(string(v)); q != string(v) {
			ps.addText([]byte(q), owner)
		}
		if p := url.PathEscape(string(v)); p != string(v) {
			ps.addText([]byte(p), owner)
		}
	}
	// Continuous hex, as xxd -p, od -An -tx1 with its spaces joined, or
	// printf %x print it; line breaks are the wrap normaliser's.
	lo = len(ps.text)
	ps.text = hex.AppendEncode(ps.text, v)
	hi := len(ps.text)
	ps.add(lo, hi, owner)
	letters := false
	for i := lo; i < hi; i++ {
		c := ps.text[i]
		if c >= 'a' {
			c -= 'a' - 'A'
			letters = true
		}
		ps.text = append(ps.text, c)
	}
	if letters {
		ps.add(hi, len(ps.text), owner)
	} else {
		ps.text = ps.text[:hi]
	}
}

// offsetForm appends the characters of v's base64 that are fixed when v
// starts at byte offset off (mod 3) of a larger encoded stream, and
// returns their span (empty if there are none). Base64 text of a value
// inside a larger buffer — a token in a base64-encoded JSON config, a
// Basic auth header "user:token" — starts at offset 0, 1 or 2, and the
// characters at its edges mix its bits with the neighbours'.
//
// Character c covers stream bits [6c, 6c+6); the value covers bits
// [8·off, 8·(off+len)). Zero neighbours stand in for the unknown ones:
// the kept characters do not depend on them.
func (ps *patternSet) offsetForm(v []byte, off int) [2]int {
	n := off + len(v) + 2
	if cap(ps.scratch) < n {
		ps.scratch = make([]byte, 0, 2*n)
	}
	z := ps.scratch[:n]
	clear(z)
	copy(z[off:], v)
	first := (8*off + 5) / 6
	end := 8 * (off + len(v)) / 6
	if end <= first {
		return [2]int{}
	}
	lo := len(ps.text)
	ps.text = base64.RawStdEncoding.AppendEncode(ps.text, z)
	copy(ps.text[lo:], ps.text[lo+first:lo+end])
	ps.text = ps.text[:lo+end-first]
	return [2]int{lo, len(ps.text)}
}

// hasStd62 reports whether standard base64 text holds '+' or '/', the
// two characters the URL alphabet spells differently.
func hasStd62(b []byte) bool {
	for _, c := range b {
		if c == '+' || c == '/' {
			return true
		}
	}
	return false
}

// unreserved reports whether every byte of v is one that neither
// url.QueryEscape nor url.PathEscape changes (RFC 3986 unreserved).
func unreserved(v []byte) bool {
	for _, c := range v {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~') {
			return false
		}
	}
	return true
}
