package outbuf

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestSanitizeWriterReadFrom checks that copying through ReadFrom (what
// os/exec's io.Copy uses) gives exactly Sanitize of the input, whatever
// sizes the reads come in, including sequences and characters cut by a
// read boundary and an input larger than the biggest buffer.
func TestSanitizeWriterReadFrom(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("héllo \x1b[31mred\x1b[0m wörld\r\n", 4000) // ~120 KiB
	inputs := map[string]string{
		"empty":        "",
		"plain":        "hello\n",
		"escapes":      "a\x1b]0;title\x07b\x1b[2Jc\x9b31md\n",
		"utf8":         "naïve café ☕ 𝄞\n",
		"invalid utf8": "bad \xff\xfe bytes\n",
		"big":          big,
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"halves":   func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for name, in := range inputs {
		for rname, mk := range readers {
			if name == "big" && rname == "one byte" {
				continue // 120 K single-byte writes prove nothing more
			}
			t.Run(name+"/"+rname, func(t *testing.T) {
				t.Parallel()
				var out bytes.Buffer
				w := NewSanitizeWriter(&out)
				n, err := io.Copy(w, struct{ io.Reader }{mk(in)}) // hide WriterTo, as os/exec's pipe does
				if err != nil || n != int64(len(in)) {
					t.Fatalf("io.Copy = %d, %v; want %d", n, err, len(in))
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if got, want := out.String(), Sanitize(in); got != want {
					t.Fatalf("got %q\nwant %q", got, want)
				}
			})
		}
	}
}

// TestSanitizeWriterReadFromStopsOnWriteError: a failed destination ends
// the copy with its error.
func TestSanitizeWriterReadFromStopsOnWriteError(t *testing.T) {
	t.Parallel()
	w := NewSanitizeWriter(failWriter{})
	_, err := io.Copy(w, strings.NewReader("x"))
	if err != io.ErrClosedPipe {
		t.Fatalf("io.Copy error = %v, want %v", err, io.ErrClosedPipe)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
