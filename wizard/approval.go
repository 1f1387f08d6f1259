package wizard

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/outbuf"
)

// Approval is the permission prompt's content for one gate request, as
// plain text: nothing in it is rendered as Markdown, nothing is cut
// without saying so, and every string that came from the model or a tool
// is made visible — a control byte, an escape sequence or a bidi override
// is shown as \x1b, \r, \u202e …, never sent to the terminal.
//
// It is a component: Header is what to print before asking (the whole
// command, the directory, the secrets the call would receive), and
// ChoiceModel is the bubbletea model that asks. A chat UI embeds the model;
// the Prompter runs it on its own.
type Approval struct {
	Title string
	// Command is the command the call runs, one entry per line, made
	// visible; empty when the call runs none.
	Command []string
	Dir     string
	// Secrets the call would receive, by name; HasCommand says the list is
	// about a command (an empty one then means none).
	Secrets    []string
	HasCommand bool
	// Detail is the arguments of a call without a command (an MCP tool),
	// or the reason given with a secret read, made visible.
	Detail string
	Note   string
	Diff   string
	// HTTP is an http call's request as it will be sent: the method and
	// URL line, one line per header, then the body, each made visible.
	HTTP []string
	// Body is the http call's body, one entry a line, made visible;
	// Header shows its first bodyLines and v prints the rest.
	Body []string
	// Options are the answers, in order; each has its key.
	Options []Option
	// NoColor: no colour and no reverse video (NO_COLOR, --plain).
	NoColor bool
	// Width is the terminal's columns (0: unknown). Header wraps a line
	// wider than that itself, each further row behind the same gutter and
	// indented, since the terminal would continue it at the left edge.
	Width int
}

// Option is one answer of the prompt.
type Option struct {
	Key    string // "y", "s", "d", "n"
	Label  string
	Choice executor.Choice
}

// headLines and tailLines are what Header shows of a command longer than
// headLines+tailLines+fold lines; the v key prints the rest.
const (
	headLines = 20
	tailLines = 10
	fold      = 10
)

// ruleWidth is the longest exact command written out in the session
// option; a longer one is named "this command", shown whole above.
const ruleWidth = 60

// bodyLines is what Header shows of an http call's body; v prints it all.
const bodyLines = 20

// stopOption is what Esc and Ctrl-C answer: deny, and end the turn.
var stopOption = Option{"esc", "Stopped: the call is denied and the turn ends", executor.ChoiceStop}

