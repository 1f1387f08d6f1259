package redact

import (
	"bytes"
	"encoding/binary"
	"slices"
	"unicode/utf8"
)

// Encoded forms that are not a fixed string of the value — base64 wrapped
// at any width, percent-encoding with any choice of escaped bytes and hex
// case, JSON string escaping, shell quoting — are caught by normalising the
// stretch of output around a trigger byte and matching the result against
// the same patterns as the raw output. A family of forms is one
// normaliser:
//
//   - famWrap removes line breaks inside base64 or hex text (base64's 76
//     columns, PEM's 64, base64 -w N, xxd -p's 60);
//   - famPct decodes %XX in either hex case;
//   - famJSON decodes JSON string escapes (\" \\ \/ \n \uXXXX …);
//   - famShell undoes shell quoting: printf %q's backslashes and the two
//     ways of putting ' inside single quotes, '\” and '"'"'.
//
// Clean output holds no trigger, so it costs a few IndexByte calls per
// kilobyte and the matcher's sampled scan; the cost does not grow with the
// number of forms, because there is one literal pattern set.
//
// To give the same answer however the output is split into writes, which
// stretches are normalised must not depend on where a write began or where
// the last match ended. The stream is therefore cut into cells of grid
// bytes at fixed absolute offsets. A cell with a trigger is normalised
// over its region — the cell widened by rmax on both sides, the longest
// raw span an encoded pattern can take — from the region's own start, and
// a match found there counts if it starts inside the cell. Every span of
// at most rmax bytes lies in the region of the cell it starts in.
type family uint8

const (
	famWrap family = iota
	famPct
	famJSON
	famShell
	famQuote
	numFamilies
)

// b64 marks the bytes of the base64 alphabets (standard and URL, and '='
// padding); hex digits are among them.
var b64 = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=") {
		t[c] = true
	}
	return t
}()

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// breakLen returns the length of a line break at buf[i] that sits inside
// base64 or hex text (1 for "\n", 2 for "\r\n"), or 0. It looks at no more
// than wrapLook bytes before the break and one after it, so the answer
// depends only on the bytes around i: wrapLook alphabet bytes before the
// break and one after it. A line of prose or a log line holds a space or
// punctuation near its end, so ordinary text has few such breaks.
func breakLen(buf []byte, i int) int {
	n := 0
	switch {
	case buf[i] == '\n':
		n = 1
	case buf[i] == '\r' && i+1 < len(buf) && buf[i+1] == '\n':
		n = 2
	default:
		return 0
	}
	if i+n >= len(buf) || !b64[buf[i+n]] {
		return 0
	}
	if lineBefore(buf, i) {
		return n
	}
	return 0
}

// wrapLook is how far back breakLen looks for a line of base64.
const wrapLook = 12

// Trigger bits: which families a trigger position concerns.
const (
	bitWrap  = 1 << famWrap
	bitPct   = 1 << famPct
	bitJSON  = 1 << famJSON
	bitShell = 1 << famShell
	bitQuote = 1 << famQuote
)

// trigger is a position where a family's token begins.
type trigger struct {
	pos  int
	bits uint8
}

// findTriggers lists, in order, the positions in buf[from:] where a
// family other than famWrap would transform a token: a few IndexByte
// passes, for bytes clean output rarely holds. Line breaks are common, so
// famWrap's triggers come from the matcher's sampling instead (recorder).
func findTriggers(buf []byte, from int, out []trigger) []trigger {
	out = out[:0]
	n := len(buf)
	add := func(pos int, bits uint8) { out = append(out, trigger{pos, bits}) }
	for i := from; i < n; {
		k := bytes.IndexByte(buf[i:], '%')
		if k < 0 {
			break
		}
		q := i + k
		if q+2 < n && isHex(buf[q+1]) && isHex(buf[q+2]) {
			add(q, bitPct)
		}
		i = q + 1
	}
	for i := from; i < n; {
		k := bytes.IndexByte(buf[i:], '\\')
		if k < 0 {
			break
		}
		q := i + k
		add(q, bitJSON|bitShell)
		if q > from && buf[q-1] == '\'' && bytes.HasPrefix(buf[q+1:], []byte("''")) {
			add(q-1, bitQuote)
		}
		i = q + 1
	}
	for i := from; i < n; {
		k := bytes.Index(buf[i:], []byte(`'"'"'`))
		if k < 0 {
			break
		}
		add(i+k, bitQuote)
		i += k + 1
	}
	slices.SortFunc(out, func(a, b trigger) int { return a.pos - b.pos })
	return out
}

