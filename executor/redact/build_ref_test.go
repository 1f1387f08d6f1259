package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"testing"
)

// This file keeps the redactor's build as it was before it wrote its
// patterns into one array of spans (build.go): the oracle the build must
// equal, pattern for pattern, bitmap for bitmap and walk for walk
// (TestBuildEqualsReference).

// refRedactor is what the reference build made.
type refRedactor struct {
	m               *refMatcher
	placeholders    [][]byte
	secrets         int
	rmax, grid, ctx int
}

func refBuild(secrets []Secret) (r refRedactor) {
	longest := 0
	// About fourteen forms a value, written into one arena (refFormBuf) and
	// sized up front; one placeholder shared by all forms of a secret.
	patterns := make([][]byte, 0, 14*len(secrets))
	owner := make([]int32, 0, 14*len(secrets))
	add := func(form []byte, i int) {
		if len(form) >= MinLen {
			patterns = append(patterns, form)
			owner = append(owner, int32(i))
		}
	}
	var fb refFormBuf
	// Literals first, so they take precedence over a colliding encoding
	// (of duplicates, the one added first is kept: refDedupe).
	for i, s := range secrets {
		add(fb.copyOf([]byte(s.Value)), i)
	}
	for i, s := range secrets {
		if len(s.Value) < MinLen {
			continue
		}
		r.secrets++
		longest = max(longest, len(s.Value))
		first := true
		fb.each([]byte(s.Value), func(f []byte) {
			if first { // the value itself, added above
				first = false
				return
			}
			add(f, i)
		})
	}
	if len(patterns) > 0 {
		var order []int32
		patterns, owner, order = refDedupe(patterns, owner)
		holders := make([][]byte, len(secrets))
		r.placeholders = make([][]byte, len(patterns))
		for id, i := range owner {
			if holders[i] == nil {
				holders[i] = []byte("[REDACTED:" + secrets[i].Name + "]")
			}
			r.placeholders[id] = holders[i]
		}
		r.m = refNewMatcher(patterns, order)
	}
	// The widest encoding looked for is percent-encoding every byte (3×)
	// or hex wrapped at a few columns; 4× covers them.
	r.rmax = 4*longest + 16
	r.grid = max(3*r.rmax, 1024)
	r.ctx = r.grid + r.rmax + wrapLook + tailLook
	return r
}

func refDedupe(patterns [][]byte, owner []int32) ([][]byte, []int32, []int32) {
	order := refSortPatterns(patterns)
	drop := make([]bool, len(patterns))
	for j := 1; j < len(order); j++ {
		// Equal patterns are adjacent, the earliest first (the sort's
		// last key is the index).
		if bytes.Equal(patterns[order[j]], patterns[order[j-1]]) {
			drop[order[j]] = true
		}
	}
	renum := make([]int32, len(patterns))
	n := int32(0)
	for i := range patterns {
		if !drop[i] {
			renum[i] = n
			patterns[n], owner[n] = patterns[i], owner[i]
			n++
		}
	}
	kept := order[:0]
	for _, i := range order {
		if !drop[i] {
			kept = append(kept, renum[i])
		}
	}
	return patterns[:n], owner[:n], kept
}

type refMatcher struct {
	window int // every pattern is at least this long; gram <= window <= maxWindow
	stride int // window - gram + 1
	maxLen int // longest pattern

	grams      []uint64 // bitmap of hashed grams inside pattern prefixes
	gramsShift uint8
	firsts     []uint64 // bitmap of hashed first grams of patterns
	firstShift uint8

	tree refRadix
}

