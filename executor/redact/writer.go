package redact

import (
	"errors"
	"fmt"
	"io"
)

// ErrClosed is returned by a Write after Close.
var ErrClosed = errors.New("redact: write after close")

// Writer is the streaming form of a Redactor: what it writes to its
// destination is exactly what String would return for everything written to
// it, however the input was split into writes.
//
// Bytes that cannot begin a secret pass straight through. Bytes that could —
// a tail that is a proper prefix of some pattern, in the raw output or in
// one of its normal forms — are held back until the next Write or Close
// decides them, so a value straddling two writes is still caught. The
// Writer's memory is bounded by a few times the longest secret plus one
// 32 KiB piece, never by the size of the output.
//
// A Writer is for one goroutine at a time; separate Writers of the same
// Redactor may run concurrently.
type Writer struct {
	r   *Redactor
	dst io.Writer

	// buf[:ctx] is input already written out, kept as the left context
	// the normalisers read (at most r.ctx bytes); buf[ctx:] is the
	// undecided tail. base is buf[0]'s offset in the stream.
	buf    []byte
	ctx    int
	base   int64
	s      scratch
	err    error // sticky: after a failed write the stream is corrupt
	closed bool

	// wait holds a HoldingWriter's first bytes while they are fewer than
	// the shortest secret: they cannot hold one yet, so the Redactor is
	// not built for them (see lazy); started is set once they are passed on.
	wait    []byte
	started bool
}

// Writer returns a streaming redactor writing to dst. Close must be called
// at the end of the stream to flush the held-back tail. Its first byte
// builds the Redactor's matcher if nothing has yet.
func (r *Redactor) Writer(dst io.Writer) *Writer {
	return &Writer{r: r, dst: dst, started: true}
}

// HoldingWriter is Writer for a stream that soon ends, such as a model's
// answer: while the stream is shorter than the shortest secret it holds
// its bytes without building the matcher (a stream that short cannot hold
// one), and passes them on with the next byte past that, or at Close. Not
// for a stream that can pause with a few bytes written — a process's live
// output, a log read while it runs — which they would wait in.
func (r *Redactor) HoldingWriter(dst io.Writer) *Writer {
	return &Writer{r: r, dst: dst}
}

// Buffered returns the number of bytes held back, waiting for the next
// Write or Close to decide whether they begin a secret.
func (w *Writer) Buffered() int { return len(w.wait) + len(w.buf) - w.ctx }

// Format prints the state without the held bytes, which may be part of a
// secret.
func (w *Writer) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "redact.Writer{buffered: %d, closed: %t}", w.Buffered(), w.closed)
}

// piece bounds how much of one Write is scanned at a time, so what the
// scan keeps (its list of trigger positions) does not grow with the size
// of the Write.
const piece = 32 << 10

// Write redacts p into the destination, holding back a tail that might
// begin a secret. It returns len(p) or an error; after an error of the
// destination every later call returns that error, because a partial write
// cannot be resumed without duplicating or dropping output.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, ErrClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !w.started {
		if w.r != nil && w.r.lazy.hasValue && !w.r.mayHold(len(w.wait)+len(p)) {
			w.wait = append(w.wait, p...)
			return len(p), nil
		}
		w.started = true
		if len(w.wait) > 0 {
			joined := append(w.wait, p...)
			w.wait = nil
			if _, err := w.write(joined); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return w.write(p)
}

// write is Write once the stream has started.
func (w *Writer) write(p []byte) (int, error) {
	if !w.r.active() {
		if err := w.emit(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	total := len(p)
	// The start of p joins the context and the held tail in w.buf; once
	// that part is decided, the undecided input starts inside p with a
	// full context before it, and the rest of p is scanned where it lies,
	// a piece at a time, without copying.
	head := w.r.ctx + w.r.rmax + tailLook
	if w.buf == nil {
		w.buf = make([]byte, 0, w.r.ctx+w.r.rmax+tailLook+head)
	}
	k := min(len(p), head)
	joined := len(w.buf)
	w.buf = append(w.buf, p[:k]...)
	hold, err := w.scan(w.buf, w.base, w.ctx, false)
	if err != nil {
		return 0, err
	}
	if k == len(p) {
		w.keep(w.buf, w.base, hold)
		return total, nil
	}
	pbase := w.base + int64(joined)
	at := hold - joined // undecided input starts at p[at], at >= ctx
	for {
		lo := max(0, at-w.r.ctx)
		hi := min(len(p), at+piece)
		h, err := w.scan(p[lo:hi], pbase+int64(lo), at-lo, false)
		if err != nil {
			return 0, err
		}
		at = lo + h
		if hi == len(p) {
			break
		}
	}
	w.keep(p, pbase, at)
	return total, nil
}

// keep makes w.buf the context before b[hold:] and the undecided b[hold:];
// base is b[0]'s offset in the stream. b may be w.buf itself.
func (w *Writer) keep(b []byte, base int64, hold int) {
	lo := max(0, hold-w.r.ctx)
	n := copy(w.buf[:cap(w.buf)], b[lo:])
	w.buf = w.buf[:n]
	w.base = base + int64(lo)
	w.ctx = hold - lo
}

// scan writes the decided part of b[from:], secrets replaced, and returns
// where the undecided tail begins; b[:from] is context, base b[0]'s offset
// in the stream.
func (w *Writer) scan(b []byte, base int64, from int, final bool) (int, error) {
	emitted := from
	w.s.forget()
	for {
		start, end, id, hold, ok := w.r.find(&w.s, b, base, emitted, final)
		if !ok {
			if final {
				hold = len(b)
			}
			return hold, w.emit(b[emitted:hold])
		}
		if err := w.emit(b[emitted:start]); err != nil {
			return 0, err
		}
		if err := w.emit(w.r.placeholder(id)); err != nil {
			return 0, err
		}
		emitted = end
	}
}

func (w *Writer) emit(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	n, err := w.dst.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// The destination's error is kept as is: it describes the
		// destination and never quotes what was written.
		w.err = err
	}
	return err
}

// Close decides and writes the held-back tail; nothing more can arrive, so
// a partial secret at the very end is not a secret. It does not close the
// destination. Close may be called more than once.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return nil
	}
	w.closed = true
	if !w.started {
		// Fewer bytes than the shortest secret in the whole stream.
		err := w.emit(w.wait)
		w.wait = nil
		return err
	}
	if w.Buffered() == 0 {
		w.buf = nil
		return nil
	}
	_, err := w.scan(w.buf, w.base, w.ctx, true)
	w.buf = nil
	return err
}