// scratch is the reusable memory of the normalisers: norm is the
// normalised text and start[i], end[i] the raw span (relative to the
// region) of the token norm[i] came from.
type scratch struct {
	norm       []byte
	start, end []int32
	k          int // bytes written by emit

	// The triggers of the buffer last scanned, identified by its first
	// byte, its length and its offset in the stream.
	trig     []trigger
	trigKey  *byte
	trigLen  int
	trigBase int64
	trigFrom int

	// rec collects the matcher's hints about line breaks in the buffer;
	// wrap is the breaks found from them so far (recDone hints read).
	rec     recorder
	wrap    []int
	recDone int
	merged  []trigger
}

// triggers returns the triggers of buf at or after from, computing them
// once per buffer: find is called once per match on the same buffer.
func (s *scratch) triggers(buf []byte, base int64, from int) []trigger {
	// A Writer refills the same array: it calls forget before each scan.
	if len(buf) == 0 {
		return nil
	}
	if s.trigKey != &buf[0] || s.trigLen != len(buf) || s.trigBase != base || from < s.trigFrom {
		s.trig = findTriggers(buf, from, s.trig)
		s.trigKey, s.trigLen, s.trigBase, s.trigFrom = &buf[0], len(buf), base, from
	}
	i, _ := slices.BinarySearchFunc(s.trig, from, func(t trigger, p int) int { return t.pos - p })
	if len(s.wrap) == 0 {
		return s.trig[i:]
	}
	// Merge in the line breaks, in order.
	s.merged = s.merged[:0]
	j, _ := slices.BinarySearch(s.wrap, from)
	rest, breaks := s.trig[i:], s.wrap[j:]
	for len(rest) > 0 || len(breaks) > 0 {
		switch {
		case len(breaks) == 0 || len(rest) > 0 && rest[0].pos < breaks[0]:
			s.merged = append(s.merged, rest[0])
			rest = rest[1:]
		case len(rest) > 0 && rest[0].pos == breaks[0]:
			s.merged = append(s.merged, trigger{rest[0].pos, rest[0].bits | bitWrap})
			rest, breaks = rest[1:], breaks[1:]
		default:
			s.merged = append(s.merged, trigger{breaks[0], bitWrap})
			breaks = breaks[1:]
		}
	}
	return s.merged
}

// breakAt returns where a line break that covers buf[j] begins, or -1.
func breakAt(buf []byte, j int) int {
	switch buf[j] {
	case '\n':
		if j > 0 && buf[j-1] == '\r' && breakLen(buf, j-1) > 0 {
			return j - 1
		}
		if breakLen(buf, j) > 0 {
			return j
		}
	case '\r':
		if breakLen(buf, j) > 0 {
			return j
		}
	}
	return -1
}

// readHints turns the recorder's new hints into line-break positions, and
// looks at the last window of buf, where the matcher takes no sample.
func (r *Redactor) readHints(s *scratch, buf []byte, from int) {
	n, w := len(buf), r.m.window
	addBreaks := func(lo, hi int) {
		lo, hi = max(lo, 0), min(hi, n)
		for i := lo; i < hi; {
			k := bytes.IndexByte(buf[i:hi], '\n')
			if k < 0 {
				if hi < n && buf[hi-1] == '\r' {
					if b := breakAt(buf, hi-1); b >= 0 {
						s.wrap = append(s.wrap, b)
					}
				}
				return
			}
			if b := breakAt(buf, i+k); b >= 0 {
				s.wrap = append(s.wrap, b)
			}
			i += k + 1
		}
	}
	before := len(s.wrap)
	for _, pt := range s.rec.pts[s.recDone:] {
		pos, kind := pt>>2, pt&3
		switch kind {
		case recGram:
			for j := max(pos-gram+1, 0); j <= pos+1 && j < n; j++ {
				if c := buf[j]; c == '\n' || c == '\r' {
					if b := breakAt(buf, j); b >= 0 {
						s.wrap = append(s.wrap, b)
					}
				}
			}
		case recProbe:
			addBreaks(pos-w-2, pos+w+3)
		case recExact:
			addBreaks(pos, pos+2)
		}
	}
	s.recDone = len(s.rec.pts)
	addBreaks(max(from, n-w-8), n)
	if len(s.wrap) > before {
		slices.Sort(s.wrap)
		s.wrap = slices.Compact(s.wrap)
	}
}

