package mdext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// corpus holds each construct the three extensions parse, and near misses
// they must leave alone.
var corpus = []string{
	"| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 |\n",
	"a | b\n:-- | --:\nx | y | z\n",
	"text before\n| h |\n| - |\n| `a \\| b` |\n",
	"| not | a table |\n| x | y |\n",
	"|a|b|\n|---|---\n",
	"~~gone~~ and ~one~ and ~~~three~~~ and a~~b~~c\n",
	"- [x] done\n- [ ] open\n- [X] also\n- not [x] a box\n\n1. [ ] numbered\n",
	"[x] not in a list\n",
	"# Title\n\nSome *emphasis*, `code`, a [link](http://x) and <b>html</b>.\n\n```go\nfunc f() {}\n```\n",
}

// dump is the tree as text: each node's kind, depth, text and the
// extension nodes' own fields.
func dump(src []byte, n gast.Node) string {
	var b strings.Builder
	depth := 0
	_ = gast.Walk(n, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			depth--
			return gast.WalkContinue, nil
		}
		fmt.Fprintf(&b, "%s%s", strings.Repeat(" ", depth), n.Kind())
		switch n := n.(type) {
		case *gast.Text:
			fmt.Fprintf(&b, " %q", n.Segment.Value(src))
		case *east.Table:
			fmt.Fprintf(&b, " %v", n.Alignments)
		case *east.TableCell:
			fmt.Fprintf(&b, " %v", n.Alignment)
		case *east.TaskCheckBox:
			fmt.Fprintf(&b, " %v", n.IsChecked)
		}
		b.WriteString("\n")
		depth++
		return gast.WalkContinue, nil
	})
	return b.String()
}

// TestSameTreeAsGoldmark: mdext parses every sample to the tree goldmark
// with its Table, Strikethrough and TaskList extensions builds.
func TestSameTreeAsGoldmark(t *testing.T) {
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList))
	p := NewParser()
	for _, s := range corpus {
		src := []byte(s)
		want := dump(src, md.Parser().Parse(text.NewReader(src)))
		got := dump(src, p.Parse(text.NewReader(src)))
		if got != want {
			t.Errorf("%q:\ngot\n%s\nwant (goldmark)\n%s", s, got, want)
		}
	}
}

// TestExtensionsParse is the control for TestSameTreeAsGoldmark: the
// corpus does hold tables, strike-through and checkboxes, which plain
// CommonMark does not parse.
func TestExtensionsParse(t *testing.T) {
	all := ""
	for _, s := range corpus {
		src := []byte(s)
		all += dump(src, NewParser().Parse(text.NewReader(src)))
	}
	for _, kind := range []gast.NodeKind{east.KindTable, east.KindTableCell, east.KindStrikethrough, east.KindTaskCheckBox} {
		if !strings.Contains(all, kind.String()+"\n") && !strings.Contains(all, kind.String()+" ") {
			t.Errorf("no %s node in the corpus's trees", kind)
		}
	}
	plain := goldmark.New()
	src := []byte(corpus[0])
	if d := dump(src, plain.Parser().Parse(text.NewReader(src))); strings.Contains(d, east.KindTable.String()) {
		t.Errorf("plain CommonMark parsed a table:\n%s", d)
	}
}
