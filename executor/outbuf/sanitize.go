package outbuf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// maxSequence caps an escape sequence or control string. Legitimate ones
// (colours, titles, hyperlinks) are far shorter; an unterminated one would
// otherwise swallow the rest of the output. The capped sequence is dropped
// and what follows is printed as text — without its introducer it is inert.
const maxSequence = 4 << 10

// flushSize bounds the SanitizeWriter's output buffer.
const flushSize = 32 << 10

// ErrClosed is returned by a SanitizeWriter's Write after Close.
var ErrClosed = errors.New("outbuf: write after close")

// Sanitize makes tool output safe to print on a terminal. It removes
// ANSI/VT escape sequences — CSI, OSC (ended by BEL or ST), DCS, SOS, PM,
// APC and two- or three-byte ESC sequences — and C1 controls, also in their
// 8-bit (U+0080–U+009F) form; it removes the other C0 controls and DEL
// except \n and \t and the bidirectional-text controls (U+202A–U+202E,
// U+2066–U+2069), turns \r\n and a lone \r into \n, and replaces each
// byte of invalid UTF-8 with U+FFFD. The result holds printable text, \n and
// \t only.
func Sanitize(s string) string {
	var st sanitizer
	out, _ := st.feed(make([]byte, 0, len(s)), []byte(s), true)
	return string(out)
}

// NewSanitizeWriter returns the streaming form of Sanitize: what reaches dst
// is Sanitize of everything written, however it was split, including an
// escape sequence or a UTF-8 character split across two writes. It keeps at
// most three bytes of an unfinished character and a few words of parser
// state. Close ends the stream (dropping an unfinished sequence) but does
// not close dst. For one goroutine at a time.
func NewSanitizeWriter(dst io.Writer) io.WriteCloser {
	return &sanitizeWriter{dst: dst}
}

type sanitizeWriter struct {
	dst     io.Writer
	st      sanitizer
	pending [utf8.UTFMax]byte // an unfinished character from the last write
	npend   int
	out     []byte
	err     error
	closed  bool
}

func (w *sanitizeWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, ErrClosed
	}
	n := len(p)
	if w.npend > 0 {
		// Finish the character begun in the last write; UTFMax more bytes
		// always suffice to decide it.
		var tmp [2 * utf8.UTFMax]byte
		k := min(len(p), utf8.UTFMax)
		joined := append(append(tmp[:0], w.pending[:w.npend]...), p[:k]...)
		var used int
		w.out, used = w.st.feedUntil(w.out, joined, w.npend, false)
		if used < w.npend { // p was too short: still unfinished
			w.npend = copy(w.pending[:], joined[used:])
			p = nil
		} else {
			p = p[used-w.npend:]
			w.npend = 0
		}
	}
	for len(p) > 0 {
		// Chunks bound the output buffer; a character cut by a chunk
		// boundary is left unconsumed and starts the next chunk.
		c := min(len(p), flushSize)
		var used int
		w.out, used = w.st.feed(w.out, p[:c], false)
		last := c == len(p)
		p = p[used:]
		if err := w.flush(false); err != nil {
			return 0, err
		}
		if last && len(p) > 0 {
			w.npend = copy(w.pending[:], p)
			break
		}
	}
	if err := w.flush(true); err != nil {
		return 0, err
	}
	return n, nil
}

// ReadFrom copies r through the writer. os/exec copies a child's output
// pipe with io.Copy, which otherwise allocates 32 KiB for every tool call
// however little the tool prints; this starts at 4 KiB and grows while
// reads fill the buffer, so a large output still moves in large reads.
func (w *sanitizeWriter) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 4<<10)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			total += int64(n)
			if _, werr := w.Write(buf[:n]); werr != nil {
				return total, werr
			}
			if n == len(buf) && len(buf) < flushSize {
				buf = make([]byte, 2*len(buf))
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Format keeps buffered output out of logs: the sanitiser runs before the
// redactor, so what it holds may be part of a secret.
func (w *sanitizeWriter) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "outbuf.sanitizeWriter{pending: %d, closed: %t}", w.npend, w.closed)
}

