package ui

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/charmbracelet/x/ansi"
	"github.com/hushcli/hush/ui/mdext"
	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// The chat renders Markdown itself, on goldmark's parser, rather than
// through glamour: glamour links chroma, whose styles and lexers packages
// took 8.7 of hush's 15.2 ms of package initialisation on every start —
// `hush --version` included — measured with GODEBUG=inittrace=1, best of
// 8 runs. goldmark's own init is under 0.5 ms.

// sgr codes the renderer uses; with colour off only weight, italics,
// underline and strike-through are sent (NO_COLOR allows those).
type mdStyle struct {
	color bool
}

func (s mdStyle) wrap(text string, codes ...string) string {
	var keep []string
	for _, c := range codes {
		if !s.color && isColorCode(c) {
			continue
		}
		keep = append(keep, c)
	}
	if len(keep) == 0 || text == "" {
		return text
	}
	return "\x1b[" + strings.Join(keep, ";") + "m" + text + "\x1b[0m"
}

func isColorCode(c string) bool {
	return strings.HasPrefix(c, "38;") || strings.HasPrefix(c, "48;") ||
		(len(c) == 2 && (c[0] == '3' || c[0] == '4' || c[0] == '9'))
}

const (
	cBold      = "1"
	cItalic    = "3"
	cUnderline = "4"
	cStrike    = "9"
)

func fg(n int) string { return "38;5;" + strconv.Itoa(n) }

// mdParser is built on the first Markdown a chat renders, not at start:
// hush --version and hush run never pay for it (nor for goldmark's
// extension package, which mdext replaces: see its doc).
var mdParser = sync.OnceValue(mdext.NewParser)

// renderMarkdown renders src for a terminal width columns wide.
func renderMarkdown(src string, width int, color bool) string {
	if width < 20 {
		width = 20
	}
	b := []byte(src)
	doc := mdParser().Parse(text.NewReader(b))
	r := &mdRenderer{src: b, st: mdStyle{color: color}}
	var blocks []string
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if s := r.block(n, width); s != "" {
			blocks = append(blocks, s)
		}
	}
	return strings.Join(blocks, "\n\n")
}

type mdRenderer struct {
	src []byte
	st  mdStyle
}

func (r *mdRenderer) block(n gast.Node, width int) string {
	switch n := n.(type) {
	case *gast.Heading:
		t := r.inlines(n)
		switch n.Level {
		case 1:
			return r.st.wrap(" "+t+" ", cBold, fg(230), "48;5;62")
		case 2:
			return r.st.wrap(t, cBold, fg(75))
		case 3:
			return r.st.wrap(t, cBold, fg(110))
		default:
			return r.st.wrap(t, cBold)
		}
	case *gast.Paragraph, *gast.TextBlock:
		return ansi.Wrap(r.inlines(n), width, "")
	case *gast.ThematicBreak:
		return r.st.wrap(strings.Repeat("─", min(width, 40)), fg(240))
	case *gast.FencedCodeBlock:
		return r.code(n, string(n.Language(r.src)))
	case *gast.CodeBlock:
		return r.code(n, "")
	case *gast.Blockquote:
		var parts []string
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			parts = append(parts, r.block(c, width-2))
		}
		return prefixLines(strings.Join(parts, "\n\n"), r.st.wrap("│ ", fg(240)))
	case *gast.List:
		return r.list(n, width)
	case *east.Table:
		return r.table(n, width)
	case *gast.HTMLBlock:
		return strings.TrimRight(r.lines(n), "\n")
	}
	// Anything else: its text as it came.
	return strings.TrimRight(r.lines(n), "\n")
}

// lines is a block's raw source lines.
func (r *mdRenderer) lines(n gast.Node) string {
	var b strings.Builder
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		b.Write(seg.Value(r.src))
	}
	return b.String()
}

func (r *mdRenderer) list(n *gast.List, width int) string {
	var items []string
	num := n.Start
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		bullet := "• "
		if n.IsOrdered() {
			bullet = fmt.Sprintf("%d. ", num)
			num++
		}
		var parts []string
		for b := c.FirstChild(); b != nil; b = b.NextSibling() {
			parts = append(parts, r.block(b, width-len(bullet)))
		}
		sep := "\n"
		if !n.IsTight {
			sep = "\n\n"
		}
		body := strings.Join(parts, sep)
		pad := strings.Repeat(" ", ansi.StringWidth(bullet))
		lines := strings.Split(body, "\n")
		for i := range lines {
			if i == 0 {
				lines[i] = r.st.wrap(bullet, fg(75)) + lines[i]
			} else if lines[i] != "" {
				lines[i] = pad + lines[i]
			}
		}
		items = append(items, strings.Join(lines, "\n"))
	}
	if n.IsTight {
		return strings.Join(items, "\n")
	}
	return strings.Join(items, "\n\n")
}

func (r *mdRenderer) code(n gast.Node, lang string) string {
	body := strings.TrimRight(r.lines(n), "\n")
	var out []string
	for _, l := range strings.Split(body, "\n") {
		out = append(out, "  "+highlight(l, lang, r.st))
	}
	return strings.Join(out, "\n")
}

