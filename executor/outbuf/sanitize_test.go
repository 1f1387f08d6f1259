package outbuf

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

var sanitizeTests = []struct {
	name, in, want string
}{
	{"plain", "hello, world\n", "hello, world\n"},
	{"unicode", "héllo wörld ✓ 🎉 日本", "héllo wörld ✓ 🎉 日本"},
	{"replacement char kept", "a\uFFFDb", "a\uFFFDb"},
	{"tabs", "a\tb\n", "a\tb\n"},
	{"empty", "", ""},

	// OSC.
	{"osc 0 title BEL", "a\x1b]0;evil title\x07b", "ab"},
	{"osc 2 title ST", "a\x1b]2;evil title\x1b\\b", "ab"},
	{"osc 52 clipboard", "x\x1b]52;c;ZWNobyBwd25lZA==\x07y", "xy"},
	{"osc 52 clipboard ST", "x\x1b]52;c;ZWNobyBwd25lZA==\x1b\\y", "xy"},
	{"osc 8 hyperlink", "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ here", "click here"},
	{"osc 8 hyperlink BEL", "\x1b]8;id=1;https://evil.example/\x07click\x1b]8;;\x07", "click"},
	{"osc with newline inside", "a\x1b]0;x\ny\x07b", "ab"},
	{"osc cancelled by CAN", "a\x1b]0;title\x18b", "ab"},
	{"osc ended by new escape", "a\x1b]0;t\x1b[31mb", "ab"},
	{"osc 8-bit", "a\u009d0;title\u009cb", "ab"},
	{"osc 7-bit with 8-bit ST", "a\x1b]0;title\u009cb", "ab"},

	// CSI.
	{"csi clear and home", "a\x1b[2J\x1b[Hb", "ab"},
	{"csi cursor moves", "a\x1b[10;20Hb\x1b[3Ac\x1b[2Cd\x1b[1;1fe", "abcde"},
	{"csi private modes", "a\x1b[?1049h\x1b[?25lb\x1b[?2004h", "ab"},
	{"csi device status query", "a\x1b[6nb\x1b[>0c", "ab"},
	{"sgr colours", "\x1b[1;31mred\x1b[0m \x1b[38;5;196mx\x1b[m \x1b[38:2::255:0:0my", "red x y"},
	{"csi intermediate", "a\x1b[2 qb", "ab"},
	{"csi cancelled by SUB", "a\x1b[12\x1ab", "ab"},
	{"csi aborted by newline", "a\x1b[1\nb", "a\nb"},
	{"csi aborted by non-ascii", "a\x1b[1éb", "aéb"},
	{"csi 8-bit", "a\u009b2Jb", "ab"},

	// Other strings.
	{"dcs", "a\x1bP1$tx\x1b\\b", "ab"},
	{"dcs sixel", "a\x1bPq#0;2;0;0;0#0~~@@vv@@~~\x1b\\b", "ab"},
	{"dcs 8-bit", "a\u0090payload\u009cb", "ab"},
	{"apc", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
	{"pm", "a\x1b^privacy\x1b\\b", "ab"},
	{"sos", "a\x1bXstring\x1b\\b", "ab"},
	{"apc 8-bit", "a\u009fx\u009cb", "ab"},
	{"dcs not ended by BEL", "a\x1bPx\x07y\x1b\\b", "ab"},

	// Short escapes.
	{"esc 7 and 8", "a\x1b7b\x1b8c", "abc"},
	{"esc c reset", "a\x1bcb", "ab"},
	{"esc charset", "a\x1b(Bb\x1b)0c", "abc"},
	{"esc decaln", "a\x1b#8b", "ab"},
	{"esc esc", "a\x1b\x1b[31mb", "ab"},
	{"esc then newline", "a\x1b\nb", "a\nb"},
	{"esc at end", "abc\x1b", "abc"},
	{"csi at end", "abc\x1b[1;", "abc"},

	// Controls.
	{"c0 dropped", "a\x00b\x07c\x08d\x0be\x0cf\x7fg", "abcdefg"},
	{"c1 dropped", "a\u0085b\u0084c\u0080d", "abcd"},
	{"crlf", "a\r\nb\r\n", "a\nb\n"},
	{"lone cr", "a\rb\r", "a\nb\n"},
	{"cr cr lf", "a\r\r\nb", "a\n\nb"},
	{"cr then sequence then lf", "50%\r\x1b[K\n", "50%\n"},
	{"lf cr", "a\n\rb", "a\n\nb"},

	// Invalid UTF-8.
	{"invalid byte", "a\xffb", "a\uFFFDb"},
	{"lone continuation", "a\x80b", "a\uFFFDb"},
	{"truncated rune at end", "a\xe2\x82", "a\uFFFD\uFFFD"},
	{"truncated rune mid", "a\xe2\x82b", "a\uFFFD\uFFFDb"},
	{"surrogate", "a\xed\xa0\x80b", "a\uFFFD\uFFFD\uFFFDb"},
	{"overlong", "a\xc0\xafb", "a\uFFFD\uFFFDb"},
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	for _, tt := range sanitizeTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSanitizeUnterminatedSequenceIsCapped(t *testing.T) {
	t.Parallel()
	// The string holds "0;", 5000 x's and "tail": its first maxSequence
	// bytes and one more are dropped, the rest is printed as text.
	in := "a\x1b]0;" + strings.Repeat("x", 5000) + "tail"
	want := "a" + strings.Repeat("x", 2+5000+4-maxSequence-1-4) + "tail"
	if got := Sanitize(in); got != want {
		t.Fatalf("got %d bytes %q…, want %d bytes", len(got), got[:min(len(got), 20)], len(want))
	}
	csi := "a\x1b[" + strings.Repeat("1;", 3000) + "mb"
	if got := Sanitize(csi); strings.ContainsRune(got, 0x1b) || !strings.HasPrefix(got, "a") || !strings.HasSuffix(got, "mb") {
		t.Fatalf("long CSI: %q", got[:min(len(got), 20)])
	}
}

func TestSanitizeWriterEverySplitPoint(t *testing.T) {
	t.Parallel()
	for _, tt := range sanitizeTests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for i := 0; i <= len(tt.in); i++ {
				if got := sanitizeChunks(t, []byte(tt.in), i); got != tt.want {
					t.Fatalf("split at %d of %q:\n got %q\nwant %q", i, tt.in, got, tt.want)
				}
			}
		})
	}
}

