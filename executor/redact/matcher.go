package redact

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
)

// gram is the number of bytes hashed at a time. Four bytes load as one
// uint32 and make a chance hit of clean text rare; it is also why MinLen
// cannot go below 4.
const gram = 4

// maxWindow caps the window (see matcher). A longer window means fewer
// samples per byte but more grams in the filter and more candidate starts
// to check per hit; secrets are rarely shorter than 16 bytes, so the cap
// seldom binds.
const maxWindow = 32

// bitsPerGram sizes the bitmaps: at 64 bits per entry about 1.5% of the
// slots are set, so a chance hit is rare, and for 1,000 secrets the gram
// bitmap is 512 KiB, still inside L2.
const bitsPerGram = 64

// matcher finds the leftmost-longest occurrence of a set of patterns.
//
// Every pattern is at least window bytes long, so any occurrence covers a
// window-long stretch that is some pattern's prefix, and any window-long
// stretch contains exactly one gram ending at a multiple of stride = window
// − gram + 1 from the scan start. The scan therefore hashes one gram per
// stride and tests it against a bitmap of all grams of all pattern
// prefixes. The tests are independent of each other, so the CPU overlaps
// them; a skip loop whose next position depends on the last lookup (classic
// Wu–Manber) measured 1.8–2.6× slower, bound by load latency. On a hit, each
// start the gram could belong to is checked against a bitmap of pattern
// first grams and, if it passes, confirmed or rejected by the radix tree.
//
// An immutable matcher is safe for concurrent use.
type matcher struct {
	window int // every pattern is at least this long; gram <= window <= maxWindow
	stride int // window - gram + 1
	maxLen int // longest pattern

	grams      []uint64 // bitmap of hashed grams inside pattern prefixes
	gramsShift uint8
	firsts     []uint64 // bitmap of hashed first grams of patterns
	firstShift uint8

	tree radix
}

// newMatcher builds the matcher of distinct patterns, given them sorted
// (sortPatterns).
func newMatcher(ps *patternSet, sp sorted) *matcher {
	order, lcp := sp.order, sp.lcp
	m := &matcher{window: maxWindow}
	for i := range ps.start {
		l := int(ps.end[i] - ps.start[i])
		m.window = min(m.window, l)
		m.maxLen = max(m.maxLen, l)
	}
	m.stride = m.window - gram + 1
	m.tree = buildRadix(ps, sp)

	// Patterns with the same window-long prefix add the same grams, and
	// those with the same first gram the same first: in sorted order
	// each such run is adjacent, so counting and adding them needs no
	// map (two maps of 100,000 keys were a sixth of New's time). Of a
	// pattern whose prefix differs, the grams inside what it shares with
	// the one before are that one's, added already.
	// shared[i]: what pattern i shares with the one before it in order,
	// so the grams are added in the order the text was written (reading
	// it in sorted order was a cache miss a pattern).
	shared := make([]int32, len(order))
	prefixes, firsts := 0, 0
	for j, i := range order {
		if j > 0 {
			shared[i] = lcp[j]
		}
		if shared[i] < int32(m.window) {
			prefixes++
		}
		if shared[i] < gram {
			firsts++
		}
	}
	m.grams, m.gramsShift = newBitmap(prefixes * m.stride)
	m.firsts, m.firstShift = newBitmap(firsts)
	// Locals, not m's fields: a store into a bitmap could be a store
	// into m as far as the compiler knows, which reloaded them per gram.
	text, start, window := ps.text, ps.start, m.window
	grams, gshift := m.grams, m.gramsShift
	first, fshift := m.firsts, m.firstShift
	for i, sh := range shared {
		w := text[start[i]:][:window]
		if int(sh) < window {
			k := max(int(sh)-gram+1, 0)
			// Five grams from each eight bytes loaded.
			for ; k+8 <= window; k += 5 {
				x := binary.LittleEndian.Uint64(w[k:])
				for s := 0; s < 40; s += 8 {
					setBit(grams, gshift, uint32(x>>s))
				}
			}
			for ; k+gram <= window; k++ {
				setBit(grams, gshift, binary.LittleEndian.Uint32(w[k:]))
			}
		}
		if sh < gram {
			setBit(first, fshift, binary.LittleEndian.Uint32(w))
		}
	}
	return m
}