func refNewMatcher(patterns [][]byte, order []int32) *refMatcher {
	m := &refMatcher{window: maxWindow}
	for _, p := range patterns {
		m.window = min(m.window, len(p))
		m.maxLen = max(m.maxLen, len(p))
	}
	m.stride = m.window - gram + 1
	m.tree = refBuildRadix(patterns, order)

	// Patterns with the same window-long prefix add the same grams, and
	// those with the same first gram the same first: in sorted order
	// each such run is adjacent, so counting and adding them needs no
	// map (two maps of 100,000 keys were a sixth of New's time).
	// shared[j]: how many of its first window bytes pattern order[j]
	// shares with the one before it.
	shared := make([]uint8, len(order))
	prefixes, firsts := 0, 0
	for j, i := range order {
		if j > 0 {
			shared[j] = uint8(commonPrefix(patterns[i][:m.window], patterns[order[j-1]][:m.window]))
		}
		if j == 0 || int(shared[j]) < m.window {
			prefixes++
		}
		if j == 0 || shared[j] < gram {
			firsts++
		}
	}
	m.grams, m.gramsShift = newBitmap(prefixes * m.stride)
	m.firsts, m.firstShift = newBitmap(firsts)
	for j, i := range order {
		p := patterns[i]
		if j == 0 || int(shared[j]) < m.window {
			for k := 0; k+gram <= m.window; k++ {
				setBit(m.grams, m.gramsShift, binary.LittleEndian.Uint32(p[k:]))
			}
		}
		if j == 0 || shared[j] < gram {
			setBit(m.firsts, m.firstShift, binary.LittleEndian.Uint32(p))
		}
	}
	return m
}

func refSortPatterns(patterns [][]byte) []int32 {
	n := len(patterns)
	order, tmp := make([]int32, n), make([]int32, n)
	keys, tmpKeys := make([]uint64, n), make([]uint64, n)
	for i, p := range patterns {
		order[i] = int32(i)
		var k [8]byte
		copy(k[:], p)
		keys[i] = binary.BigEndian.Uint64(k[:])
	}
	for shift := 0; shift < 64; shift += 8 {
		var count [257]int
		for _, k := range keys {
			count[(k>>shift)&0xff+1]++
		}
		if count[(keys[0]>>shift)&0xff+1] == n {
			continue // every key has this byte: the pass changes nothing
		}
		for b := 1; b < 257; b++ {
			count[b] += count[b-1]
		}
		for j, k := range keys {
			b := (k >> shift) & 0xff
			tmp[count[b]], tmpKeys[count[b]] = order[j], k
			count[b]++
		}
		order, tmp = tmp, order
		keys, tmpKeys = tmpKeys, keys
	}
	for i := 0; i < n; {
		j := i + 1
		for j < n && keys[j] == keys[i] {
			j++
		}
		if j-i > 1 { // stable: equal patterns stay in index order
			slices.SortStableFunc(order[i:j], func(a, b int32) int { return bytes.Compare(patterns[a], patterns[b]) })
		}
		i = j
	}
	return order
}

type refRadix struct {
	nodes    []refRnode
	root     [256]int32 // child of the (empty) root for each first byte, -1 if none
	patterns [][]byte   // the labels' text
	keys     []byte     // first label byte of each child, parallel to kids
	kids     []int32    // child node indices
}

type refRnode struct {
	pat, lo, hi int32 // edge label from the parent: patterns[pat][lo:hi]
	id          int32 // pattern ending at this node, -1 if none
	at, n       int32 // its children: keys[at:at+n], kids[at:at+n]
}

func (t *refRadix) label(nd *refRnode) []byte { return t.patterns[nd.pat][nd.lo:nd.hi] }

func refBuildRadix(patterns [][]byte, order []int32) refRadix {
	// A path-compressed trie has at most two nodes a pattern; growing the
	// slice instead copied every node (and its pointers) again and again:
	// with 8,000 secrets (about 80,000 patterns) that was most of New.
	// The children's keys and indexes of every node are cut from two
	// shared arrays of that size too, rather than grown node by node.
	b := refRadixBuilder{refRadix{
		nodes:    make([]refRnode, 0, 2*len(patterns)),
		patterns: patterns,
		keys:     make([]byte, 0, 2*len(patterns)),
		kids:     make([]int32, 0, 2*len(patterns)),
	}}
	for i := range b.root {
		b.root[i] = -1
	}
	for i := 0; i < len(order); {
		j := refRunByByte(patterns, order, i, 0)
		b.root[patterns[order[i]][0]] = b.build(order[i:j], 0)
		i = j
	}
	return b.refRadix
}