// NewApproval builds the prompt for req.
func NewApproval(req executor.Request) Approval {
	a := Approval{Dir: req.Dir, Secrets: req.Secrets, HasCommand: req.HasCommand, Diff: req.Diff}
	once := Option{"y", "Allow once", executor.ChoiceAllowOnce}
	deny := Option{"n", "Deny", executor.ChoiceDeny}
	why := Option{"t", "Deny and tell the model why", executor.ChoiceDenyReason}
	switch name, isRead := strings.CutPrefix(req.GateID, executor.GateVaultRead); {
	case isRead:
		a.Title = fmt.Sprintf("%s wants the secret %s", Visible(req.Subject), Visible(name))
		a.Note = "Only that tool gets it; output shows [REDACTED:" + Visible(name) + "]."
		a.Detail = Visible(req.Detail)
		a.Options = []Option{once, {"s", "Allow " + Visible(req.Subject) + " to read " + Visible(name) + " for this session", executor.ChoiceAllowSession}, deny, why}
		return a
	case strings.HasPrefix(req.GateID, executor.GateToolRun):
		a.Title = fmt.Sprintf("Run %s?", Visible(strings.TrimPrefix(req.GateID, executor.GateToolRun)))
	default:
		a.Title = fmt.Sprintf("Allow %s for %s?", Visible(req.GateID), Visible(req.Subject))
	}
	switch {
	case req.HTTP != nil:
		h := req.HTTP
		a.Title = "Send this HTTP request?"
		a.HTTP = append(a.HTTP, outbuf.VisibleLine(h.Method)+" "+outbuf.VisibleLine(h.URL))
		for _, kv := range h.Headers {
			a.HTTP = append(a.HTTP, outbuf.VisibleLine(kv[0])+": "+outbuf.VisibleLine(kv[1]))
		}
		if h.Body != "" {
			a.Body = strings.Split(Visible(strings.TrimRight(h.Body, "\n")), "\n")
		}
		a.Options = []Option{once, {"s", "Allow http requests to " + outbuf.VisibleLine(h.Host) + " for this session", executor.ChoiceAllowSession}, deny, why}
	case req.HasCommand:
		a.Command = strings.Split(Visible(strings.TrimRight(req.Command, "\n")), "\n")
		rules := executor.SuggestRules(req.Subject, req.Command)
		named := outbuf.VisibleLine(executor.RulesString(rules))
		label := "Allow " + named + " for this session"
		exact := len(rules) == 1 && !rules[0].Prefix && (len(rules[0].Text) > ruleWidth || strings.Contains(rules[0].Text, "\n"))
		if exact {
			label = "Allow exactly this command, shown above, for this session"
		}
		a.Options = []Option{once, {"s", label, executor.ChoiceAllowSession}}
		if req.CanSave {
			saved := make([]string, len(rules))
			for i, r := range rules {
				saved[i] = "command = " + outbuf.VisibleLine(fmt.Sprintf("%q", r.Pattern()))
			}
			what := strings.Join(saved, ", ")
			if exact {
				what = "this exact command"
			}
			a.Options = append(a.Options, Option{"p", "Always allow in this project: save " + what + " to your config.toml", executor.ChoiceAllowProject})
		}
		a.Options = append(a.Options, deny, why)
	case req.Path != "":
		a.Detail = Visible(req.Detail)
		dir := filepath.Dir(req.Path) + string(filepath.Separator)
		a.Options = []Option{once,
			{"s", "Allow for this session: " + Visible(req.Path), executor.ChoiceAllowSession},
			{"d", "Allow for this session: every file in " + Visible(dir), executor.ChoiceAllowSessionDir},
			deny, why}
	default:
		a.Detail = Visible(req.Detail)
		a.Options = []Option{once, {"s", "Allow every " + Visible(req.Subject) + " call for this session", executor.ChoiceAllowSession}, deny, why}
	}
	return a
}

// Folded reports whether Header shows the command, or an http body, in
// part.
func (a Approval) Folded() bool {
	return len(a.Command) > headLines+tailLines+fold || len(a.Body) > bodyLines
}

// Header is everything shown before the choice. A command is shown whole,
// each line behind a gutter; one too long for a screen shows its first and
// last lines and says how many are left out and how to see them (v).
func (a Approval) Header() string {
	var b strings.Builder
	b.WriteString("\n")
	a.prose(&b, "", a.Title)
	if len(a.Command) > 0 {
		n := len(a.Command)
		noun := "lines"
		if n == 1 {
			noun = "line"
		}
		a.prose(&b, "  ", fmt.Sprintf("command (%d %s, exactly as it will run):", n, noun))
		write := func(lines []string) {
			for _, l := range lines {
				a.gutter(&b, l)
			}
		}
		if a.Folded() {
			write(a.Command[:headLines])
			a.prose(&b, "  ┆ ", fmt.Sprintf("… %d more lines not shown here: press v to print the whole command …", n-headLines-tailLines))
			write(a.Command[n-tailLines:])
		} else {
			write(a.Command)
		}
	}
	if len(a.HTTP) > 0 {
		for _, h := range a.HTTP {
			a.gutter(&b, h)
		}
		if len(a.HTTP) == 1 {
			b.WriteString("  │ (no headers)\n")
		}
		switch n := len(a.Body); {
		case n == 0:
			b.WriteString("  │ (no body)\n")
		case n > bodyLines:
			fmt.Fprintf(&b, "  body (%d lines):\n", n)
			for _, l := range a.Body[:bodyLines] {
				a.gutter(&b, l)
			}
			a.prose(&b, "  ┆ ", fmt.Sprintf("… %d more lines not shown here: press v to print the whole body …", n-bodyLines))
		default:
			b.WriteString("  body:\n")
			for _, l := range a.Body {
				a.gutter(&b, l)
			}
		}
	}
	if a.Detail != "" && len(a.HTTP) == 0 {
		for _, l := range strings.Split(a.Detail, "\n") {
			a.rows(&b, "  ", "    ", l)
		}
	}
	if a.Dir != "" {
		a.rows(&b, "  in ", "     ", Visible(a.Dir))
	}
	switch {
	case len(a.Secrets) > 0:
		vis := make([]string, len(a.Secrets))
		for i, s := range a.Secrets {
			vis[i] = Visible(s)
		}
		a.prose(&b, "  ", "secrets it would receive: "+strings.Join(vis, ", ")+" (each read is asked about on its own)")
	case a.HasCommand:
		a.prose(&b, "  ", "secrets it would receive: none")
	}
	if a.Note != "" {
		a.prose(&b, "  ", a.Note)
	}
	return b.String()
}