// forget drops the cached triggers: the buffer's bytes changed.
func (s *scratch) forget() {
	s.trigKey = nil
	s.rec.pts, s.wrap, s.recDone = s.rec.pts[:0], s.wrap[:0], 0
}

// reset makes room for up to n normalised bytes (a token is never shorter
// than what it stands for, except \uXXXX: 6 bytes for up to 3).
func (s *scratch) reset(n int) {
	if cap(s.norm) < n {
		s.norm, s.start, s.end = make([]byte, n), make([]int32, n), make([]int32, n)
	}
	s.norm, s.start, s.end = s.norm[:cap(s.norm)], s.start[:cap(s.start)], s.end[:cap(s.end)]
	s.k = 0
}

func (s *scratch) emit(c byte, from, to int) {
	k := s.k
	s.norm[k], s.start[k], s.end[k] = c, int32(from), int32(to)
	s.k = k + 1
}

func (s *scratch) done() {
	s.norm, s.start, s.end = s.norm[:s.k], s.start[:s.k], s.end[:s.k]
}

// normalise writes family f's normal form of raw[lo:cut] into s, reading
// buf around it where a token's test needs to (line breaks). Tokens are
// read greedily from lo. When open, more input follows cut, and the text
// stops before a token that cut may have split; it returns where it
// stopped (cut if it did not).
func normalise(f family, buf []byte, lo, cut int, open bool, s *scratch) int {
	s.reset(cut - lo)
	defer s.done()
	raw := buf[:cut]
	for i := lo; i < cut; {
		c := raw[i]
		if open && cut-i < tailLook && splitToken(f, raw[i:cut]) {
			return i
		}
		switch f {
		case famWrap:
			if c == '\n' || c == '\r' {
				if n := breakLen(buf, i); n > 0 && i+n <= cut {
					i += n
					continue
				}
			}
		case famPct:
			if c == '%' && i+2 < cut && isHex(raw[i+1]) && isHex(raw[i+2]) {
				s.emit(unhex(raw[i+1])<<4|unhex(raw[i+2]), i-lo, i+3-lo)
				i += 3
				continue
			}
		case famJSON:
			if c == '\\' && i+1 < cut {
				d, n := jsonEscape(raw[i:cut])
				if n > 0 {
					for _, b := range d {
						s.emit(b, i-lo, i+n-lo)
					}
					i += n
					continue
				}
			}
		case famQuote:
			if c == '\'' && bytes.HasPrefix(raw[i:cut], []byte(`'\''`)) {
				s.emit('\'', i-lo, i+4-lo)
				i += 4
				continue
			}
			if c == '\'' && bytes.HasPrefix(raw[i:cut], []byte(`'"'"'`)) {
				s.emit('\'', i-lo, i+5-lo)
				i += 5
				continue
			}
		case famShell:
			if c == '\\' && i+1 < cut {
				s.emit(raw[i+1], i-lo, i+2-lo)
				i += 2
				continue
			}
		}
		s.emit(c, i-lo, i+1-lo)
		i++
	}
	return cut
}

// splitToken reports whether t, the last bytes before an open cut, begins
// with a token of f that more input could complete or change.
func splitToken(f family, t []byte) bool {
	switch f {
	case famPct:
		return t[0] == '%' && len(t) < 3
	case famJSON:
		return t[0] == '\\' && (len(t) < 2 || t[1] == 'u' && len(t) < 6)
	case famShell:
		return t[0] == '\\' && len(t) < 2
	case famQuote:
		return t[0] == '\'' && (len(t) < 4 && bytes.HasPrefix([]byte(`'\''`), t) || len(t) < 5 && bytes.HasPrefix([]byte(`'"'"'`), t))
	}
	return false
}

// jsonEscape decodes the JSON escape at the start of b, returning the bytes
// it stands for and its length, or n == 0 when b does not start with one.
func jsonEscape(b []byte) (d []byte, n int) {
	switch b[1] {
	case '"', '\\', '/':
		return b[1:2], 2
	case 'b':
		return []byte{'\b'}, 2
	case 'f':
		return []byte{'\f'}, 2
	case 'n':
		return []byte{'\n'}, 2
	case 'r':
		return []byte{'\r'}, 2
	case 't':
		return []byte{'\t'}, 2
	case 'u':
		if len(b) < 6 || !isHex(b[2]) || !isHex(b[3]) || !isHex(b[4]) || !isHex(b[5]) {
			return nil, 0
		}
		r := rune(unhex(b[2]))<<12 | rune(unhex(b[3]))<<8 | rune(unhex(b[4]))<<4 | rune(unhex(b[5]))
		if utf8.RuneLen(r) < 0 || r >= 0xd800 && r < 0xe000 {
			return nil, 0
		}
		return utf8.AppendRune(nil, r), 6
	}
	return nil, 0
}

