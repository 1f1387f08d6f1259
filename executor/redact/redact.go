package redact

import (
	"fmt"
	"log/slog"
	"sync"
)

// MinLen is the shortest value, and the shortest encoded form of a value,
// that is matched; shorter ones are silently skipped.
//
// Four bytes is the floor because below it a "secret" is a word fragment
// ("on", "123", "key") that occurs everywhere: redacting it would shred
// ordinary output, and the pattern of placeholders would itself spell the
// value out. Four random bytes occur by chance about once in 4 GiB of random
// output. It is also the gram the skip loop hashes, so the matcher needs it.
// Values of four to seven bytes still over-redact ordinary text now and then;
// that errs on the safe side.
const MinLen = 4

// Secret is one vault entry to scrub. Name is shown in the placeholder,
// Value never is.
type Secret struct{ Name, Value string }

// Format prints only the name, so a Secret passed to fmt or a logger by
// mistake does not disclose its value.
func (s Secret) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "redact.Secret{Name: %q}", s.Name)
}

// LogValue keeps the value out of slog output, JSON handlers included.
func (s Secret) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", s.Name))
}

// Redactor replaces secret values in output with "[REDACTED:NAME]".
//
// A Redactor is immutable after New and safe for concurrent use: String,
// Bytes and any number of Writers (one goroutine per Writer) may run at
// once. A nil Redactor, or one built from no matchable values, passes bytes
// through unchanged.
//
// New does not build the matcher: the first text that could hold a
// secret does (see lazy). Every session made one at start, before its
// first byte, and with 8,000 secrets that build (their ~110,000 forms
// sorted into a tree) was most of the start-up; a run whose output is
// empty or shorter than every secret never needs it.
type Redactor struct {
	lazy

	m        *matcher
	owner    []int32 // the secret of each pattern, by pattern id
	holders  []byte  // the secrets' placeholders, secret i's at holderAt[i:i+2]
	holderAt []int32
	secrets  int

	// forms turns on the normalised forms (normal.go); rmax is the
	// longest raw span an encoded pattern is looked for in, grid the
	// cell size, ctx the bytes a Writer keeps before undecided input.
	forms           bool
	rmax, grid, ctx int
}

// New builds a redactor for secrets.
//
// Each value is matched literally, and also in the forms it takes in
// output: base64 with the standard and URL alphabets, padded and unpadded;
// the three alignments a value takes inside a larger base64 stream (at byte
// offset 0, 1 or 2 mod 3, without the edge characters that depend on the
// neighbouring bytes); and url.QueryEscape and url.PathEscape when they
// differ from the value. Values and forms shorter than MinLen are not
// matched. Where matches overlap, the one starting earliest wins, and of
// those the longest. When two secrets share a value or a form, the first
// in secrets names it, and a literal value wins over another's encoding.
func New(secrets []Secret) *Redactor {
	return deferred(func() []Secret { return secrets }, shortest(secrets), true)
}

// lazy defers a Redactor's build to the first text that could hold a
// pattern. Every pattern is a value of at least MinLen bytes or a form of
// one, and no form is shorter than its value (base64, hex and escapes
// only lengthen it; the part of a value's base64 that depends on its bits
// alone is at least as long as the value from four bytes up), and the
// normalisers only ever shrink a stretch of output (they remove breaks,
// decode escapes): so output shorter than the shortest value is left as
// it is without building anything.
type lazy struct {
	once     sync.Once
	secrets  func() []Secret // what to build from; nil once built
	minText  int             // the shortest value of MinLen bytes or more
	hasValue bool            // some value is MinLen bytes or more
}

// deferred is a Redactor built from secrets() at its first use; minText
// is the length of the shortest value that will be matched (0: none will).
func deferred(secrets func() []Secret, minText int, withForms bool) *Redactor {
	r := &Redactor{forms: withForms}
	r.lazy.secrets, r.lazy.minText, r.lazy.hasValue = secrets, minText, minText > 0
	if !r.lazy.hasValue {
		r.lazy.once.Do(func() { r.lazy.secrets = nil; r.init(nil) }) // nothing to match
	}
	return r
}

// shortest is the length of the shortest value of MinLen bytes or more (0:
// there is none).
func shortest(secrets []Secret) int {
	n := 0
	for _, s := range secrets {
		if l := len(s.Value); l >= MinLen && (n == 0 || l < n) {
			n = l
		}
	}
	return n
}

// ready builds the matcher if that has not happened yet. Every method
// that reads the built fields calls it first (sync.Once orders the build
// before their reads).
func (r *Redactor) ready() {
	r.lazy.once.Do(func() {
		secrets := r.lazy.secrets()
		r.lazy.secrets = nil
		r.init(secrets)
	})
}

// mayHold reports whether a text of n bytes could hold a pattern; false
// means it needs no build and no scan.
func (r *Redactor) mayHold(n int) bool {
	return r != nil && r.lazy.hasValue && n >= r.lazy.minText
}