// flush writes the buffered output; unless forced, only once it is large.
func (w *sanitizeWriter) flush(force bool) error {
	if len(w.out) == 0 || (!force && len(w.out) < flushSize) {
		return nil
	}
	n, err := w.dst.Write(w.out)
	if err == nil && n < len(w.out) {
		err = io.ErrShortWrite
	}
	w.out = w.out[:0]
	if err != nil {
		w.err = err
	}
	return err
}

func (w *sanitizeWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return nil
	}
	w.closed = true
	w.out, _ = w.st.feed(w.out, w.pending[:w.npend], true)
	w.npend = 0
	return w.flush(true)
}

type state uint8

const (
	ground   state = iota
	escape         // after ESC
	escInter       // after ESC and intermediate bytes (ESC ( B, ESC # 8)
	csi            // control sequence: parameters, intermediates, final byte
	str            // OSC, DCS, SOS, PM or APC string, up to ST
	strEsc         // ESC inside a string: ST if a backslash follows
)

// sanitizer is the parser state carried between writes. Its transitions
// follow the DEC/ECMA-48 parser that terminals implement, simplified to one
// rule: whatever a terminal would treat as part of a control function is
// dropped, and when in doubt, dropping wins.
type sanitizer struct {
	state state
	osc   bool // the string is an OSC, which BEL also ends
	seq   int  // bytes in the current sequence, for maxSequence
	cr    bool // a \r was turned into \n; a \n right after it is dropped
}

// feed appends the sanitised form of b to out and returns how much of b it
// consumed: all of it, unless b ends in an unfinished UTF-8 character and
// final is false.
func (s *sanitizer) feed(out, b []byte, final bool) ([]byte, int) {
	return s.feedUntil(out, b, len(b), final)
}

// feedUntil is feed that stops after the token that reaches index stop.
func (s *sanitizer) feedUntil(out, b []byte, stop int, final bool) ([]byte, int) {
	i := 0
	for i < stop && i < len(b) {
		if s.state == ground {
			// After a \r the next character goes through ground, which
			// clears the pending \r\n pairing.
			if !s.cr {
				if j := plainRun(b, i); j > i {
					out = append(out, b[i:j]...)
					i = j
					continue
				}
			}
			if j := completeCSI(b, i); j > i {
				i = j // what the state machine would do, in one step
				continue
			}
		}
		r, size := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			if !final && !utf8.FullRune(b[i:]) {
				return out, i
			}
			r, size = utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				r = invalid
			}
		}
		out = s.step(out, r, b[i:i+size])
		i += size
	}
	return out, i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainRun returns the end of the run, starting at i, of text that passes
// unchanged: printable ASCII and complete, valid characters above the C1
// range. It tests eight ASCII bytes at a time, which makes ordinary output
// several times faster than stepping the parser byte by byte.
func plainRun(b []byte, i int) int {
	for i < len(b) {
		if i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			nonASCII := x & highs
			below20 := (x - 0x20*ones) &^ x & highs
			y := x ^ 0x7f*ones
			isDEL := (y - ones) &^ y & highs
			if nonASCII|below20|isDEL == 0 {
				i += 8
				continue
			}
		}
		// Something in these eight bytes needs a closer look; look at them
		// one by one before trying eight at a time again.
		for end := min(i+8, len(b)); i < end; {
			c := b[i]
			if c >= 0x20 && c < 0x7f {
				i++
				continue
			}
			if c < utf8.RuneSelf {
				return i
			}
			r, size := utf8.DecodeRune(b[i:])
			if size == 1 || r <= 0x9f || bidiControl(r) { // invalid, unfinished, C1 or bidi
				return i
			}
			i += size
		}
	}
	return i
}

// completeCSI returns the end of a whole, short CSI sequence at b[i], or i
// if there is none. Colour codes are most of the sequences in tool output.
func completeCSI(b []byte, i int) int {
	if i+2 >= len(b) || b[i] != esc || b[i+1] != '[' {
		return i
	}
	for j := i + 2; j < len(b) && j-i < maxSequence; j++ {
		switch c := b[j]; {
		case c >= 0x40 && c <= 0x7e:
			return j + 1
		case c < 0x20 || c > 0x3f:
			return i
		}
	}
	return i
}

