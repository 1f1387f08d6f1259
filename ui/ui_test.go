package ui

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func TestCompleteBlocks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"partial", ""},
		{"para one\n\npara", "para one\n\n"},
		{"## Head\nbody", "## Head\n"},
		{"```go\nx := 1\n\ny := 2\n", ""},
		{"```go\nx := 1\n\ny := 2\n```\nafter", "```go\nx := 1\n\ny := 2\n```\n"},
		{"| a | b |\n|---|---|\n| 1 | 2 |\n", ""},
		{"| a | b |\n|---|---|\n| 1 | 2 |\n\n", "| a | b |\n|---|---|\n| 1 | 2 |\n\n"},
		{"~~~\n```\n~~~\n", "~~~\n```\n~~~\n"},
	} {
		if got := tc.in[:completeBlocks(tc.in)]; got != tc.want {
			t.Errorf("completeBlocks(%q) cut %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRenderStylesHeadingsAndCode(t *testing.T) {
	t.Parallel()
	var m markdown
	m.color = true
	out := m.render("## Plan\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n", 80)
	plain := stripANSI(out)
	if strings.Contains(plain, "##") || strings.Contains(plain, "```") {
		t.Errorf("markers left in the rendered text:\n%s", plain)
	}
	if !strings.Contains(out, "\x1b[") {
		t.Errorf("nothing styled: %q", out)
	}
	for _, want := range []string{"Plan", "func main() {", `fmt.Println("hi")`} {
		if !strings.Contains(plain, want) {
			t.Errorf("rendered text lacks %q:\n%s", want, plain)
		}
	}
	t.Logf("%q", plain)
	// Without colour: weight and layout stay, no colour is sent.
	var bw markdown
	out = bw.render("## Plan\n\n**bold**\n\n```go\nx := 1\n```\n", 80)
	if regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|38;|48;)[0-9;]*m`).MatchString(out) {
		t.Errorf("colour without colour: %q", out)
	}
	if p := stripANSI(out); strings.Contains(p, "##") || strings.Contains(p, "**") || !strings.Contains(out, "\x1b[1mPlan") {
		t.Errorf("without colour the Markdown is not rendered: %q", out)
	}
}

func TestLateTerminalAnswerIsNotTyped(t *testing.T) {
	t.Parallel()
	c := New(Config{Out: io.Discard})
	m := newModel(c)
	keys := []tea.KeyMsg{
		{Type: tea.KeyRunes, Runes: []rune("]"), Alt: true},
		{Type: tea.KeyRunes, Runes: []rune("11;rgb:1c1c/1c1c/1c1c")},
		{Type: tea.KeyRunes, Runes: []rune("\\"), Alt: true},
		{Type: tea.KeyRunes, Runes: []rune("hi")},
		{Type: tea.KeyRunes, Runes: []rune("]"), Alt: true},
		{Type: tea.KeyRunes, Runes: []rune("10;rgb:dddd/dddd/dddd")},
		{Type: tea.KeyCtrlG},
	}
	for _, k := range keys {
		m.Update(k)
	}
	if got := m.ta.Value(); got != "hi" {
		t.Errorf("editor holds %q, want %q", got, "hi")
	}
}

func TestStatusLineSumsUsageAndCost(t *testing.T) {
	t.Parallel()
	c := New(Config{Out: io.Discard, Model: "m", Dir: "/home/u/p", Home: "/home/u", Sandbox: "on"})
	m := newModel(c)
	c.width.Store(140)
	m.Update(usageMsg{InputTokens: 100, OutputTokens: 20, CachedTokens: 64, CostUSD: 0.0005})
	m.Update(usageMsg{InputTokens: 150, OutputTokens: 5, CostUSD: 0.0007})
	got := stripANSI(m.statusLine())
	want := "m · ~/p · sandbox on · turn 250 in / 25 out (64 cached) · session 275 tokens · $0.0012"
	if got != want {
		t.Errorf("status line %q, want %q", got, want)
	}
	// Narrower than the line: parts give way whole, the directory first,
	// never a count cut mid-number.
	for _, w := range []struct {
		width int
		want  string
	}{
		{86, want},
		{85, "m · sandbox on · turn 250 in / 25 out (64 cached) · session 275 tokens · $0.0012"},
		{60, "m · turn 250 in / 25 out · session 275 tokens · $0.0012"},
		{50, "m · turn 250 in / 25 out · session 275 tokens"},
		{40, "m · turn 250 in / 25 out"},
	} {
		c.width.Store(int64(w.width))
		if got := stripANSI(m.statusLine()); got != w.want {
			t.Errorf("at %d columns the status line is %q, want %q", w.width, got, w.want)
		}
	}
	out, _ := m.slash("/usage")
	if !strings.Contains(stripANSI(out), "this turn: 250 input, 25 output tokens (64 input tokens from the cache)") || !strings.Contains(out, "$0.0012") {
		t.Errorf("/usage: %q", out)
	}
}

func TestPasteAndHistoryCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	c := New(Config{Out: io.Discard})
	m := newModel(c)
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Paste: true, Runes: []rune("a\x1b]52;c;cHduZWQ=\x07b\r\nc")})
	if got := m.ta.Value(); got != "ab\nc" {
		t.Errorf("pasted %q", got)
	}
	dir := t.TempDir()
	path := dir + "/history.jsonl"
	if err := os.WriteFile(path, []byte(`"x\u001b[2Jy"`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &History{Path: path, Redact: func(s string) string { return s }}
	if err := h.Load(); err != nil {
		t.Fatal(err)
	}
	if e := h.Entries(); len(e) != 1 || e[0] != "xy" {
		t.Errorf("history entries %q", e)
	}
}

// /tools says which AGENTS.md files the system prompt carries, and that
// one was cut by the size cap; with none it says so.
func TestToolsNamesLoadedInstructions(t *testing.T) {
	t.Parallel()
	loaded := "instructions: /home/u/.config/hush/AGENTS.md, /home/u/p/AGENTS.md (120 bytes cut by the 32 KiB size cap)"
	c := New(Config{Out: io.Discard, Model: "m", Dir: "/home/u/p", Home: "/home/u",
		Tools:        func() []ToolInfo { return []ToolInfo{{Name: "read", Description: "reads", Sandbox: "in hush"}} },
		Instructions: func() string { return loaded }})
	out, _ := newModel(c).slash("/tools")
	out = stripANSI(out)
	for _, want := range []string{"read", "/home/u/.config/hush/AGENTS.md", "/home/u/p/AGENTS.md (120 bytes cut by the 32 KiB size cap)"} {
		if !strings.Contains(out, want) {
			t.Errorf("/tools lacks %q:\n%s", want, out)
		}
	}
	c = New(Config{Out: io.Discard, Model: "m", Tools: func() []ToolInfo { return nil }, Instructions: func() string { return "" }})
	if out, _ := newModel(c).slash("/tools"); !strings.Contains(stripANSI(out), "no AGENTS.md") {
		t.Errorf("/tools without instructions: %q", out)
	}
}

// Enter during a turn queues the message: it stays in the editor, the
// status says so, and it is sent when the turn ends; Ctrl-C stopping the
// turn keeps it in the editor, unsent.
func TestEnterDuringATurnQueues(t *testing.T) {
	t.Parallel()
	c := New(Config{Out: io.Discard, Turn: func(context.Context, string) error { return nil }})
	m := newModel(c)
	type_ := func(s string) { m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}) }
	cancelled := false
	m.busy, m.cancel = true, func() { cancelled = true }
	type_("next question")
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if !m.queued || m.ta.Value() != "next question" || !strings.Contains(stripANSI(m.View()), "your message is queued") {
		t.Fatalf("Enter during a turn: queued %v, editor %q, view:\n%s", m.queued, m.ta.Value(), stripANSI(m.View()))
	}
	m.Update(tea.KeyMsg{Type: tea.KeyCtrlC})
	if !cancelled || m.queued || m.ta.Value() != "next question" {
		t.Fatalf("Ctrl-C: cancelled %v, queued %v, editor %q", cancelled, m.queued, m.ta.Value())
	}
	m.Update(turnDoneMsg{})
	if m.busy || m.ta.Value() != "next question" {
		t.Fatalf("a cancelled turn sent the queued message (busy %v, editor %q)", m.busy, m.ta.Value())
	}
	// Queued again, and the turn ends on its own: it is sent.
	m.busy, m.cancel = true, func() {}
	m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m.Update(turnDoneMsg{})
	if !m.busy || m.ta.Value() != "" || m.queued {
		t.Fatalf("the queued message was not sent when the turn ended (busy %v, editor %q)", m.busy, m.ta.Value())
	}
}

// TestPendingBlockNeverDrawsRawMarkdown: a block streamed token by token,
// faster than the 40 ms between renders, is drawn rendered or not at all;
// a new block is never stood in for by the last one's rendering.
func TestPendingBlockNeverDrawsRawMarkdown(t *testing.T) {
	t.Parallel()
	c := New(Config{Out: io.Discard, Color: true})
	m := newModel(c)
	for _, p := range []string{"```sh\n", "```sh\necho ", "```sh\necho hi\n", "Run **this** now"} {
		m.Update(pendingMsg(p))
		got := stripANSI(m.pendingView())
		if strings.Contains(got, "```") || strings.Contains(got, "**") {
			t.Errorf("pending %q drew raw Markdown: %q", p, got)
		}
		if p[0] == 'R' && strings.Contains(got, "echo") {
			t.Errorf("a new block showed the last block's rendering: %q", got)
		}
	}
	if got := stripANSI(m.pendingView()); !strings.Contains(got, "Run this now") {
		t.Errorf("a positive control: the pending block was never drawn: %q", got)
	}
}

