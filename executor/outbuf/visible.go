package outbuf

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Mode is how the terminal sanitizer treats what a terminal must not be
// sent. hush has one sanitizer with three modes, because three readers
// need three different things:
//
//   - Output (Sanitize, NewSanitizeWriter): tool output and model text,
//     for the model, the screen and the transcript. Escape sequences,
//     C0/C1 controls but \n and \t, DEL and bidirectional-text controls
//     are removed — colour codes are noise, not content — \r becomes a
//     line end and invalid UTF-8 U+FFFD. Other format characters (a
//     zero-width joiner in an emoji, a soft hyphen) stay.
//   - Block (Visible): text a person decides on — an approval's command,
//     a diff, a URL, headers, a body. Nothing is removed: every control
//     byte, ESC, C1 control, invalid byte, bidirectional-text control
//     (U+202A–U+202E, U+2066–U+2069) and other invisible format character
//     (Unicode class Cf: U+200B–U+200F, U+2060–U+2064, U+FEFF, U+00AD …)
//     is written as an escape in plain text (\x1b, \r, \u202e), so the
//     person sees every byte of what will run. \n and \t stay.
//   - Line (VisibleLine): Block for one line of a label, list or error
//     note: \n, \t and \r become a space as well.
type Mode int

const (
	Output Mode = iota
	Block
	Line
)

// Visible is the sanitizer in Block mode.
func Visible(s string) string { return visible(s, false) }

// VisibleLine is the sanitizer in Line mode.
func VisibleLine(s string) string { return visible(s, true) }

func visible(s string, line bool) string {
	if plain(s, line) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case line && (r == '\n' || r == '\t' || r == '\r'):
			b.WriteByte(' ')
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == ansi.ESC:
			b.WriteString(`\x1b`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == ansi.DEL:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// plain reports whether s needs no escaping (the common case, no copy).
func plain(s string, line bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			for _, r := range s[i:] {
				if r == utf8.RuneError || r < 0x20 || r == ansi.DEL || hidden(r) {
					return false // RuneError: invalid, or a real U+FFFD, which stays
				}
			}
			return utf8.ValidString(s[i:])
		}
		if (c < 0x20 && (line || (c != '\n' && c != '\t'))) || c == ansi.DEL {
			return false
		}
	}
	return true
}

// hidden: a C1 control or an invisible format character (Cf), which
// includes every bidirectional-text control.
func hidden(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || (r > 0x7f && unicode.Is(unicode.Cf, r))
}

// bidiControl: the embeddings, overrides and isolates that reorder what
// follows them on the screen (the "Trojan Source" characters).
func bidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