// invalid stands for a byte that is not valid UTF-8.
const invalid rune = -1

const (
	bel = 0x07
	can = 0x18
	sub = 0x1a
	esc = 0x1b
	del = 0x7f
	// 8-bit forms of the introducers and of ST.
	c1DCS = 0x90
	c1SOS = 0x98
	c1CSI = 0x9b
	c1ST  = 0x9c
	c1OSC = 0x9d
	c1PM  = 0x9e
	c1APC = 0x9f
)

// step processes one character r, whose encoding is raw.
func (s *sanitizer) step(out []byte, r rune, raw []byte) []byte {
	switch s.state {
	case ground:
		return s.ground(out, r, raw)
	case escape:
		switch {
		case r == '[':
			s.enter(csi, false)
		case r == ']':
			s.enter(str, true)
		case r == 'P' || r == 'X' || r == '^' || r == '_':
			s.enter(str, false)
		case r >= 0x20 && r <= 0x2f:
			s.enter(escInter, false)
		case r >= 0x30 && r <= 0x7e:
			s.state = ground // a two-byte sequence such as ESC 7 or ESC c
		default:
			return s.abort(out, r, raw)
		}
	case escInter:
		switch {
		case r >= 0x20 && r <= 0x2f:
			return s.more(out)
		case r >= 0x30 && r <= 0x7e:
			s.state = ground
		default:
			return s.abort(out, r, raw)
		}
	case csi:
		switch {
		case r >= 0x20 && r <= 0x3f:
			return s.more(out)
		case r >= 0x40 && r <= 0x7e:
			s.state = ground
		default:
			return s.abort(out, r, raw)
		}
	case str:
		switch {
		case r == bel && s.osc, r == c1ST, r == can, r == sub:
			s.state = ground
		case r == esc:
			s.state = strEsc
		default:
			s.seq += len(raw)
			if s.seq > maxSequence {
				s.state = ground
			}
		}
	case strEsc:
		if r == '\\' {
			s.state = ground
			return out
		}
		// ESC followed by anything else ends the string and starts a
		// new escape sequence, as in a terminal.
		s.state = escape
		return s.step(out, r, raw)
	}
	return out
}

func (s *sanitizer) enter(st state, osc bool) {
	s.state, s.osc, s.seq = st, osc, 0
}

// more counts one more byte of a sequence and gives up on it at the cap.
func (s *sanitizer) more(out []byte) []byte {
	s.seq++
	if s.seq > maxSequence {
		s.state = ground
	}
	return out
}

// abort handles a character that cannot continue the current sequence:
// ESC starts a new one, CAN and SUB cancel it, DEL is ignored inside it,
// and anything else ends it and is then treated as ordinary input.
func (s *sanitizer) abort(out []byte, r rune, raw []byte) []byte {
	switch r {
	case esc:
		s.state = escape
	case can, sub:
		s.state = ground
	case del:
	default:
		s.state = ground
		return s.ground(out, r, raw)
	}
	return out
}

// ground handles a character outside any sequence. Only printed output
// ends a \r\n pair: "\r", a dropped sequence, then "\n" is one line end.
func (s *sanitizer) ground(out []byte, r rune, raw []byte) []byte {
	switch {
	case r == '\n':
		if s.cr {
			s.cr = false
			return out
		}
		return append(out, '\n')
	case r == '\r':
		s.cr = true
		return append(out, '\n')
	case r == esc:
		s.state = escape
	case r == c1CSI:
		s.enter(csi, false)
	case r == c1OSC:
		s.enter(str, true)
	case r == c1DCS || r == c1SOS || r == c1PM || r == c1APC:
		s.enter(str, false)
	case r == '\t':
		s.cr = false
		return append(out, '\t')
	case r == invalid:
		s.cr = false
		return utf8.AppendRune(out, utf8.RuneError)
	case r < 0x20 || (r >= del && r <= 0x9f) || bidiControl(r):
		// Other C0 controls, DEL, the remaining C1 controls and the
		// bidirectional-text controls.
	default:
		s.cr = false
		return append(out, raw...)
	}
	return out
}