// sorted is the patterns in byte order, equal ones by index: order[j] is
// the j-th pattern, lcp[j] the length of the prefix it shares with the
// one before (0 for the first), head[j] its first eight bytes as a
// big-endian number (zero-padded), which the tree takes its children's
// first bytes from without reading the patterns in sorted order again.
type sorted struct {
	order, lcp []int32
	head       []uint64
}

// sortPatterns sorts the patterns. The
// first eight bytes of each, as one number, are sorted by a stable radix
// sort (eight passes of counting); only runs that agree on them are then
// compared whole. A comparison sort with bytes.Compare was a third of the
// radix tree's build for 8,000 secrets' 100,000 patterns.
func sortPatterns(ps *patternSet) sorted {
	n := len(ps.start)
	order, tmp := make([]int32, n), make([]int32, n)
	keys, tmpKeys := make([]uint64, n), make([]uint64, n)
	text := ps.text
	for i := range n {
		order[i] = int32(i)
		var k [8]byte
		copy(k[:], text[ps.start[i]:ps.end[i]])
		keys[i] = binary.BigEndian.Uint64(k[:])
	}
	// The counts of all eight bytes in one pass over the keys.
	var counts [8][257]int32
	for _, k := range keys {
		for d := range 8 {
			counts[d][(k>>(8*d))&0xff+1]++
		}
	}
	for d := range 8 {
		count := &counts[d]
		if count[(keys[0]>>(8*d))&0xff+1] == int32(n) {
			continue // every key has this byte: the pass changes nothing
		}
		for b := 1; b < 257; b++ {
			count[b] += count[b-1]
		}
		for j, k := range keys {
			b := (k >> (8 * d)) & 0xff
			tmp[count[b]], tmpKeys[count[b]] = order[j], k
			count[b]++
		}
		order, tmp = tmp, order
		keys, tmpKeys = tmpKeys, keys
	}
	start, end := ps.start, ps.end
	// Runs that agree on the first eight bytes are the forms of one value
	// mostly, and short: sorted by insertion, longer ones by pdqsort;
	// equal patterns by index. Two spans that start at the same place are a
	// prefix of each other (unpadded base64 of padded): their lengths
	// order them without reading the text.
	cmp := func(x, y int32) int {
		c := 0
		if start[x] == start[y] {
			c = int(end[x] - end[y])
		} else {
			c = bytes.Compare(text[start[x]:end[x]], text[start[y]:end[y]])
		}
		if c == 0 {
			c = int(x - y)
		}
		return c
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && keys[j] == keys[i] {
			j++
		}
		if j-i > 12 { // values that share a prefix: a URL, a key's kind
			slices.SortFunc(order[i:j], cmp)
			i = j
			continue
		}
		for a := i + 1; a < j; a++ {
			x := order[a]
			b := a
			for ; b > i && cmp(order[b-1], x) > 0; b-- {
				order[b] = order[b-1]
			}
			order[b] = x
		}
		i = j
	}
	// tmp is free now: it holds the prefix lengths.
	lcp := tmp
	lcp[0] = 0
	for j := 1; j < n; j++ {
		l := bits.LeadingZeros64(keys[j-1]^keys[j]) / 8
		if l >= MinLen { // a shorter pattern's zero padding may agree
			x, y := order[j-1], order[j]
			lx, ly := int(end[x]-start[x]), int(end[y]-start[y])
			switch {
			case l == 8 && start[x] == start[y]:
				l = lx // a prefix of the other
			case l == 8 && lx > 8 && ly > 8:
				l += commonPrefix(text[start[x]+8:end[x]], text[start[y]+8:end[y]])
			}
			l = min(l, lx, ly)
		}
		lcp[j] = int32(l)
	}
	return sorted{order, lcp, keys}
}