// FullCommand is the whole command (or http body), for the v key.
func (a Approval) FullCommand() string {
	var b strings.Builder
	if len(a.Body) > 0 && len(a.Command) == 0 {
		a.prose(&b, "  ", fmt.Sprintf("whole body (%d lines):", len(a.Body)))
		for _, l := range a.Body {
			a.gutter(&b, l)
		}
		return b.String()
	}
	a.prose(&b, "  ", fmt.Sprintf("whole command (%d lines):", len(a.Command)))
	for _, l := range a.Command {
		a.gutter(&b, l)
	}
	return b.String()
}

// gutter writes one line of a command or request behind the "  │ "
// gutter (rows).
func (a Approval) gutter(b *strings.Builder, l string) { a.rows(b, "  │ ", "  │   ", l) }

// rows writes l after lead. A line wider than the terminal is wrapped
// here, every character kept, each further row behind cont (for a
// command: the gutter and two more spaces), so a wrapped line reads as one
// and never restarts at the left edge. Tabs are expanded to the
// terminal's stops for the wrap.
func (a Approval) rows(b *strings.Builder, lead, cont, l string) {
	if a.Width <= 0 || ansi.StringWidth(lead)+ansi.StringWidth(l) <= a.Width && !strings.Contains(l, "\t") {
		b.WriteString(lead + l + "\n")
		return
	}
	l = expandTabs(l, ansi.StringWidth(lead))
	prefix, limit := lead, a.Width-ansi.StringWidth(lead)
	if a.Width-ansi.StringWidth(cont) < 10 {
		b.WriteString(lead + l + "\n") // too narrow to wrap usefully: the terminal wraps
		return
	}
	for {
		row, rest := cutWidth(l, limit)
		b.WriteString(prefix + row + "\n")
		if rest == "" {
			return
		}
		l, prefix, limit = rest, cont, a.Width-ansi.StringWidth(cont)
	}
}

// prose writes hush's own words after lead, wrapped at spaces to the
// terminal's width, further rows indented two more columns.
func (a Approval) prose(b *strings.Builder, lead, text string) {
	w := a.Width - ansi.StringWidth(lead) - 2
	if a.Width <= 0 || ansi.StringWidth(lead)+ansi.StringWidth(text) <= a.Width || w < 10 {
		b.WriteString(lead + text + "\n")
		return
	}
	cont := strings.Repeat(" ", ansi.StringWidth(lead)+2)
	for i, r := range strings.Split(ansi.Wrap(text, w, ""), "\n") {
		if i == 0 {
			b.WriteString(lead + strings.TrimRight(r, " ") + "\n")
		} else {
			b.WriteString(cont + strings.TrimRight(r, " ") + "\n")
		}
	}
}