func TestSanitizeWriterRandomSplits(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for _, tt := range sanitizeTests {
		all.WriteString(tt.in)
	}
	in := []byte(all.String())
	want := Sanitize(all.String())
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		var out bytes.Buffer
		w := NewSanitizeWriter(&out)
		for rest := in; len(rest) > 0; {
			k := min(len(rest), rng.IntN(12))
			mustWrite(t, w, rest[:k])
			rest = rest[k:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("got %q\nwant %q", out.String(), want)
		}
	}
}

func TestSanitizeWriterLargeWrite(t *testing.T) {
	t.Parallel()
	// Larger than flushSize, with a rune and a sequence across the
	// internal chunk boundary.
	in := strings.Repeat("é\x1b[31m–x\xff", 20000)
	var out bytes.Buffer
	w := NewSanitizeWriter(&out)
	mustWrite(t, w, []byte(in))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("é–x\uFFFD", 20000); out.String() != want {
		t.Fatalf("mismatch: got %d bytes, want %d", out.Len(), len(want))
	}
}

func TestSanitizeWriterClose(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewSanitizeWriter(&out)
	mustWrite(t, w, []byte("ok \xe2\x82"))
	if out.String() != "ok " {
		t.Fatalf("before Close: %q", out.String())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "ok \uFFFD\uFFFD" {
		t.Fatalf("after Close: %q", out.String())
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

func TestSanitizeWriterError(t *testing.T) {
	t.Parallel()
	boom := errors.New("broken pipe")
	w := NewSanitizeWriter(failingWriter{boom})
	if _, err := w.Write([]byte("x")); !errors.Is(err, boom) {
		t.Fatalf("Write: %v", err)
	}
	if _, err := w.Write([]byte("y")); !errors.Is(err, boom) {
		t.Fatalf("second Write: %v", err)
	}
}

// FuzzSanitizeWriter checks that any chunking gives Sanitize of the whole,
// and that the output can drive no terminal function: valid UTF-8 with no
// ESC, no C1 and no C0 other than \n and \t. Sanitize must also be
// idempotent — its output is plain text.
func FuzzSanitizeWriter(f *testing.F) {
	for _, tt := range sanitizeTests {
		f.Add([]byte(tt.in), []byte{1, 2, 3})
	}
	f.Fuzz(func(t *testing.T, in, cuts []byte) {
		want := Sanitize(string(in))
		checkInert(t, want)
		if again := Sanitize(want); again != want {
			t.Fatalf("not idempotent: %q -> %q", want, again)
		}
		var out bytes.Buffer
		w := NewSanitizeWriter(&out)
		rest := in
		for _, c := range cuts {
			k := min(int(c%16), len(rest))
			mustWrite(t, w, rest[:k])
			rest = rest[k:]
		}
		mustWrite(t, w, rest)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("chunks %v of %q:\n got %q\nwant %q", cuts, in, out.String(), want)
		}
	})
}

func checkInert(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("invalid UTF-8: %q", s)
	}
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			t.Fatalf("control %U survives in %q", r, s)
		}
	}
}

func sanitizeChunks(t *testing.T, in []byte, split int) string {
	t.Helper()
	var out bytes.Buffer
	w := NewSanitizeWriter(&out)
	mustWrite(t, w, in[:split])
	mustWrite(t, w, in[split:])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func mustWrite(t testing.TB, w io.Writer, p []byte) {
	t.Helper()
	if n, err := w.Write(p); err != nil || n != len(p) {
		t.Fatalf("Write = %d, %v", n, err)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func BenchmarkSanitize(b *testing.B) {
	for name, line := range map[string]string{
		"plain":    "2025-01-02 12:00:00 INFO request served in 12ms — ok, /api/v1/items?page=2\n",
		"coloured": "2025-01-02 12:00:00 \x1b[32mINFO\x1b[0m request served in 12ms — ok\n",
	} {
		in := []byte(strings.Repeat(line, 1<<16))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				w := NewSanitizeWriter(io.Discard)
				for off := 0; off < len(in); off += 32 << 10 {
					if _, err := w.Write(in[off:min(off+32<<10, len(in))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