// init builds the matcher of secrets into r.
func (r *Redactor) init(secrets []Secret) {
	longest, size, n := 0, 0, 0
	for _, s := range secrets {
		if l := len(s.Value); l >= MinLen {
			// The value, padded base64, two more of its length, hex twice.
			longest, size, n = max(longest, l), size+9*l+16, n+1
		}
	}
	if n > 0 {
		// About eight forms a value (fourteen before duplicates are left
		// out), sized up front.
		ps := patternSet{
			text:  make([]byte, 0, size),
			start: make([]int32, 0, 9*n),
			end:   make([]int32, 0, 9*n),
			owner: make([]int32, 0, 9*n),
			after: make([]byte, 0, 9*n),
		}
		// Literals first, so they take precedence over a colliding
		// encoding (of duplicates, the one added first is kept: dedupe).
		lit := make([]int32, len(secrets)+1)
		for i, s := range secrets {
			lit[i] = int32(len(ps.text))
			if len(s.Value) >= MinLen {
				ps.text = append(ps.text, s.Value...)
				ps.add(ps.text, int(lit[i]), len(ps.text), int32(i))
			}
		}
		lit[len(secrets)] = int32(len(ps.text))
		for i := range secrets {
			if v := ps.text[lit[i]:lit[i+1]]; len(v) > 0 {
				r.secrets++
				ps.addForms(v, int32(i))
			}
		}
		sp := dedupe(&ps)
		r.owner = ps.owner
		// One placeholder a secret, shared by its forms, all in one array.
		r.holderAt = make([]int32, len(secrets)+1)
		names := 0
		for _, s := range secrets {
			names += len("[REDACTED:]") + len(s.Name)
		}
		r.holders = make([]byte, 0, names)
		for i, s := range secrets {
			r.holderAt[i] = int32(len(r.holders))
			r.holders = append(r.holders, "[REDACTED:"...)
			r.holders = append(r.holders, s.Name...)
			r.holders = append(r.holders, ']')
		}
		r.holderAt[len(secrets)] = int32(len(r.holders))
		r.m = newMatcher(&ps, sp)
	}
	// The widest encoding looked for is percent-encoding every byte (3×)
	// or hex wrapped at a few columns; 4× covers them.
	r.rmax = 4*longest + 16
	r.grid = max(3*r.rmax, 1024)
	r.ctx = r.grid + r.rmax + wrapLook + tailLook
}

// placeholder returns the text that replaces pattern id.
func (r *Redactor) placeholder(id int32) []byte {
	i := r.owner[id]
	return r.holders[r.holderAt[i]:r.holderAt[i+1]]
}

// dedupe drops every pattern equal to an earlier one (with its owner),
// keeping the rest in the order added, and returns them sorted
// (sortPatterns), which the matcher is built from. A map of 100,000
// strings did the same at twice the cost.
func dedupe(ps *patternSet) sorted {
	sp := sortPatterns(ps)
	order, lcp := sp.order, sp.lcp
	n := len(order)
	var drop []bool
	for j := 1; j < n; j++ {
		// Equal patterns are adjacent, the earliest first (the sort's
		// last key is the index).
		if lcp[j] < MinLen {
			continue // no pattern is that short
		}
		a, b := order[j-1], order[j]
		if l := lcp[j]; l == ps.end[a]-ps.start[a] && l == ps.end[b]-ps.start[b] {
			if drop == nil {
				drop = make([]bool, n)
			}
			drop[b] = true
		}
	}
	if drop == nil {
		return sp // no duplicates: the forms of one value that are left out were the likely ones
	}
	renum := make([]int32, n)
	k := int32(0)
	for i := range n {
		if !drop[i] {
			renum[i] = k
			ps.start[k], ps.end[k], ps.owner[k], ps.after[k] = ps.start[i], ps.end[i], ps.owner[i], ps.after[i]
			k++
		}
	}
	ps.start, ps.end, ps.owner, ps.after = ps.start[:k], ps.end[:k], ps.owner[:k], ps.after[:k]
	// A dropped pattern equals the one before it, so the prefix the next
	// one shares with it is the one it shares with that one.
	kept := 0
	for j, i := range order {
		if !drop[i] {
			order[kept], lcp[kept], sp.head[kept] = renum[i], lcp[j], sp.head[j]
			kept++
		}
	}
	return sorted{order[:kept], lcp[:kept], sp.head[:kept]}
}

// Len returns the number of patterns matched, for diagnostics. It builds
// the matcher if nothing has yet.
func (r *Redactor) Len() int {
	if r == nil {
		return 0
	}
	r.ready()
	return len(r.owner)
}

// Format prints counts only; the patterns are secret.
func (r *Redactor) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "redact.Redactor{secrets: %d, patterns: %d}", r.countSecrets(), r.Len())
}

func (r *Redactor) countSecrets() int {
	if r == nil {
		return 0
	}
	r.ready()
	return r.secrets
}

// active builds the matcher and reports whether there is one.
func (r *Redactor) active() bool {
	if r == nil {
		return false
	}
	r.ready()
	return r.m != nil
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if !r.mayHold(len(s)) || !r.active() || len(s) < r.m.window {
		return s
	}
	b := []byte(s)
	out, changed := r.redact(b)
	if !changed {
		return s
	}
	return string(out)
}

// Bytes returns b with every secret replaced. It never modifies b; when
// nothing is replaced it returns b itself.
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.mayHold(len(b)) || !r.active() || len(b) < r.m.window {
		return b
	}
	out, _ := r.redact(b)
	return out
}

// redact is the one-shot form of the scan: the whole input is at hand, so
// nothing is ever held back.
func (r *Redactor) redact(b []byte) ([]byte, bool) {
	var s scratch
	start, end, id, _, ok := r.find(&s, b, 0, 0, true)
	if !ok {
		return b, false
	}
	out := make([]byte, 0, len(b))
	emitted := 0
	for ok {
		out = append(out, b[emitted:start]...)
		out = append(out, r.placeholder(id)...)
		emitted = end
		start, end, id, _, ok = r.find(&s, b, 0, end, true)
	}
	return append(out, b[emitted:]...), true
}
