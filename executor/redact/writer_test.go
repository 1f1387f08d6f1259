package redact

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// straddleSecrets overlap each other, share prefixes and have encodings of
// every kind, so that split points land inside every sort of match.
var straddleSecrets = []Secret{
	{"API_KEY", "sk-abc123def456"},
	{"LONG", "sk-abc123def456-and-more"},
	{"PW", "p@ss/w0rd+&= x"},
	{"K", "k>>>???-value"},
	{"PIN", "4242"},
}

func straddleText() string {
	var b strings.Builder
	b.WriteString("sk-abc123def456 start; ")
	b.WriteString("long sk-abc123def456-and-more and partial sk-abc123def456-and-mo; ")
	b.WriteString("q=" + url.QueryEscape("p@ss/w0rd+&= x") + " path=" + url.PathEscape("p@ss/w0rd+&= x") + "; ")
	b.WriteString("b64 " + base64.StdEncoding.EncodeToString([]byte("xx"+"k>>>???-value"+"yy")) + " ")
	b.WriteString(base64.RawURLEncoding.EncodeToString([]byte("k>>>???-value")) + " ")
	b.WriteString("4242424 sk-sk-abc123def456sk-abc123def456 ")
	b.WriteString("end sk-abc123def456")
	return b.String()
}

func TestWriterEverySplitPoint(t *testing.T) {
	t.Parallel()
	r := New(straddleSecrets)
	text := []byte(straddleText())
	want := r.String(string(text))
	if strings.Contains(want, "sk-abc123def456") || strings.Contains(want, "k>>>") {
		t.Fatalf("String leaves a value: %q", want)
	}
	for i := 0; i <= len(text); i++ {
		var out bytes.Buffer
		w := r.Writer(&out)
		mustWrite(t, w, text[:i])
		mustWrite(t, w, text[i:])
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("split at %d:\n got %q\nwant %q", i, out.String(), want)
		}
	}
}

func TestWriterRandomSplits(t *testing.T) {
	t.Parallel()
	r := New(straddleSecrets)
	text := []byte(straddleText() + straddleText())
	want := r.String(string(text))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var out bytes.Buffer
		w := r.Writer(&out)
		var cuts []int
		for rest := text; len(rest) > 0; {
			k := min(len(rest), rng.IntN(40))
			cuts = append(cuts, k)
			mustWrite(t, w, rest[:k])
			rest = rest[k:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("chunks %v:\n got %q\nwant %q", cuts, out.String(), want)
		}
	}
}

// TestWriterHoldsOnlyPossibleStarts pins down what is held back: nothing
// after clean text, and exactly the tail that could begin a secret.
func TestWriterHoldsOnlyPossibleStarts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		writes   []string
		wantOut  string // written to dst before Close
		wantHeld int
	}{
		{"clean", []string{"hello world\n"}, "hello world\n", 0},
		{"prefix tail", []string{"key: sk-abc"}, "key: ", 6},
		{"diverged prefix", []string{"key: sk-abX"}, "key: sk-abX", 0},
		{"prefix grows", []string{"key: sk-", "abc123"}, "key: ", 9},
		{"complete but longer possible", []string{"sk-abc123def456-and"}, "", 19},
		{"complete and decided", []string{"sk-abc123def456 "}, "[REDACTED:API_KEY] ", 0},
		{"whole longest pattern", []string{"sk-abc123def456-and-more"}, "[REDACTED:LONG]", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			w := New(straddleSecrets).Writer(&out)
			for _, s := range tt.writes {
				mustWrite(t, w, []byte(s))
			}
			if out.String() != tt.wantOut || w.Buffered() != tt.wantHeld {
				t.Errorf("out %q held %d, want %q held %d", out.String(), w.Buffered(), tt.wantOut, tt.wantHeld)
			}
		})
	}
}

// TestWriterMemoryBound writes a stream dense with secret prefixes and
// checks after every write that the held tail stays within the longest
// encoded span and the buffer never grows past its fixed size.
func TestWriterMemoryBound(t *testing.T) {
	t.Parallel()
	r := New(straddleSecrets)
	r.ready()
	maxLen := r.m.maxLen
	bound := r.rmax + tailLook
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"sk-abc123def456-and-mor", "sk-abc", "p%40ss%2F", "4242", "az4+Pj8/Py12", "x", " ", "sk-abc123def456"}
	var out countingWriter
	w := r.Writer(&out)
	total := 0
	for range 200_000 {
		var chunk []byte
		for range rng.IntN(8) {
			chunk = append(chunk, pieces[rng.IntN(len(pieces))]...)
		}
		mustWrite(t, w, chunk)
		total += len(chunk)
		if w.Buffered() > bound {
			t.Fatalf("holding %d bytes, bound %d", w.Buffered(), bound)
		}
		if c := cap(w.buf); c > r.ctx+bound+piece {
			t.Fatalf("buffer capacity %d exceeds %d", c, r.ctx+bound+piece)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if total < 10*maxLen || out.n == 0 {
		t.Fatalf("test wrote too little: %d in, %d out", total, out.n)
	}
}

func TestWriterClose(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := New(straddleSecrets).Writer(&out)
	mustWrite(t, w, []byte("tail sk-abc123def456-and"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// At the end of the stream the longer secret cannot complete.
	if got, want := out.String(), "tail [REDACTED:API_KEY]-and"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close: %v, want ErrClosed", err)
	}
}

func TestWriterDestinationErrorIsSticky(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk full")
	w := New(straddleSecrets).Writer(failingWriter{boom})
	if _, err := w.Write([]byte("some output")); !errors.Is(err, boom) {
		t.Fatalf("Write: %v", err)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, boom) {
		t.Fatalf("second Write: %v", err)
	}
	if err := w.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close: %v", err)
	}
}

func TestWriterShortWrite(t *testing.T) {
	t.Parallel()
	w := New(straddleSecrets).Writer(shortWriter{})
	if _, err := w.Write([]byte("some output")); !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("Write: %v", err)
	}
}

type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

type countingWriter struct{ n int }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

func mustWrite(t testing.TB, w *Writer, p []byte) {
	t.Helper()
	if n, err := w.Write(p); err != nil || n != len(p) {
		t.Fatalf("Write = %d, %v", n, err)
	}
}