func (r *mdRenderer) table(t *east.Table, width int) string {
	var rows [][]string
	header := 0
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, r.inlines(c))
		}
		if _, ok := row.(*east.TableHeader); ok {
			header = len(rows) + 1
		}
		rows = append(rows, cells)
	}
	cols := 0
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return ""
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	// Too wide: cut the widest columns until it fits.
	total := func() int {
		s := 3 * (cols - 1)
		for _, w := range widths {
			s += w
		}
		return s
	}
	for total() > width {
		wi := 0
		for i, w := range widths {
			if w > widths[wi] {
				wi = i
			}
		}
		if widths[wi] <= 4 {
			break
		}
		widths[wi]--
	}
	sep := r.st.wrap(" │ ", fg(240))
	var out []string
	for ri, row := range rows {
		var cells []string
		for i := 0; i < cols; i++ {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			if ansi.StringWidth(c) > widths[i] {
				c = ansi.Truncate(c, widths[i], "…")
			}
			c += strings.Repeat(" ", widths[i]-ansi.StringWidth(c))
			if ri < header {
				c = r.st.wrap(c, cBold)
			}
			cells = append(cells, c)
		}
		out = append(out, strings.TrimRight(strings.Join(cells, sep), " "))
		if ri == header-1 {
			var parts []string
			for _, w := range widths {
				parts = append(parts, strings.Repeat("─", w))
			}
			out = append(out, r.st.wrap(strings.Join(parts, "─┼─"), fg(240)))
		}
	}
	return strings.Join(out, "\n")
}

// inlines renders a node's inline children.
func (r *mdRenderer) inlines(n gast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(&b, c)
	}
	return b.String()
}

func (r *mdRenderer) inline(b *strings.Builder, n gast.Node) {
	switch n := n.(type) {
	case *gast.Text:
		b.Write(n.Segment.Value(r.src))
		switch {
		case n.HardLineBreak():
			b.WriteString("\n")
		case n.SoftLineBreak():
			b.WriteString(" ")
		}
	case *gast.String:
		b.Write(n.Value)
	case *gast.CodeSpan:
		var s strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*gast.Text); ok {
				s.Write(t.Segment.Value(r.src))
			}
		}
		b.WriteString(r.st.wrap(s.String(), fg(209)))
	case *gast.Emphasis:
		code := cItalic
		if n.Level >= 2 {
			code = cBold
		}
		b.WriteString(r.st.wrap(r.inlines(n), code))
	case *east.Strikethrough:
		b.WriteString(r.st.wrap(r.inlines(n), cStrike))
	case *gast.Link:
		label := r.inlines(n)
		b.WriteString(r.st.wrap(label, cUnderline, fg(75)))
		if dest := string(n.Destination); dest != "" && dest != label {
			b.WriteString(r.st.wrap(" ("+dest+")", fg(244)))
		}
	case *gast.AutoLink:
		b.WriteString(r.st.wrap(string(n.URL(r.src)), cUnderline, fg(75)))
	case *gast.Image:
		b.WriteString(r.st.wrap("[image: "+r.inlines(n)+"] "+string(n.Destination), fg(244)))
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.WriteString("[x] ")
		} else {
			b.WriteString("[ ] ")
		}
	case *gast.RawHTML:
		segs := n.Segments
		for i := 0; i < segs.Len(); i++ {
			s := segs.At(i)
			b.Write(s.Value(r.src))
		}
	default:
		b.WriteString(r.inlines(n))
	}
}

func prefixLines(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}

// keywords are highlighted in code of any language: the common ones of
// Go, Python, JavaScript/TypeScript, Rust, shell and C. A small lexer
// rather than chroma (see the note at the top of this file); it colours
// keywords, strings, numbers and comments, which is what a reader scans for.
var keywords = sync.OnceValue(func() map[string]bool {
	return wordSet(`break case catch chan class const continue def default defer del do elif else
		enum except export extends false finally fn for from func go if impl import in interface let loop map match
		mod mut new nil none null package pass pub raise range return select self static struct super switch this
		throw trait true try type use var void while with yield async await lambda not and or is None True False
		fi then done esac function local echo`)
})

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// highlight colours one line of code.
func highlight(line, lang string, st mdStyle) string {
	plain := func(s string) string { return st.wrap(s, fg(252)) }
	if !st.color {
		return line
	}
	comment := "//"
	switch strings.ToLower(lang) {
	case "sh", "bash", "shell", "zsh", "console", "python", "py", "ruby", "rb", "yaml", "yml", "toml", "perl", "r", "make", "makefile", "dockerfile":
		comment = "#"
	case "sql", "lua", "haskell":
		comment = "--"
	}
	var b strings.Builder
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case strings.HasPrefix(line[i:], comment):
			b.WriteString(st.wrap(line[i:], fg(244), cItalic))
			return b.String()
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(line) && line[j] != c {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(line))
			b.WriteString(st.wrap(line[i:j], fg(150)))
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && (isWordByte(line[j]) || line[j] == '.') {
				j++
			}
			b.WriteString(st.wrap(line[i:j], fg(179)))
			i = j
		case isWordByte(c):
			j := i
			for j < len(line) && isWordByte(line[j]) {
				j++
			}
			w := line[i:j]
			if keywords()[w] {
				b.WriteString(st.wrap(w, fg(204), cBold))
			} else {
				b.WriteString(plain(w))
			}
			i = j
		default:
			j := i
			for j < len(line) && !isWordByte(line[j]) && line[j] != '"' && line[j] != '\'' && line[j] != '`' &&
				!(line[j] >= '0' && line[j] <= '9') && !strings.HasPrefix(line[j:], comment) {
				j++
			}
			if j == i {
				j = i + 1
			}
			b.WriteString(plain(line[i:j]))
			i = j
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 0x80 || unicode.IsLetter(rune(c)) || (c >= '0' && c <= '9')
}