type refRadixBuilder struct {
	refRadix
}

func (t *refRadixBuilder) build(group []int32, depth int) int32 {
	patterns := t.patterns
	first, last := patterns[group[0]], patterns[group[len(group)-1]]
	lcp := depth + 1
	for lcp < len(first) && lcp < len(last) && first[lcp] == last[lcp] {
		lcp++
	}
	idx := int32(len(t.nodes))
	t.nodes = append(t.nodes, refRnode{pat: group[0], lo: int32(depth), hi: int32(lcp), id: -1})
	rest := group
	if len(first) == lcp { // sorted first, being a prefix of the rest
		t.nodes[idx].id = group[0]
		rest = group[1:]
	}
	n := 0
	for i := 0; i < len(rest); i = refRunByByte(patterns, rest, i, lcp) {
		n++
	}
	if n == 0 {
		return idx
	}
	// The children's places are taken before the children's own.
	at := len(t.keys)
	for range n {
		t.keys, t.kids = append(t.keys, 0), append(t.kids, 0)
	}
	t.nodes[idx].at, t.nodes[idx].n = int32(at), int32(n)
	for i, k := 0, at; i < len(rest); k++ {
		j := refRunByByte(patterns, rest, i, lcp)
		t.keys[k] = patterns[rest[i]][lcp]
		kid := t.build(rest[i:j], lcp)
		t.kids[k] = kid
		i = j
	}
	return idx
}

func refRunByByte(patterns [][]byte, sorted []int32, i, depth int) int {
	c := patterns[sorted[i]][depth]
	j := i + 1
	for j < len(sorted) && patterns[sorted[j]][depth] == c {
		j++
	}
	return j
}