// newBitmap returns a bitmap for entries hashed grams and the shift that
// turns a 32-bit product into a bit index.
func newBitmap(entries int) ([]uint64, uint8) {
	b := min(max(bits.Len(uint(entries*bitsPerGram)), 12), 23)
	return make([]uint64, 1<<b/64), uint8(32 - b)
}

func hashGram(g uint32, shift uint8) uint32 { return (g * 0x9E3779B1) >> shift }

func setBit(bm []uint64, shift uint8, g uint32) {
	h := hashGram(g, shift)
	bm[h/64] |= 1 << (h % 64)
}

func hasBit(bm []uint64, shift uint8, g uint32) bool {
	h := hashGram(g, shift)
	return bm[h/64]&(1<<(h%64)) != 0
}

// find returns the leftmost-longest match in buf that starts at or after
// from. With ok false there is none, and hold is where undecided input
// begins: buf[hold:] is a proper prefix of some pattern, so the caller must
// keep it until more input arrives (len(buf) when nothing is undecided). A
// final call treats buf as the end of input and never holds anything.
func (m *matcher) find(buf []byte, from int, final bool, rec *recorder) (start, end int, id int32, hold int, ok bool) {
	n := len(buf)
	w, stride := m.window, m.stride
	pos := from + w - 1 // the gram buf[pos-3:pos+1] samples starts pos-w+1 .. pos-3
	for ; pos < n; pos += stride {
		g := binary.LittleEndian.Uint32(buf[pos-gram+1:])
		if !hasBit(m.grams, m.gramsShift, g) {
			if rec != nil && hasControl(g) {
				rec.add(pos, recGram)
			}
			continue
		}
		for p := pos - w + 1; p <= pos-gram+1; p++ {
			if !hasBit(m.firsts, m.firstShift, binary.LittleEndian.Uint32(buf[p:])) {
				continue
			}
			l, id, live, depth := m.tree.walk(buf[p:])
			if live && !final {
				rec.stop(pos)
				return 0, 0, -1, p, false
			}
			if l > 0 {
				rec.stop(pos)
				return p, p + l, id, 0, true
			}
			if rec != nil && p+depth < n && (buf[p+depth] == '\n' || buf[p+depth] == '\r') {
				rec.add(p+depth, recExact) // a pattern's prefix ran into a line break
			}
		}
		if rec != nil {
			rec.add(pos, recProbe)
		}
	}
	rec.stop(pos)
	if final {
		return 0, 0, -1, n, false
	}
	// Starts not yet sampled are too close to the end to hold a whole
	// pattern; the first of them that could still begin one is held.
	for p := max(from, pos-stride-gram+2); p < n; p++ {
		if n-p >= gram && !hasBit(m.firsts, m.firstShift, binary.LittleEndian.Uint32(buf[p:])) {
			continue
		}
		if m.tree.root[buf[p]] >= 0 && m.tree.isPrefix(buf[p:]) {
			return 0, 0, -1, p, false
		}
	}
	return 0, 0, -1, n, false
}

// radix is a path-compressed trie of the patterns. Most secrets share no
// prefix beyond a few bytes, so a path soon becomes a single edge that is
// compared with one bytes.Equal instead of one node per byte.
//
// Its nodes hold no pointers, only indexes (a label is a span of the
// patterns' text, a node's children a span of keys and kids), so the garbage
// collector never scans them: with slices in every node, the 200,000
// nodes of 8,000 secrets cost a build as much in scanning and write
// barriers as in building.
type radix struct {
	nodes []rnode
	root  [256]int32 // child of the (empty) root for each first byte, -1 if none
	text  []byte     // the labels' text (patternSet.text)
	keys  []byte     // first label byte of each child, parallel to kids
	kids  []int32    // child node indices
}

