package redact

import (
	"encoding/base64"
	"encoding/binary"
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
	// after[i] is the byte that followed pattern i in the text when it
	// was added (0 at the end): for a pattern that is a prefix of another
	// from the same place, the byte that tells them apart, which the
	// tree would otherwise read from the text in sorted order, a cache
	// miss each.
	after   []byte
	scratch []byte
}

// at returns pattern i.
func (ps *patternSet) at(i int32) []byte { return ps.text[ps.start[i]:ps.end[i]] }

// add makes text[lo:hi] a pattern of secret owner, if it is MinLen bytes
// or longer; text is the text as written so far.
func (ps *patternSet) add(text []byte, lo, hi int, owner int32) {
	if hi-lo >= MinLen {
		ps.start = append(ps.start, int32(lo))
		ps.end = append(ps.end, int32(hi))
		ps.owner = append(ps.owner, owner)
		var b byte
		if hi < len(text) {
			b = text[hi]
		}
		ps.after = append(ps.after, b)
	}
}

// addForms adds the forms of v, without v itself, in the order forms
// lists them (forms_ref_test.go), leaving out a form that equals one added
// before it for v: the URL alphabet's base64 where it has no '+' or '/' to
// change, the unpadded base64 of a value of 3n bytes, upper-case hex
// without a letter, the escapes of a value with nothing to escape. Those
// would be dropped as duplicates (dedupe) after costing their sort.
// v must not alias text beyond its length.
func (ps *patternSet) addForms(v []byte, owner int32) {
	text := ps.text
	// Standard alphabet: padded; unpadded, its prefix; the value at
	// offset 0 of a larger stream, a prefix of that; offsets 1 and 2.
	var spans [5][2]int // padded, unpadded, offsets 0, 1, 2
	lo := len(text)
	text = base64.StdEncoding.AppendEncode(text, v)
	spans[0] = [2]int{lo, len(text)}
	spans[1] = [2]int{lo, lo + base64.RawStdEncoding.EncodedLen(len(v))}
	spans[2] = [2]int{lo, lo + 8*len(v)/6}
	for off := 1; off < 3; off++ {
		text, spans[2+off] = offsetForm(text, &ps.scratch, v, off)
	}
	// Each equal to the one before it is left out.
	keep := [5]bool{true, spans[1][1] != spans[0][1], spans[2][1] != spans[1][1], true, true}
	for k, s := range spans {
		if keep[k] {
			ps.add(text, s[0], s[1], owner)
		}
	}
	// URL alphabet: the same characters with '-' for '+' and '_' for
	// '/'; a form without either is the standard one again. The padded
	// form is translated once, the two before it are its prefixes.
	url64 := -1
	for k, s := range spans {
		if !keep[k] || !hasStd62(text[s[0]:s[1]]) {
			continue
		}
		if k < 3 && url64 >= 0 {
			ps.add(text, url64, url64+s[1]-s[0], owner)
			continue
		}
		at := len(text)
		text = append(text, make([]byte, s[1]-s[0])...)
		for i, c := range text[s[0]:s[1]] {
			text[at+i] = urlAlphabet[c]
		}
		if k == 0 {
			url64 = at
		}
		ps.add(text, at, len(text), owner)
	}
	if !unreserved(v) {
		if q := url.QueryEscape(string(v)); q != string(v) {
			lo := len(text)
			text = append(text, q...)
			ps.add(text, lo, len(text), owner)
		}
		if p := url.PathEscape(string(v)); p != string(v) {
			lo := len(text)
			text = append(text, p...)
			ps.add(text, lo, len(text), owner)
		}
	}
	// Continuous hex, as xxd -p, od -An -tx1 with its spaces joined, or
	// printf %x print it; line breaks are the wrap normaliser's.
	lo = len(text)
	text = hex.AppendEncode(text, v)
	hi := len(text)
	ps.add(text, lo, hi, owner)
	text = append(text, make([]byte, hi-lo)...)
	if upperHex(text[hi:], text[lo:hi]) {
		ps.add(text, hi, len(text), owner)
	} else {
		text = text[:hi] // no letter: the same as the lower case
	}
	ps.text = text
}

// upperHex writes lower-case hex src in upper case to dst and reports
// whether it held a letter. A letter is the only byte with 0x40 set.
func upperHex(dst, src []byte) bool {
	const bit = 0x4040404040404040
	var letters uint64
	i := 0
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		m := x & bit
		letters |= m
		binary.LittleEndian.PutUint64(dst[i:], x-m>>1)
	}
	for ; i < len(src); i++ {
		c := src[i]
		m := c & 0x40
		letters |= uint64(m)
		dst[i] = c - m>>1
	}
	return letters != 0
}

// offsetForm appends to text the characters of v's base64 that are
// fixed when v starts at byte offset off (mod 3) of a larger encoded
// stream, and returns their span (empty if there are none). Base64 text
// of a value inside a larger buffer — a token in a base64-encoded JSON
// config, a Basic auth header "user:token" — starts at offset 0, 1 or 2,
// and the characters at its edges mix its bits with the neighbours'.
//
// Character c covers stream bits [6c, 6c+6); the value covers bits
// [8·off, 8·(off+len)). Zero neighbours stand in for the unknown ones:
// the kept characters do not depend on them.
func offsetForm(text []byte, scratch *[]byte, v []byte, off int) ([]byte, [2]int) {
	n := off + len(v) + 2
	if cap(*scratch) < n {
		*scratch = make([]byte, 0, 2*n)
	}
	z := (*scratch)[:n]
	clear(z)
	copy(z[off:], v)
	first := (8*off + 5) / 6
	end := 8 * (off + len(v)) / 6
	if end <= first {
		return text, [2]int{}
	}
	lo := len(text)
	text = base64.RawStdEncoding.AppendEncode(text, z)
	copy(text[lo:], text[lo+first:lo+end])
	text = text[:lo+end-first]
	return text, [2]int{lo, len(text)}
}

// hasStd62 reports whether standard base64 text holds '+' or '/', the
// two characters the URL alphabet spells differently.
func hasStd62(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 { // a word at a time: has it a zero byte?
		x := binary.LittleEndian.Uint64(b[i:])
		p, s := x^('+'*ones), x^('/'*ones)
		if ((p-ones)&^p|(s-ones)&^s)&highs != 0 {
			return true
		}
	}
	for _, c := range b[i:] {
		if c == '+' || c == '/' {
			return true
		}
	}
	return false
}

// urlAlphabet maps a character of standard base64 to the URL alphabet's.
var urlAlphabet = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	t['+'], t['/'] = '-', '_'
	return t
}()

// unreserved reports whether every byte of v is one that neither
// url.QueryEscape nor url.PathEscape changes (RFC 3986 unreserved).
func unreserved(v []byte) bool {
	for _, c := range v {
		if !isUnreserved[c] {
			return false
		}
	}
	return true
}

var isUnreserved = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~") {
		t[c] = true
	}
	return t
}()