func (t *refRadix) walk(text []byte) (l int, id int32, live bool, depth int) {
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

type refFormBuf struct {
	arena   []byte
	scratch []byte
}

func (f *refFormBuf) take(n int) []byte {
	if cap(f.arena)-len(f.arena) < n {
		f.arena = make([]byte, 0, max(refChunk, n))
	}
	b := f.arena[len(f.arena) : len(f.arena)+n]
	f.arena = f.arena[:len(f.arena)+n]
	return b
}

func (f *refFormBuf) copyOf(b []byte) []byte {
	out := f.take(len(b))
	copy(out, b)
	return out
}

func (f *refFormBuf) each(v []byte, emit func([]byte)) {
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

func (f *refFormBuf) base64Forms(v []byte, emit func([]byte)) {
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

// refChunk is the arena's growth; a form longer than it gets its own.
const refChunk = 256 << 10

// TestBuildEqualsReference builds redactors from sets of secrets that
// share values and forms, hold short, empty, binary and escapable values,
// and compares every part the scan reads with the reference build's:
// counts, placeholders by pattern id, the two bitmaps, and the radix tree
// node by node (its labels' text, ids and children), and walks both
// trees over each pattern and variations of it.
func TestBuildEqualsReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 8))
	randValue := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			if alphabet == "" {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	sets := map[string][]Secret{"none": nil, "bench 1000": benchSecrets(1000)}
	var api []Secret
	for i := range 2000 {
		api = append(api, Secret{fmt.Sprintf("API_%d", i), randValue(alnum, 40)})
	}
	sets["alnum 40"] = api
	var mixed []Secret
	for i := range 600 {
		var v string
		switch i % 8 {
		case 0:
			v = randValue("", rng.IntN(70)) // binary, any length
		case 1:
			v = randValue(alnum+"+/=-_ %@&?:;,.~'\"\\", rng.IntN(50))
		case 2:
			v = randValue("ab", 3+rng.IntN(10)) // short, repeating
		case 3:
			if len(mixed) > 0 { // another's value, or one of its forms
				f := forms(mixed[rng.IntN(len(mixed))].Value)
				v = f[rng.IntN(len(f))]
			}
		case 4:
			v = randValue("0123456789", 3*(1+rng.IntN(12))) // 3n bytes, hex without letters
		default:
			v = randValue(alnum+"-_", 4+rng.IntN(60))
		}
		mixed = append(mixed, Secret{fmt.Sprintf("M_%d", i%450), v}) // names repeat too
	}
	sets["mixed"] = mixed
	var hooks []Secret // a long shared prefix: runs of equal first bytes
	for i := range 300 {
		hooks = append(hooks, Secret{fmt.Sprintf("HOOK_%d", i), "https://hooks.example.com/services/T0001/" + randValue(alnum, 24)})
	}
	sets["shared prefix"] = hooks
	for name, secrets := range sets {
		ref := refBuild(secrets)
		r := build(secrets, true)
		if r.secrets != ref.secrets || r.rmax != ref.rmax || r.grid != ref.grid || r.ctx != ref.ctx {
			t.Fatalf("%s: sizes differ", name)
		}
		if (ref.m == nil) != (r.m == nil) || r.Len() != len(ref.placeholders) {
			t.Fatalf("%s: %d patterns, want %d", name, r.Len(), len(ref.placeholders))
		}
		if ref.m == nil {
			continue
		}
		for id := range ref.placeholders {
			if !bytes.Equal(r.placeholder(int32(id)), ref.placeholders[id]) {
				t.Fatalf("%s: placeholder of pattern %d is %q, want %q", name, id, r.placeholder(int32(id)), ref.placeholders[id])
			}
		}
		m, rm := r.m, ref.m
		if m.window != rm.window || m.stride != rm.stride || m.maxLen != rm.maxLen ||
			m.gramsShift != rm.gramsShift || m.firstShift != rm.firstShift ||
			!slices.Equal(m.grams, rm.grams) || !slices.Equal(m.firsts, rm.firsts) {
			t.Fatalf("%s: bitmaps differ", name)
		}
		if len(m.tree.nodes) != len(rm.tree.nodes) || m.tree.root != rm.tree.root ||
			!bytes.Equal(m.tree.keys, rm.tree.keys) || !slices.Equal(m.tree.kids, rm.tree.kids) {
			t.Fatalf("%s: trees differ: %d nodes, want %d", name, len(m.tree.nodes), len(rm.tree.nodes))
		}
		for i := range m.tree.nodes {
			nd, rn := &m.tree.nodes[i], &rm.tree.nodes[i]
			if !bytes.Equal(m.tree.label(nd), rm.tree.label(rn)) || nd.id != rn.id || nd.at != rn.at || nd.n != rn.n {
				t.Fatalf("%s: node %d differs", name, i)
			}
		}
		for id, p := range rm.tree.patterns {
			probes := [][]byte{p, p[:rng.IntN(len(p))], append(slices.Clip(p), randValue(alnum, 5)...)}
			q := slices.Clone(p)
			q[rng.IntN(len(q))] ^= byte(1 + rng.IntN(255))
			probes = append(probes, q)
			for _, x := range probes {
				l, i, live, d := m.tree.walk(x)
				rl, ri, rlive, rd := rm.tree.walk(x)
				if l != rl || i != ri || live != rlive || d != rd {
					t.Fatalf("%s: walk of pattern %d's probe differs", name, id)
				}
			}
			if l, i, _, _ := m.tree.walk(p); l != len(p) || i != int32(id) {
				t.Fatalf("%s: pattern %d not found", name, id)
			}
		}
	}
}
