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
// a tail that is a proper prefix of some pattern — are held back until the
// next Write or Close decides them, so a value straddling two writes is
// still caught. At most longest-pattern − 1 bytes are held, and the Writer's
// memory is bounded by the longest pattern, never by the size of the output.
//
// A Writer is for one goroutine at a time; separate Writers of the same
// Redactor may run concurrently.
type Writer struct {
	r   *Redactor
	dst io.Writer

	// buf holds the undecided tail in buf[:held]; the rest, 2·maxLen in
	// all, is room to join that tail with the start of the next Write.
	buf    []byte
	held   int
	err    error // sticky: after a failed write the stream is corrupt
	closed bool
}

// Writer returns a streaming redactor writing to dst. Close must be called
// at the end of the stream to flush the held-back tail.
func (r *Redactor) Writer(dst io.Writer) *Writer {
	return &Writer{r: r, dst: dst}
}

// Buffered returns the number of bytes held back, waiting for the next
// Write or Close to decide whether they begin a secret.
func (w *Writer) Buffered() int { return w.held }

// Format prints the state without the held bytes, which may be part of a
// secret.
func (w *Writer) Format(f fmt.State, _ rune) {
	fmt.Fprintf(f, "redact.Writer{buffered: %d, closed: %t}", w.held, w.closed)
}

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
	if !w.r.active() {
		if err := w.emit(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if w.held > 0 {
		// Join the held tail with just enough of p to decide all of it:
		// an undecided suffix is shorter than maxLen, so after maxLen more
		// bytes it starts inside p.
		k := min(len(p), w.r.m.maxLen)
		joined := append(w.buf[:w.held], p[:k]...) // fits: held < maxLen
		oldHeld := w.held
		hold, err := w.scan(joined)
		if err != nil {
			return 0, err
		}
		if k == len(p) {
			w.held = copy(w.buf, joined[hold:])
			return len(p), nil
		}
		w.held = 0
		rest := p[hold-oldHeld:]
		if err := w.scanAndHold(rest); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if err := w.scanAndHold(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// scanAndHold redacts p, which follows no held bytes, and keeps its
// undecided tail.
func (w *Writer) scanAndHold(p []byte) error {
	hold, err := w.scan(p)
	if err != nil {
		return err
	}
	if tail := p[hold:]; len(tail) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 2*w.r.m.maxLen)
		}
		w.held = copy(w.buf, tail)
	}
	return nil
}

// scan writes the decided part of b, secrets replaced, and returns where
// the undecided tail begins.
func (w *Writer) scan(b []byte) (int, error) {
	emitted := 0
	for {
		start, end, id, hold, ok := w.r.m.find(b, emitted, false)
		if !ok {
			return hold, w.emit(b[emitted:hold])
		}
		if err := w.emit(b[emitted:start]); err != nil {
			return 0, err
		}
		if err := w.emit(w.r.placeholders[id]); err != nil {
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
	if w.held == 0 {
		return nil
	}
	tail := w.buf[:w.held]
	w.held = 0
	emitted := 0
	for {
		start, end, id, _, ok := w.r.m.find(tail, emitted, true)
		if !ok {
			return w.emit(tail[emitted:])
		}
		if err := w.emit(tail[emitted:start]); err != nil {
			return err
		}
		if err := w.emit(w.r.placeholders[id]); err != nil {
			return err
		}
		emitted = end
	}
}