type rnode struct {
	lo, hi int32 // edge label from the parent: text[lo:hi]
	id     int32 // pattern ending at this node, -1 if none
	at, n  int32 // its children: keys[at:at+n], kids[at:at+n]
}

func (t *radix) label(nd *rnode) []byte { return t.text[nd.lo:nd.hi] }

func buildRadix(ps *patternSet, sp sorted) radix {
	order := sp.order
	// A path-compressed trie has at most two nodes a pattern, and the
	// forms of 8,000 secrets make about 1.3; growing the slice from
	// nothing instead copied every node again and again, which was most
	// of New. The children's keys and indexes of every node are cut from
	// two shared arrays of that size too, rather than grown node by node.
	size := len(order) + len(order)/2 + 16
	b := radixBuilder{
		radix: radix{
			nodes: make([]rnode, 0, size),
			text:  ps.text,
			keys:  make([]byte, 0, size),
			kids:  make([]int32, 0, size),
		},
		ps: ps, sorted: sp,
	}
	for i := range b.root {
		b.root[i] = -1
	}
	for i := 0; i < len(order); {
		j := b.run(i, len(order), 0)
		b.root[sp.head[i]>>56] = b.build(i, j, 0)
		i = j
	}
	return b.radix
}

// radixBuilder builds a radix from sorted, distinct patterns and the
// prefix each shares with the one before it: the prefix a run of them
// shares is the least of those inside it, and it splits into children
// where that least one occurs. Nothing is compared again.
type radixBuilder struct {
	radix
	ps *patternSet
	sorted
	bounds []int32 // where each open node's children begin, a stack
}

// run returns the end of the run of sorted patterns, from i and before
// end, that share more than depth bytes with order[i].
func (t *radixBuilder) run(i, end, depth int) int {
	j := i + 1
	for j < end && int(t.lcp[j]) > depth {
		j++
	}
	return j
}

// build adds the node for the sorted patterns order[g0:g1], which agree
// on their first depth+1 bytes, and returns its index. One pass over the
// prefix lengths inside the group finds the least and where it occurs,
// which is where the children begin.
func (t *radixBuilder) build(g0, g1, depth int) int32 {
	first := t.order[g0]
	fs := int(t.ps.start[first])
	flen := int(t.ps.end[first]) - fs
	l := flen
	mark := len(t.bounds)
	for k := g0 + 1; k < g1; k++ {
		x := int(t.lcp[k])
		if x < l {
			l = x
			t.bounds = t.bounds[:mark]
		}
		if x == l {
			t.bounds = append(t.bounds, int32(k))
		}
	}
	idx := int32(len(t.nodes))
	t.nodes = append(t.nodes, rnode{lo: int32(fs + depth), hi: int32(fs + l), id: -1})
	if flen == l { // sorted first, being a prefix of the rest
		// The next one shares all of it, so the children begin at the
		// first bound.
		t.nodes[idx].id = first
	} else {
		t.bounds = append(t.bounds, 0)
		copy(t.bounds[mark+1:], t.bounds[mark:])
		t.bounds[mark] = int32(g0)
	}
	end := len(t.bounds)
	n := end - mark
	if n == 0 {
		return idx
	}
	// The children's places are taken before the children's own.
	at := len(t.keys)
	t.keys = append(t.keys, make([]byte, n)...)
	t.kids = append(t.kids, make([]int32, n)...)
	t.nodes[idx].at, t.nodes[idx].n = int32(at), int32(n)
	for c := range n {
		i, j := int(t.bounds[mark+c]), g1
		if mark+c+1 < end {
			j = int(t.bounds[mark+c+1])
		}
		switch {
		case l < 8:
			t.keys[at+c] = byte(t.head[i] >> (56 - 8*l))
		case l == flen && t.ps.start[t.order[i]] == int32(fs):
			// first is a prefix of this child's patterns, written at
			// the same place: the byte after it tells them apart.
			t.keys[at+c] = t.ps.after[first]
		default:
			t.keys[at+c] = t.text[int(t.ps.start[t.order[i]])+l]
		}
		kid := t.build(i, j, l)
		t.kids[at+c] = kid
		t.bounds = t.bounds[:end] // what the child's own took
	}
	t.bounds = t.bounds[:mark]
	return idx
}