// tailCut returns where, among the last few bytes of buf, the earliest byte
// sits that begins a token whose end has not arrived yet ("%4", a trailing
// backslash or "\u00", a line break after base64 with nothing after it yet,
// the start of '\” or '"'"'), or len(buf) if there is none.
func tailCut(buf []byte) int {
	n := len(buf)
	for i := max(0, n-tailLook); i < n; i++ {
		t := buf[i+1:]
		switch buf[i] {
		case '%':
			if len(t) < 2 && (len(t) == 0 || isHex(t[0])) {
				return i
			}
		case '\\':
			if len(t) == 0 || t[0] == 'u' && len(t) < 5 {
				return i
			}
		case '\'':
			if len(t) < 3 && bytes.HasPrefix([]byte(`\''`), t) || len(t) < 4 && bytes.HasPrefix([]byte(`"'"'`), t) {
				return i
			}
		case '\r':
			if len(t) < 2 && (len(t) == 0 || t[0] == '\n') && lineBefore(buf, i) {
				return i
			}
		case '\n':
			if len(t) == 0 && lineBefore(buf, i) {
				return i
			}
		}
	}
	return n
}

// lineBefore reports whether the bytes before buf[i] would let a line break
// at i be one inside base64 or hex: the wrapLook bytes before it are all of
// the alphabet (breakLen's test, without the byte after). A wrap narrower
// than wrapLook columns is not undone.
func lineBefore(buf []byte, i int) bool {
	if i < wrapLook {
		return false
	}
	if i >= 16 {
		// Every byte of the base64 and hex alphabets is at least '+'
		// (0x2b): two word-sized tests for a smaller byte (a space, most
		// punctuation, a line break) among the wrapLook bytes before i
		// reject most line ends of prose and logs.
		const ones, highs = 0x0101010101010101, 0x8080808080808080
		a := binary.LittleEndian.Uint64(buf[i-8 : i])
		b := binary.LittleEndian.Uint64(buf[i-16:i-8]) | 0x7f7f7f7f // bytes before i-12 pass
		if ((a-'+'*ones)&^a|(b-'+'*ones)&^b)&highs != 0 {
			return false
		}
	}
	for j := i - wrapLook; j < i; j++ {
		if !b64[buf[j]] {
			return false
		}
	}
	return true
}

// tailLook covers the longest token: '"'"' (5 bytes) and \uXXXX (6).
const tailLook = 6

