package outbuf

import (
	"fmt"
	"testing"
)

// TestCleanEveryClassEveryMode: one row per control and format class, the
// result for each mode. Output removes; Block and Line escape; Line also
// keeps to one line. Nothing a terminal obeys survives any mode.
func TestCleanEveryClassEveryMode(t *testing.T) {
	t.Parallel()
	rows := []struct {
		class, in           string
		output, block, line string
	}{
		{"plain", "go test ./...", "go test ./...", "go test ./...", "go test ./..."},
		{"newline", "a\nb", "a\nb", "a\nb", "a b"},
		{"tab", "a\tb", "a\tb", "a\tb", "a b"},
		{"CR", "a\rb", "a\nb", "a\\rb", "a b"},
		{"CRLF", "a\r\nb", "a\nb", "a\\r\nb", "a  b"},
		{"NUL", "a\x00b", "ab", `a\x00b`, `a\x00b`},
		{"BEL", "a\x07b", "ab", `a\x07b`, `a\x07b`},
		{"BS", "a\x08b", "ab", `a\x08b`, `a\x08b`},
		{"other C0", "a\x01\x1fb", "ab", `a\x01\x1fb`, `a\x01\x1fb`},
		{"DEL", "a\x7fb", "ab", `a\x7fb`, `a\x7fb`},
		{"C1 NEL", "a\u0085b", "ab", `a\u0085b`, `a\u0085b`},
		{"C1 CSI", "a\u009b31mb", "ab", `a\u009b31mb`, `a\u009b31mb`},
		{"ESC CSI colour", "a\x1b[31mred\x1b[0m", "ared", `a\x1b[31mred\x1b[0m`, `a\x1b[31mred\x1b[0m`},
		{"ESC OSC title", "a\x1b]0;pwned\x07b", "ab", `a\x1b]0;pwned\x07b`, `a\x1b]0;pwned\x07b`},
		{"ESC OSC 52 clipboard", "\x1b]52;c;ZXZpbA==\x1b\\x", "x", `\x1b]52;c;ZXZpbA==\x1b\x`, `\x1b]52;c;ZXZpbA==\x1b\x`},
		{"ESC DCS", "\x1bPq#0\x1b\\x", "x", `\x1bPq#0\x1b\x`, `\x1bPq#0\x1b\x`},
		{"ESC two-byte", "a\x1bcb", "ab", `a\x1bcb`, `a\x1bcb`},
		{"LRE U+202A", "a\u202ab", "ab", `a\u202ab`, `a\u202ab`},
		{"RLE U+202B", "a\u202bb", "ab", `a\u202bb`, `a\u202bb`},
		{"PDF U+202C", "a\u202cb", "ab", `a\u202cb`, `a\u202cb`},
		{"LRO U+202D", "a\u202db", "ab", `a\u202db`, `a\u202db`},
		{"RLO U+202E", "rm \u202efdp.txt", "rm fdp.txt", `rm \u202efdp.txt`, `rm \u202efdp.txt`},
		{"LRI U+2066", "a\u2066b", "ab", `a\u2066b`, `a\u2066b`},
		{"RLI U+2067", "a\u2067b", "ab", `a\u2067b`, `a\u2067b`},
		{"FSI U+2068", "a\u2068b", "ab", `a\u2068b`, `a\u2068b`},
		{"PDI U+2069", "a\u2069b", "ab", `a\u2069b`, `a\u2069b`},
		{"ZWSP U+200B", "a\u200bb", "a\u200bb", `a\u200bb`, `a\u200bb`},
		{"ZWJ U+200D", "a\u200db", "a\u200db", `a\u200db`, `a\u200db`},
		{"LRM U+200E", "a\u200eb", "a\u200eb", `a\u200eb`, `a\u200eb`},
		{"RLM U+200F", "a\u200fb", "a\u200fb", `a\u200fb`, `a\u200fb`},
		{"word joiner U+2060", "a\u2060b", "a\u2060b", `a\u2060b`, `a\u2060b`},
		{"invisible plus U+2064", "a\u2064b", "a\u2064b", `a\u2064b`, `a\u2064b`},
		{"BOM U+FEFF", "\ufeffa", "\ufeffa", `\ufeffa`, `\ufeffa`},
		{"soft hyphen U+00AD", "a\u00adb", "a\u00adb", `a\u00adb`, `a\u00adb`},
		{"ALM U+061C", "a\u061cb", "a\u061cb", `a\u061cb`, `a\u061cb`},
		{"tag U+E0041", "a\U000e0041b", "a\U000e0041b", `a\ue0041b`, `a\ue0041b`},
		{"invalid UTF-8", "a\xffb", "a\ufffdb", `a\xffb`, `a\xffb`},
		{"printable non-ASCII", "héllo 世界 ✓", "héllo 世界 ✓", "héllo 世界 ✓", "héllo 世界 ✓"},
	}
	for _, r := range rows {
		for _, m := range []struct {
			mode Mode
			want string
		}{{Output, r.output}, {Block, r.block}, {Line, r.line}} {
			if got := Clean(r.in, m.mode); got != m.want {
				t.Errorf("%s, mode %d: Clean(%q) = %q, want %q", r.class, m.mode, r.in, got, m.want)
			}
			// Whatever the mode, no byte a terminal acts on is left.
			for _, c := range Clean(r.in, m.mode) {
				if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || (c >= 0x80 && c <= 0x9f) || bidiControl(c) {
					t.Errorf("%s, mode %d: %U left in %q", r.class, m.mode, c, Clean(r.in, m.mode))
				}
				if m.mode != Output && hidden(c) {
					t.Errorf("%s, mode %d: format character %U left unescaped", r.class, m.mode, c)
				}
			}
		}
	}
}

func ExampleVisible() {
	fmt.Println(Visible("cat notes\u202etxt.sh\x1b[2J"))
	// Output: cat notes\u202etxt.sh\x1b[2J
}

// Clean applies mode m to s: the table tests run every mode through it.
func Clean(s string, m Mode) string {
	switch m {
	case Block:
		return Visible(s)
	case Line:
		return VisibleLine(s)
	}
	return Sanitize(s)
}