// longest returns the length and id of the longest pattern that is a prefix
// of text (l == 0 if none), and live: text ended while still on the path of
// a longer pattern, so more input could yield a longer match.
func (t *radix) longest(text []byte) (l int, id int32, live bool) {
	l, id, live, _ = t.walk(text)
	return l, id, live
}

// walk is longest that also says how far text followed the tree: text
// [:depth] is a prefix of some pattern and text[depth] leaves every one.
func (t *radix) walk(text []byte) (l int, id int32, live bool, depth int) {
	id = -1
	if len(text) == 0 {
		return 0, -1, false, 0
	}
	ni := t.root[text[0]]
	for ni >= 0 {
		nd := &t.nodes[ni]
		label := t.label(nd)
		rest := text[depth:]
		if len(rest) < len(label) {
			return l, id, bytes.Equal(rest, label[:len(rest)]), depth + commonPrefix(rest, label)
		}
		if !bytes.Equal(rest[:len(label)], label) {
			return l, id, false, depth + commonPrefix(rest, label)
		}
		depth += len(label)
		if nd.id >= 0 {
			l, id = depth, nd.id
		}
		if depth == len(text) {
			return l, id, nd.n > 0, depth
		}
		k := bytes.IndexByte(t.keys[nd.at:nd.at+nd.n], text[depth])
		if k < 0 {
			return l, id, false, depth
		}
		ni = t.kids[int(nd.at)+k]
	}
	return l, id, false, depth
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 { // a word at a time: forms share 50 bytes
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// hasControl reports whether a gram holds \n or \r: the has-zero-byte
// test on g with each of them xored out.
func hasControl(g uint32) bool {
	n, r := g^0x0a0a0a0a, g^0x0d0d0d0d
	return ((n-0x01010101)&^n|(r-0x01010101)&^r)&0x80808080 != 0
}

// A recorder collects, while the matcher samples raw output, the places a
// line break may sit inside an encoded pattern (recorded for the wrap
// normaliser, which then tests each one): a sampled gram holding a control
// byte, a gram hit that decided nothing (a break may be within a window of
// it), and a pattern prefix that ran into a break. Every occurrence of a
// pattern broken by line breaks has, within its first window bytes, a
// sampled gram that either holds a break or is a gram of the pattern's
// first window, so one of these finds it; clean output costs one test per
// sampled gram.
type recorder struct {
	pts  []int // pos<<2 | kind
	last int   // the end of the last gram sampled
}

const (
	recGram  = iota // the gram ending at pos holds a control byte
	recProbe        // a gram hit at pos: look within a window around it
	recExact        // a break may begin at pos
)

func (r *recorder) add(pos, kind int) { r.pts = append(r.pts, pos<<2|kind) }

func (r *recorder) stop(pos int) {
	if r != nil {
		r.last = pos
	}
}

// sample records, without deciding any match, the grams ending at pos,
// pos+stride, … below end: the find that stopped at a match sampled no
// further, but a broken pattern starting before that match may need it.
func (m *matcher) sample(buf []byte, pos, end int, rec *recorder) {
	for ; pos < min(end, len(buf)); pos += m.stride {
		g := binary.LittleEndian.Uint32(buf[pos-gram+1:])
		switch {
		case hasBit(m.grams, m.gramsShift, g):
			rec.add(pos, recProbe)
		case hasControl(g):
			rec.add(pos, recGram)
		}
	}
}

// isPrefix reports whether text is a proper prefix of some pattern.
func (t *radix) isPrefix(text []byte) bool {
	_, _, live := t.longest(text)
	return live
}