// cutWidth splits l after the most characters that fit in cols columns
// (at least one), keeping every byte: row+rest == l.
func cutWidth(l string, cols int) (row, rest string) {
	w := 0
	for i, r := range l {
		rw := ansi.StringWidth(string(r))
		if w+rw > cols && i > 0 {
			return l[:i], l[i:]
		}
		w += rw
	}
	return l, ""
}

// expandTabs replaces each tab in l by the spaces to the next multiple of
// 8 columns, counting from col (where l starts on the screen).
func expandTabs(l string, col int) string {
	if !strings.Contains(l, "\t") {
		return l
	}
	var b strings.Builder
	for _, r := range l {
		if r == '\t' {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col += ansi.StringWidth(string(r))
	}
	return b.String()
}

// ChoiceLine lists every option with its key.
func (a Approval) ChoiceLine() string {
	parts := make([]string, len(a.Options))
	for i, o := range a.Options {
		parts[i] = "[" + o.Key + "] " + o.Label
	}
	return strings.Join(parts, "   ")
}

// Hint says how to answer.
func (a Approval) Hint() string {
	keys := make([]string, len(a.Options))
	for i, o := range a.Options {
		keys[i] = o.Key
	}
	h := "press " + strings.Join(keys, ", ") + " (or ←/→ and Enter); Esc or Ctrl-C denies and ends the turn"
	switch {
	case len(a.Body) > bodyLines:
		h += "; v prints the whole body"
	case a.Folded():
		h += "; v prints the whole command"
	}
	return h
}

// Choose returns the option for a key ("y", "s", "d", "n"), upper case
// too.
func (a Approval) Choose(key string) (Option, bool) {
	for _, o := range a.Options {
		if strings.EqualFold(key, o.Key) {
			return o, true
		}
	}
	return Option{}, false
}

// ChoiceModel asks for one of an Approval's options. It is a bubbletea
// model a chat UI can embed (send it key messages, read Done and Choice)
// or run as a program of its own (Prompter.Confirm).
type ChoiceModel struct {
	A      Approval
	cursor int
	// pager shows a diff longer than the screen, a page at a time
	// (WithDiffPager); nil when the diff was printed whole above.
	pager  *diffPager
	chosen *Option
	// by names the key that denied without choosing (Esc, Ctrl-C), so
	// the answer line says why.
	by string
	// width is the terminal's (0: unknown); View wraps each line to it,
	// since the renderer would cut a longer one at the screen's edge.
	width int
	// reason is the line typed after t (asking says it is being typed).
	reason []rune
	asking bool
}

// NewChoiceModel starts on "allow once".
func NewChoiceModel(a Approval) ChoiceModel { return ChoiceModel{A: a} }

// Done reports whether an option was chosen.
func (m ChoiceModel) Done() bool { return m.chosen != nil }

// Choice is the chosen answer; deny until one is chosen.
func (m ChoiceModel) Choice() executor.Choice {
	if m.chosen == nil {
		return executor.ChoiceDeny
	}
	return m.chosen.Choice
}

// Answer is the chosen answer with the reason typed after t.
func (m ChoiceModel) Answer() executor.Answer {
	a := executor.Answer{Choice: m.Choice()}
	if a.Choice == executor.ChoiceDenyReason {
		a.Reason = strings.TrimSpace(string(m.reason))
	}
	return a
}

func (m ChoiceModel) Init() tea.Cmd { return nil }

// WithWidth wraps the options and the hint to a terminal cols wide.
func (m ChoiceModel) WithWidth(cols int) ChoiceModel {
	m.width, m.A.Width = cols, cols
	return m
}

func (m ChoiceModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ws, ok := msg.(tea.WindowSizeMsg); ok {
		m.width, m.A.Width = ws.Width, ws.Width
		if m.pager != nil {
			m.pager.resize(ws.Height, ws.Width)
		}
		return m, nil
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok || m.chosen != nil {
		return m, nil
	}
	if m.asking {
		return m.reasonKey(k)
	}
	if m.pager != nil && m.pager.key(k.String()) {
		return m, nil
	}
	switch s := k.String(); s {
	case "esc", "ctrl+c", "ctrl+d":
		o := stopOption
		m.chosen = &o
		m.by = map[string]string{"esc": "Esc", "ctrl+c": "Ctrl-C", "ctrl+d": "Ctrl-D"}[s]
		return m, tea.Quit
	case "left", "shift+tab", "h":
		m.cursor = (m.cursor + len(m.A.Options) - 1) % len(m.A.Options)
	case "right", "tab", "l":
		m.cursor = (m.cursor + 1) % len(m.A.Options)
	case "enter":
		o := m.A.Options[m.cursor]
		if o.Choice == executor.ChoiceDenyReason {
			m.asking = true
			return m, nil
		}
		m.chosen = &o
		return m, tea.Quit
	case "v", "V":
		if m.A.Folded() {
			return m, tea.Println(strings.TrimSuffix(m.A.FullCommand(), "\n"))
		}
	default:
		if o, ok := m.A.Choose(s); ok {
			if o.Choice == executor.ChoiceDenyReason {
				m.asking = true
				return m, nil
			}
			m.chosen = &o
			return m, tea.Quit
		}
	}
	return m, nil
}

// reasonKey edits the one line typed after t: Enter sends it, Esc goes
// back to the options, Ctrl-C stops the turn.
func (m ChoiceModel) reasonKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.Type {
	case tea.KeyEnter:
		o, _ := m.A.Choose("t")
		m.chosen, m.asking = &o, false
		return m, tea.Quit
	case tea.KeyEsc:
		m.asking, m.reason = false, nil
	case tea.KeyCtrlC:
		o := stopOption
		m.chosen, m.asking, m.by = &o, false, "Ctrl-C"
		return m, tea.Quit
	case tea.KeyBackspace:
		if len(m.reason) > 0 {
			m.reason = m.reason[:len(m.reason)-1]
		}
	case tea.KeySpace:
		m.reason = append(m.reason, ' ')
	case tea.KeyRunes:
		if len(m.reason) < 500 {
			m.reason = append(m.reason, []rune(outbuf.VisibleLine(string(k.Runes)))...)
		}
	}
	return m, nil
}

func (m ChoiceModel) View() string {
	if m.chosen != nil {
		mark := "✓"
		if m.chosen.Choice == executor.ChoiceDeny {
			mark = "✗"
		}
		if m.by != "" {
			return m.wrap("  "+mark+" ", m.chosen.Label+" (you pressed "+m.by+")", "    ", "", "")
		}
		if m.chosen.Choice == executor.ChoiceDenyReason {
			return m.wrap("  "+mark+" ", "Denied; the model is told: "+strings.TrimSpace(string(m.reason)), "    ", "", "")
		}
		return m.wrap("  "+mark+" ", m.chosen.Label, "    ", "", "")
	}
	if m.asking {
		return m.wrap("  ", "Why not? One line for the model (Enter sends, Esc goes back):", "  ", "", "") +
			"  > " + string(m.reason) + "█\n"
	}
	var b strings.Builder
	if m.pager != nil {
		b.WriteString(m.pager.view())
	}
	for i, o := range m.A.Options {
		line := "[" + o.Key + "] " + o.Label
		if i == m.cursor && m.A.NoColor {
			b.WriteString(m.wrap("  › ", line, "        ", "", ""))
		} else if i == m.cursor {
			b.WriteString(m.wrap("  › ", line, "        ", "\x1b[7m", "\x1b[0m"))
		} else {
			b.WriteString(m.wrap("    ", line, "        ", "", ""))
		}
	}
	b.WriteString(m.wrap("  ", m.A.Hint(), "  ", "", ""))
	return b.String()
}

// wrap is text after first, wrapped at word boundaries to the terminal's
// width with each further row behind indent, and each row between on and
// off (the cursor's reverse video); a line ending.
func (m ChoiceModel) wrap(first, text, indent, on, off string) string {
	rows := []string{text}
	if w := m.width - ansi.StringWidth(indent); m.width > 0 && ansi.StringWidth(first)+ansi.StringWidth(text) > m.width && w >= 10 {
		rows = strings.Split(ansi.Wrap(text, w, ""), "\n")
	}
	var b strings.Builder
	for i, r := range rows {
		lead := indent
		if i == 0 {
			lead = first
		}
		b.WriteString(lead + on + strings.TrimRight(r, " ") + off + "\n")
	}
	return b.String()
}

// WithDiffPager shows diff inside the prompt in a pager sized for a
// terminal of rows×cols, for a diff too long to print above it: every line
// is reachable, long lines are wrapped rather than cut, and the choice keys
// stay y, s, d, n.
func (m ChoiceModel) WithDiffPager(diff string, rows, cols int) ChoiceModel {
	p := &diffPager{lines: diffLines(diff), vp: viewport.New(0, 0), noColor: m.A.NoColor}
	p.vp.KeyMap = viewport.KeyMap{} // the keys are ours (key), none clashes with a choice
	p.vp.MouseWheelEnabled = false
	p.reserve = len(m.A.Options) + 4
	p.resize(rows, cols)
	m.pager = p
	return m
}

// diffPager is a viewport over a coloured diff.
type diffPager struct {
	lines   []string // the diff, one entry a line, raw
	vp      viewport.Model
	reserve int // rows the prompt needs besides the pager
	width   int
	noColor bool
}

func (p *diffPager) resize(rows, cols int) {
	if cols <= 0 {
		cols = 80
	}
	p.vp.Height = max(rows-p.reserve-1, 3)
	p.vp.Width = cols
	if cols == p.width {
		return
	}
	p.width = cols
	// Wrap here, at the screen's width less a margin, so no line is cut.
	var b strings.Builder
	for _, l := range p.lines {
		text := strings.ReplaceAll(cleanDiffLine(l), "\t", "    ")
		for j, piece := range strings.Split(ansi.Hardwrap(text, max(cols-2, 10), true), "\n") {
			if j > 0 {
				piece = " " + piece
			}
			if p.noColor {
				b.WriteString(piece + "\n")
			} else {
				b.WriteString(colorDiffLine(l, piece) + "\n")
			}
		}
	}
	p.vp.SetContent(strings.TrimSuffix(b.String(), "\n"))
}

// key moves the pager for a paging key and reports whether it was one.
func (p *diffPager) key(k string) bool {
	switch k {
	case " ", "pgdown", "f":
		p.vp.PageDown()
	case "pgup", "b":
		p.vp.PageUp()
	case "down", "j":
		p.vp.ScrollDown(1)
	case "up", "k":
		p.vp.ScrollUp(1)
	case "g", "home":
		p.vp.GotoTop()
	case "G", "end":
		p.vp.GotoBottom()
	default:
		return false
	}
	return true
}

func (p *diffPager) view() string {
	total := p.vp.TotalLineCount()
	first := p.vp.YOffset + 1
	last := min(p.vp.YOffset+p.vp.Height, total)
	where := "more below"
	if p.vp.AtBottom() {
		where = "end of diff"
	}
	return fmt.Sprintf("  diff rows %d–%d of %d (%s) · Space/b page, ↑/↓ line, g/G start/end\n", first, last, total, where) +
		p.vp.View() + "\n"
}

// Visible makes a string from the model or a tool safe and honest to show
// (outbuf's Block mode): tab and newline stay, every other control byte,
// escape, C1 control, invisible format character (bidi controls included)
// and invalid byte is written as an escape in plain text.
func Visible(s string) string { return outbuf.Visible(s) }