// findForms returns the leftmost-longest match with start >= from that
// needs a normaliser, among cells whose matches could start at or before
// limit, and the position from which input is undecided (len(buf) if
// none). base is buf[0]'s offset in the stream.
func (r *Redactor) findForms(s *scratch, buf []byte, base int64, from, limit int, final bool) (start, end int, id int32, hold int) {
	n := len(buf)
	start, end, id, hold = -1, -1, -1, n
	g, rmax := int64(r.grid), r.rmax
	cellOf := func(p int) int64 { return (base + int64(p)) / g }
	cut, tailCell := n, int64(-1)
	if !final {
		if cut = tailCut(buf); cut < n {
			tailCell = cellOf(max(from, n-r.grid-rmax))
		}
	}
	trs := s.triggers(buf, base, from)
	for c := cellOf(from); ; c++ {
		// Skip to the first cell a remaining trigger, or the tail,
		// concerns: trigger q is in the range of cells whose
		// [cellLo, cellLo+grid+rmax) holds it.
		next := int64(-1)
		if len(trs) > 0 {
			next = max(c, floorDiv(base+int64(trs[0].pos)-g-int64(rmax), g)+1)
		}
		if tailCell >= 0 && (next < 0 || tailCell < next) {
			next = max(c, tailCell)
		}
		if next < 0 {
			break
		}
		c = next
		cellLo := int(c*g - base)
		if cellLo > n || cellLo > limit || start >= 0 || cellLo > hold {
			break
		}
		cellHi := cellLo + r.grid
		regLo := max(0, cellLo-rmax)
		regHi := min(n, cellHi+rmax)
		tLo := max(from, cellLo)
		touches := regHi == n && !final
		regCut := regHi
		if touches {
			regCut = cut
		}
		var bits uint8
		var first, last [numFamilies]int
		for _, t := range trs {
			if t.pos >= regCut {
				break
			}
			if t.pos < tLo {
				continue
			}
			for f := range numFamilies {
				if t.bits&(1<<f) != 0 {
					if bits&(1<<f) == 0 {
						first[f] = t.pos
					}
					last[f] = t.pos
				}
			}
			bits |= t.bits
		}
		for f := range numFamilies {
			trig := bits&(1<<f) != 0
			tail := touches && cut < n && tailMayBegin(f, buf[cut:])
			if !trig && !tail {
				continue
			}
			// A match that needs f holds one of its triggers, so it lies
			// within rmax of them; the tail case reads up to the cut.
			hi := regCut
			if !tail && !(touches && last[f]+rmax+tailLook >= regCut) {
				hi = min(regCut, last[f]+rmax+tailLook)
			}
			lo := regLo
			if f == famWrap || f == famPct {
				// Tokens that do not depend on where reading began.
				lo = max(regLo, tLo-rmax)
				if trig {
					lo = max(lo, first[f]-rmax)
				} else {
					lo = max(lo, cut-rmax)
				}
			}
			regionFinal := !(touches && hi == regCut)
			if stop := normalise(f, buf, lo, hi, !regionFinal, s); stop < hi {
				hold = min(hold, stop)
			}
			i0 := 0
			for i0 < len(s.norm) && lo+int(s.start[i0]) < tLo {
				i0++
			}
			ms, me, mid, mh, ok := r.m.find(s.norm, i0, regionFinal, nil)
			switch {
			case ok:
				rs := lo + int(s.start[ms])
				if rs >= cellHi {
					break
				}
				re := lo + int(s.end[me-1])
				if start < 0 || rs < start || rs == start && re > end {
					start, end, id = rs, re, mid
				}
			case !regionFinal && mh < len(s.norm):
				hold = min(hold, lo+int(s.start[mh]))
			}
		}
		if touches && cut < n {
			hold = min(hold, cut)
		}
		// Triggers before the next cell concern no later cell.
		nextLo := cellHi
		for len(trs) > 0 && trs[0].pos < nextLo {
			trs = trs[1:]
		}
	}
	return start, end, id, hold
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// tailMayBegin reports whether the unfinished tail t could begin one of
// f's tokens.
func tailMayBegin(f family, t []byte) bool {
	switch f {
	case famWrap:
		return bytes.ContainsAny(t, "\r\n")
	case famPct:
		return bytes.IndexByte(t, '%') >= 0
	case famJSON, famShell:
		return bytes.IndexByte(t, '\\') >= 0
	}
	return bytes.IndexByte(t, '\'') >= 0
}

// find is the matcher's find widened to the normalised forms: the
// leftmost-longest match at or after from, literal or normalised, or
// where undecided input begins.
func (r *Redactor) find(s *scratch, buf []byte, base int64, from int, final bool) (start, end int, id int32, hold int, ok bool) {
	if !r.forms {
		return r.m.find(buf, from, final, nil)
	}
	s.rec.last = len(buf)
	ls, le, lid, lhold, lok := r.m.find(buf, from, final, &s.rec)
	limit := lhold
	if lok {
		limit = ls
	}
	// A broken pattern that starts at or before limit shows in the
	// samples of its first window: take those the find did not.
	r.m.sample(buf, s.rec.last+r.m.stride, limit+r.m.window+r.m.stride, &s.rec)
	r.readHints(s, buf, from)
	fs, fe, fid, fhold := r.findForms(s, buf, base, from, limit, final)
	hold = len(buf)
	if !lok && !final {
		hold = lhold
	}
	hold = min(hold, fhold)
	start, end, id = -1, -1, -1
	if lok {
		start, end, id = ls, le, lid
	}
	if fs >= 0 && (start < 0 || fs < start || fs == start && fe > end) {
		start, end, id = fs, fe, fid
	}
	if start >= 0 && (final || start < hold) {
		return start, end, id, 0, true
	}
	if final {
		return 0, 0, -1, len(buf), false
	}
	return 0, 0, -1, hold, false
}