// TestLongPendingBlockIsRendered: of a block too long to re-render whole,
// the last lines are drawn rendered — inside a code fence, as code.
func TestLongPendingBlockIsRendered(t *testing.T) {
	t.Parallel()
	c := New(Config{Out: io.Discard, Color: true})
	var code, para strings.Builder
	code.WriteString("```go\n")
	for i := 0; code.Len() < 6000; i++ {
		fmt.Fprintf(&code, "x%d := **p // line %d\n", i, i)
	}
	for i := 0; para.Len() < 6000; i++ {
		fmt.Fprintf(&para, "a **strong** word, line %d\n", i)
	}
	for _, tc := range []struct {
		name, block, want, raw string
	}{
		{"code", code.String(), "x", "```"},
		{"paragraph", para.String(), "a strong word", "**strong**"},
	} {
		m := newModel(c)
		m.Update(pendingMsg(tc.block))
		got := stripANSI(m.pendingView())
		if strings.Contains(got, tc.raw) {
			t.Errorf("%s: the long block drew raw Markdown %q:\n%s", tc.name, tc.raw, got)
		}
		if !strings.Contains(got, tc.want) || strings.Count(got, "\n") > 40 {
			t.Errorf("%s: want its last lines rendered, got:\n%s", tc.name, got)
		}
	}
	// Inside the fence the lines stay the code's own lines; drawn as a
	// paragraph they would be joined and re-wrapped.
	m := newModel(c)
	m.Update(pendingMsg(code.String()))
	lines := strings.Split(strings.TrimSpace(code.String()), "\n")
	last := lines[len(lines)-1]
	found := false
	for _, l := range strings.Split(stripANSI(m.pendingView()), "\n") {
		found = found || strings.TrimSpace(l) == last
	}
	if !found {
		t.Errorf("the fenced lines were not drawn as code lines (want %q):\n%s", last, stripANSI(m.pendingView()))
	}
}
