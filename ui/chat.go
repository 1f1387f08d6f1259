package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/vault"
	"github.com/muesli/termenv"
	"golang.org/x/term"
)

// Config is what a chat needs from the session that hosts it.
type Config struct {
	// In and Out are the terminal.
	In  *os.File
	Out io.Writer
	// Color is false when NO_COLOR is set or the terminal is dumb.
	Color bool
	// Model, Provider, Dir and Sandbox feed the banner and the status line.
	Model, Provider, Dir, Sandbox string
	// Home, if set, is shown as ~ in the directory.
	Home string
	// History is the prompt history; nil keeps none.
	History *History
	// Turn runs one agent turn for prompt; its events arrive through the
	// Chat's executor.Events methods. ctx is cancelled by Ctrl-C.
	Turn func(ctx context.Context, prompt string) error
	// Clear starts a new conversation (/clear).
	Clear func()
	// SetModel switches the model for the next turn (/model NAME).
	SetModel func(name string) error
	// ListModels, if set, lists the server's models for /model without a
	// name; PickModel asks which (it is given the terminal).
	ListModels func(ctx context.Context) ([]string, error)
	PickModel  func(ctx context.Context, models []string, current string) (string, error)
	// Tools lists what the model is offered (/tools).
	Tools func() []ToolInfo
	// Instructions names the AGENTS.md files the system prompt carries,
	// with a note on any cut by the size cap; "" when none (/tools).
	Instructions func() string
	// Files lists the project's files for @ completion; Attach reads one
	// named with @path for a prompt (an error wrapping os.ErrNotExist
	// means the word names no file). Either may be nil.
	Files  func(ctx context.Context) ([]string, error)
	Attach func(path string) (string, error)
	// LineForms: the forms Suspend runs read lines (ACCESSIBLE), so the
	// terminal is handed to them in line mode; else out of it, as a
	// full-screen form reads keys.
	LineForms bool
	// Editor, if set, is the user's editor on file, for Ctrl-G: built by
	// the spawn layer, run in the foreground with the terminal.
	Editor func(file string) (*exec.Cmd, error)
	// PreviewLines bounds the output shown per tool call (default 12).
	PreviewLines int
	// Commands are slash commands the session adds (/compact, /resume):
	// listed by /help, completed on Tab, run like a turn (Ctrl-C cancels).
	Commands []Command
	// Intro, if set, is shown under the banner (which instructions were
	// loaded, say).
	Intro string
	// Redact scrubs the vault's values from a prompt. A prompt it changes
	// is not sent before the user chose: the redacted form (Enter), as
	// typed (a), or back to the editor (e). Nil sends every prompt as typed.
	Redact func(string) string
}

// Command is a slash command the session answers. Run writes what it has
// to say to out; it may call Chat.Suspend to ask something in a form.
type Command struct {
	Name, Args, Help string
	Run              func(ctx context.Context, arg string, out io.Writer) error
}

// ToolInfo is one line of /tools.
type ToolInfo struct {
	Name, Description string
	// Sandbox says how the tool runs ("sandboxed", "in a container",
	// "in hush", "no sandbox").
	Sandbox string
	// Secrets are the names the tool is configured to receive.
	Secrets []string
}

// Chat is the interactive chat terminal. It implements executor.Events
// (and the optional usage and notice capabilities) for the agent whose
// turns it runs; its permission prompts go through Host.
type Chat struct {
	cfg   Config
	st    palette
	prog  *tea.Program
	done  chan struct{}
	width atomic.Int64

	// Turn-side state: touched only by the goroutine running a turn (the
	// executor calls Events from it) and by Host around a prompt.
	md        markdown
	buf       strings.Builder
	needBlank bool
	preview   toolPreview
	toolRan   bool // a tool started in the running turn
	// held is a file tool's call and output lines, shown at its end with
	// what it found (`Grep "x" · 3 matches`).
	held    *provider.ToolCall
	heldOut []string
	lastMu  sync.Mutex
	lastOut lastOutput // the last call's output, for Ctrl-O
	printMu sync.Mutex
	reflow  *reflowOut         // the program's output, told of resizes
	resumed []provider.Message // drawn by Run under the banner
	turns   sync.WaitGroup     // turns (and session commands) still running
}

// New returns a chat on cfg. Nothing touches the terminal until Run.
func New(cfg Config) *Chat {
	if cfg.PreviewLines <= 0 {
		cfg.PreviewLines = 12
	}
	c := &Chat{cfg: cfg, done: make(chan struct{})}
	c.st = newStyles(cfg.Out, cfg.Color)
	c.md.color = cfg.Color
	c.width.Store(80)
	return c
}

// SetIntro sets Config.Intro; call it before Run.
func (c *Chat) SetIntro(s string) { c.cfg.Intro = s }

// ErrInterrupted ends Run after a second Ctrl-C at an idle prompt.
var ErrInterrupted = errors.New("interrupted")

// Run shows the banner and the prompt and runs until Ctrl-D, /exit or a
// second Ctrl-C within two seconds at an idle prompt.
func (c *Chat) Run() error {
	if w, _, err := term.GetSize(int(c.cfg.In.Fd())); err == nil && w > 0 {
		c.width.Store(int64(w))
	}
	m := newModel(c)
	m.greeting = c.greeting()
	c.prog = c.program(m)
	defer close(c.done)
	final, err := c.prog.Run()
	if err != nil {
		return err
	}
	fm := final.(*model)
	if fm.panicked != "" {
		return fmt.Errorf("chat: %s", fm.panicked)
	}
	if fm.interrupted {
		return ErrInterrupted
	}
	return nil
}

// program is the bubbletea program that runs m on the chat's terminal.
func (c *Chat) program(m tea.Model) *tea.Program {
	var out io.Writer
	c.reflow, out = newReflowOut(c.cfg.Out)
	return tea.NewProgram(m,
		tea.WithInput(keyInput{c.cfg.In}), tea.WithOutput(out),
		// Signals are the session's: SIGINT cancels a turn, SIGTERM ends
		// hush. Ctrl-C at the keyboard arrives here as a key.
		tea.WithoutSignalHandler(),
		// A panic is reported by hush's own handler, redacted.
		tea.WithoutCatchPanics(),
		// Frames at most every 8 ms: a keystroke is on screen within one
		// (bubbletea's maximum; an unchanged frame is not redrawn).
		tea.WithFPS(120),
	)
}

// greeting is what the chat prints before its first prompt: the banner,
// the intro and a resumed conversation.
func (c *Chat) greeting() string {
	parts := []string{c.banner()}
	if c.cfg.Intro != "" {
		parts = append(parts, c.st.dim.Render(outbuf.Sanitize(c.cfg.Intro)))
	}
	if s := c.conversation(c.resumed); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

func (c *Chat) banner() string {
	return c.st.title.Render("hush chat") + c.st.dim.Render(" — "+c.modelLabel(c.cfg.Model)+" · "+c.shortDir()+" · sandbox "+c.cfg.Sandbox) + "\n" +
		c.st.dim.Render("Tools get no secret unless you allow it. /help lists commands; Ctrl-C stops a turn, Ctrl-D exits.")
}

func (c *Chat) modelLabel(name string) string {
	if c.cfg.Provider == "" {
		return name
	}
	return name + " (" + c.cfg.Provider + ")"
}

func (c *Chat) shortDir() string {
	d := c.cfg.Dir
	if h := c.cfg.Home; h != "" && (d == h || strings.HasPrefix(d, h+"/")) {
		d = "~" + strings.TrimPrefix(d, h)
	}
	return d
}

// print writes s above the prompt, into the scrollback. It never blocks
// once the chat has ended.
func (c *Chat) print(s string) {
	if c.prog == nil {
		fmt.Fprintln(c.cfg.Out, s)
		return
	}
	s = c.fit(s)
	c.printMu.Lock()
	defer c.printMu.Unlock()
	sent := make(chan struct{})
	go func() { c.prog.Println(s); close(sent) }()
	select {
	case <-sent:
	case <-c.done:
	}
}

// fit wraps each line of s wider than the terminal, for the program to
// print: bubbletea clears the rest of a printed row only for a line
// narrower than the terminal, so the terminal's own wrap left the status
// line's old text after the last row of a long tool call or output line.
func (c *Chat) fit(s string) string {
	if w := int(c.width.Load()); w > 0 && widerThan(s, w) {
		return ansi.Hardwrap(s, w, true)
	}
	return s
}

// widerThan reports whether a line of s is wider than w columns
// (ansi.StringWidth of the whole adds up its lines).
func widerThan(s string, w int) bool {
	for line := range strings.SplitSeq(s, "\n") {
		if ansi.StringWidth(line) > w {
			return true
		}
	}
	return false
}

// send delivers msg to the program (dropped once it has ended).
func (c *Chat) send(msg tea.Msg) {
	if c.prog != nil {
		c.prog.Send(msg)
	}
}

// expandTabs puts spaces for tabs (stops every 8 columns): the renderer
// counts a tab as one column, the terminal as up to eight.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// ---- executor.Events ----

// Text implements executor.Events: complete Markdown blocks go to the
// scrollback rendered; the unfinished rest is shown live below them.
func (c *Chat) Text(delta string) {
	c.buf.WriteString(delta)
	s := c.buf.String()
	if n := completeBlocks(s); n > 0 {
		c.commit(s[:n])
		c.buf.Reset()
		c.buf.WriteString(s[n:])
	}
	c.send(pendingMsg(c.buf.String()))
}

// flushText commits whatever text is pending.
func (c *Chat) flushText() {
	if c.buf.Len() == 0 {
		return
	}
	c.commit(c.buf.String())
	c.buf.Reset()
	c.send(pendingMsg(""))
}

func (c *Chat) commit(md string) {
	if strings.TrimSpace(md) == "" {
		c.needBlank = c.needBlank || strings.Contains(md, "\n")
		return
	}
	out := c.md.render(md, int(c.width.Load()))
	if visibleEmpty(out) {
		return
	}
	if c.needBlank {
		out = "\n" + out
	}
	c.needBlank = strings.HasSuffix(strings.TrimRight(md, " "), "\n\n") || !strings.HasSuffix(md, "\n") || isHeading(md)
	c.print(out)
}

func isHeading(md string) bool {
	return strings.HasPrefix(strings.TrimSpace(md), "#") && !strings.Contains(strings.TrimSpace(md), "\n")
}

// heldTools are shown once they end, with what they found: they run in
// hush and take milliseconds.
func heldTool(name string) bool {
	return name == "read" || name == "grep" || name == "glob" || name == "edit" || name == "write"
}

// ToolStart implements executor.Events.
func (c *Chat) ToolStart(call provider.ToolCall) {
	c.flushText()
	c.preview = toolPreview{max: c.cfg.PreviewLines}
	c.lastMu.Lock()
	c.lastOut = lastOutput{}
	c.lastMu.Unlock()
	c.toolRan = true
	c.send(activityMsg("running " + outbuf.Sanitize(call.Name)))
	if heldTool(call.Name) {
		c.held, c.heldOut = &call, nil
		return
	}
	c.held = nil
	c.printTitle(call, "")
}

// printTitle prints the line that names a tool call.
func (c *Chat) printTitle(call provider.ToolCall, result string) {
	lead := ""
	if c.needBlank {
		lead = "\n"
	}
	c.needBlank = false
	title := outbuf.Sanitize(ToolTitle(call.Name, call.Args, result, max(40, int(c.width.Load())*2)))
	name, rest, _ := strings.Cut(title, " ")
	c.print(lead + c.st.toolMark.Render("●") + " " + c.st.toolName.Render(name) + " " + c.st.args.Render(rest))
}

// ToolOutput implements executor.Events.
func (c *Chat) ToolOutput(_ provider.ToolCall, chunk []byte) {
	c.lastMu.Lock()
	c.lastOut.add(chunk)
	c.lastMu.Unlock()
	for _, line := range c.preview.add(string(chunk)) {
		if c.held != nil {
			c.heldOut = append(c.heldOut, line)
			continue
		}
		c.printOutput(line)
	}
	// An unfinished line (a prompt, a progress bar, or bytes the redactor
	// still holds back) is shown live until it ends.
	partial := ""
	if !c.preview.cut && c.held == nil {
		partial = expandTabs(c.preview.partial.String())
	}
	c.send(toolLineMsg(partial))
}

// printOutput prints one line of a tool's output behind the output's
// gutter; a line wider than the terminal is wrapped with the gutter on
// each of its rows, so the output stays one column.
func (c *Chat) printOutput(line string) {
	const gutterWidth = 4 // "  │ "
	gutter := c.st.pipe.Render("  │ ")
	line = expandTabs(line)
	if w := int(c.width.Load()) - gutterWidth; w > 0 && ansi.StringWidth(line) > w {
		line = strings.ReplaceAll(ansi.Hardwrap(line, w, true), "\n", "\n"+gutter)
	}
	c.print(gutter + line)
}

// ToolEnd implements executor.Events.
func (c *Chat) ToolEnd(call provider.ToolCall, result string, isErr bool) {
	c.send(toolLineMsg(""))
	if c.held != nil {
		c.printTitle(call, result)
		for _, l := range c.heldOut {
			c.printOutput(l)
		}
		c.held, c.heldOut = nil, nil
	}
	if line, ok := c.preview.rest(); ok {
		c.printOutput(line)
	}
	if c.preview.cut {
		c.print(c.st.pipe.Render("  │ ") + c.st.dim.Render(fmt.Sprintf("… +%d lines (Ctrl-O shows them)", c.preview.hidden())))
	}
	c.lastMu.Lock()
	c.lastOut.shown = c.preview.lines
	c.lastMu.Unlock()
	if last, show := ResultSummary(result, c.preview.lines); show && !(heldTool(call.Name) && !isErr && resultStatus(result) != "" && strings.TrimSpace(last) == "["+resultStatus(result)+"]") {
		mark := c.st.ok.Render("  └ ")
		if isErr {
			mark = c.st.bad.Render("  └ ✗ ")
		}
		c.print(mark + outbuf.Sanitize(last))
	}
	c.needBlank = true
	c.send(activityMsg("thinking"))
}

// Usage receives the server's token counts for one model call.
func (c *Chat) Usage(u provider.Usage) { c.send(usageMsg(u)) }

// Notice shows a one-line note about the model connection (a retry).
func (c *Chat) Notice(msg string) {
	c.flushText()
	c.print(c.st.dim.Render("  · " + outbuf.Sanitize(msg)))
}

// Host returns p wrapped so that its form gets the terminal: the chat's
// prompt and status line are taken off the screen and the input reader is
// paused while p asks.
func (c *Chat) Host(p executor.Prompter) executor.Prompter { return hosted{c: c, inner: p} }

type hosted struct {
	c     *Chat
	inner executor.Prompter
}

func (h hosted) Confirm(ctx context.Context, req executor.Request) (choice executor.Answer, err error) {
	choice = executor.Answer{Choice: executor.ChoiceDeny}
	serr := h.c.Suspend(func() { choice, err = h.inner.Confirm(ctx, req) })
	if err == nil {
		err = serr
	}
	return choice, err
}

// Suspend runs fn with the terminal handed over: the chat's prompt and
// status line are off the screen and its input reader is paused, so a form
// fn runs has the terminal to itself. Call it from a turn or a Command,
// never from inside the chat's own event loop.
func (c *Chat) Suspend(fn func()) error {
	if c.prog == nil {
		fn()
		return nil
	}
	c.flushText()
	// Two round trips: the second Update runs only after the program has
	// drawn the (empty) view the first one produced.
	for range 2 {
		ack := make(chan struct{})
		c.send(suspendMsg{on: true, ack: ack})
		select {
		case <-ack:
		case <-c.done:
			return errors.New("the chat has ended")
		}
	}
	if err := c.prog.ReleaseTerminal(); err != nil {
		return err
	}
	// Released, the terminal is back in line mode until fn's form takes
	// it: what is typed meanwhile (while the model list loads, say) would
	// be echoed and its Enter lost. Forms that read keys get it out of
	// line mode at once.
	restore := func() {}
	if !c.cfg.LineForms {
		restore = vault.ReadKeys(int(c.cfg.In.Fd()))
	}
	fn()
	restore()
	err := c.prog.RestoreTerminal()
	c.send(suspendMsg{on: false})
	return err
}

// Printer returns a writer whose complete lines go to the scrollback, for
// notes written during a turn or a Command; Close prints an unfinished
// last line.
func (c *Chat) Printer() io.WriteCloser { return &linePrinter{c: c} }

type linePrinter struct {
	c   *Chat
	buf []byte
}

func (l *linePrinter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	if i := bytes.LastIndexByte(l.buf, '\n'); i >= 0 {
		l.c.flushText()
		l.c.print(outbuf.Sanitize(string(l.buf[:i])))
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
	return len(p), nil
}

func (l *linePrinter) Close() error {
	if len(l.buf) > 0 {
		l.c.print(outbuf.Sanitize(string(l.buf)))
		l.buf = nil
	}
	return nil
}

// ---- messages ----

type (
	pendingMsg   string
	toolLineMsg  string
	activityMsg  string
	modelNameMsg string
	usageMsg     provider.Usage
	// turnDoneMsg ends a turn; restore is the prompt to put back in the
	// editor (a turn stopped at an approval), "" for none.
	turnDoneMsg struct{ restore string }
	suspendMsg  struct {
		on  bool
		ack chan struct{}
	}
)

// ---- the bubbletea model ----

type model struct {
	c    *Chat
	ta   textarea.Model
	spin spinner.Model

	busy     bool
	cancel   context.CancelFunc
	activity string
	notice   string
	started  time.Time // the running turn's start, for the spinner's clock
	// turnPrompt is the message the next startTurn sends, put back in
	// the editor when that turn is stopped at an approval.
	turnPrompt string

	toolLine                       string // the running tool's unfinished output line
	pending, renderedFor, rendered string
	renderedAt                     time.Time
	mdView                         markdown

	hist    []string
	histIdx int
	draft   string

	lastCtrlC time.Time
	modelName string
	osc       int // inside a terminal's answer: 1 after ESC ], 2 in its body

	turnIn, turnOut, turnCached int64
	sessIn, sessOut             int64
	cost                        float64
	costSeen                    bool

	files        []string // the project's files, once loaded for @ completion
	filesLoading bool

	greeting    string // printed by Init
	suspended   bool
	interrupted bool
	// queued: Enter was pressed during a turn; what the editor holds is
	// sent when the turn ends (Ctrl-C stopping the turn keeps it there).
	queued        bool
	quitAfterTurn bool
	panicked      string
	// secret: the prompt held a vault value; the user is asked what to send.
	secret *secretAsk
}

// secretAsk is a prompt that holds a vault value, waiting for the user's
// choice.
type secretAsk struct {
	typed, redacted string
}

func newModel(c *Chat) *model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.Placeholder = ""
	ta.SetPromptFunc(2, func(i int) string {
		if i == 0 {
			return "› "
		}
		return "  "
	})
	plain := c.st.r.NewStyle()
	st := textarea.Style{Base: plain, CursorLine: plain, CursorLineNumber: plain, EndOfBuffer: plain, LineNumber: plain, Placeholder: c.st.dim, Prompt: c.st.prompt, Text: plain}
	ta.FocusedStyle, ta.BlurredStyle = st, st
	km := textarea.DefaultKeyMap
	km.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	km.WordForward = key.NewBinding(key.WithKeys("alt+right", "ctrl+right", "alt+f"))
	km.WordBackward = key.NewBinding(key.WithKeys("alt+left", "ctrl+left", "alt+b"))
	// Ctrl-V would run a clipboard helper process; the terminal's own paste
	// (bracketed) is what inserts text.
	km.Paste = key.NewBinding(key.WithDisabled())
	km.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	ta.KeyMap = km
	ta.SetWidth(int(c.width.Load()))
	ta.SetHeight(1)
	ta.Focus()

	sp := spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(c.st.spin))
	m := &model{c: c, ta: ta, spin: sp, modelName: c.cfg.Model}
	m.mdView.color = c.cfg.Color
	if c.cfg.History != nil {
		m.hist = c.cfg.History.Entries()
	}
	m.histIdx = len(m.hist)
	return m
}

// Init prints the greeting. The program prints it, not Run before the
// program starts: the program has put the terminal in raw mode by now, so
// the banner says truly that the chat reads keys. Printed before, it was
// on the screen while keys were still read by the terminal's line
// discipline — a prompt typed then was echoed, and its Enter, turned into
// a line feed there (ICRNL), arrived as Ctrl-J, which adds a line: the
// prompt was never sent.
func (m *model) Init() tea.Cmd {
	return tea.Batch(tea.Println(m.c.fit(m.greeting)), textarea.Blink)
}

func (m *model) Update(msg tea.Msg) (_ tea.Model, cmd tea.Cmd) {
	defer func() {
		if r := recover(); r != nil {
			m.panicked = fmt.Sprint(r)
			cmd = tea.Quit
		}
	}()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		if m.c.reflow != nil {
			m.c.reflow.resized(int(m.c.width.Load()), msg.Width)
		}
		m.c.width.Store(int64(msg.Width))
		m.ta.SetWidth(msg.Width)
		m.renderedFor = "" // the unfinished block is rendered again, to the new width
		return m, nil
	case suspendMsg:
		m.suspended = msg.on
		if msg.ack != nil {
			close(msg.ack)
		}
		return m, nil
	case pendingMsg:
		m.pending = string(msg)
		if m.busy && m.activity == "thinking" {
			m.activity = "writing" // text streams: the model is no longer silent
		}
		return m, nil
	case toolLineMsg:
		m.toolLine = string(msg)
		return m, nil
	case activityMsg:
		m.activity = string(msg)
		return m, nil
	case filesMsg:
		m.filesLoading = false
		if msg.err != nil {
			return m, tea.Println(m.c.st.bad.Render("@ completion: " + outbuf.Sanitize(msg.err.Error())))
		}
		m.files = msg.files
		if atToken(m.ta.Value()) != "" {
			return m.completeAt()
		}
		return m, nil
	case editedMsg:
		return m.edited(msg)
	case modelNameMsg:
		m.modelName = string(msg)
		return m, nil
	case usageMsg:
		m.turnIn += msg.InputTokens
		m.turnOut += msg.OutputTokens
		m.turnCached += msg.CachedTokens
		m.sessIn += msg.InputTokens
		m.sessOut += msg.OutputTokens
		if msg.CostUSD > 0 {
			m.cost += msg.CostUSD
			m.costSeen = true
		}
		return m, nil
	case interruptMsg:
		if m.busy && m.cancel != nil {
			m.cancel()
			m.notice = "stopping the turn…"
			m.queued = false
		}
		return m, nil
	case turnDoneMsg:
		m.busy, m.cancel, m.pending, m.notice, m.toolLine = false, nil, "", "", ""
		if msg.restore != "" && m.ta.Value() == "" {
			m.ta.SetValue(msg.restore)
			m.queued = false
		}
		if m.quitAfterTurn {
			return m, tea.Quit
		}
		if m.queued {
			m.queued = false
			return m.submit()
		}
		return m, nil
	case spinner.TickMsg:
		if !m.busy {
			return m, nil
		}
		var c tea.Cmd
		m.spin, c = m.spin.Update(msg)
		return m, c
	case tea.KeyMsg:
		if m.suspended {
			return m, nil
		}
		return m.key(msg)
	}
	var c tea.Cmd
	m.ta, c = m.ta.Update(msg)
	return m, c
}

// keyInput is the terminal as the chat's program reads it: Shift-Enter as
// terminals that report it send it (the kitty keyboard protocol's CSI
// 13;2u, xterm's modifyOtherKeys CSI 27;2;13~) becomes Ctrl-J, which adds
// a line, before bubbletea parses the bytes. bubbletea passed those on as
// an unknown sequence, a slice of its read buffer that its next read
// overwrites: when the chat looked at it, a key typed right after could
// have replaced it, and the line was lost. For the rest (raw mode, the
// cancellable read's epoll) it is the terminal's *os.File.
type keyInput struct{ *os.File }

func (k keyInput) Read(p []byte) (int, error) {
	n, err := k.File.Read(p)
	return shiftEnterToCtrlJ(p[:n]), err
}

var shiftEnters = [][]byte{[]byte("\x1b[13;2u"), []byte("\x1b[27;2;13~")}

// shiftEnterToCtrlJ rewrites each Shift-Enter sequence in b to a Ctrl-J
// (LF), in place, and returns b's new length. A sequence split across two
// reads is left alone, as bubbletea leaves any other.
func shiftEnterToCtrlJ(b []byte) int {
	if bytes.IndexByte(b, 0x1b) < 0 {
		return len(b)
	}
	n := 0
	for i := 0; i < len(b); {
		if b[i] == 0x1b {
			if s := shiftEnterAt(b[i:]); s > 0 {
				b[n] = '\n'
				n++
				i += s
				continue
			}
		}
		b[n] = b[i]
		n++
		i++
	}
	return n
}

func shiftEnterAt(b []byte) int {
	for _, s := range shiftEnters {
		if bytes.HasPrefix(b, s) {
			return len(s)
		}
	}
	return 0
}

// oscBody is the body of a terminal's answer to a colour query.
var oscBody = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+;`) })

// swallowReport drops a terminal's late answer to a query someone else
// sent (ESC ] 11 ; rgb:… ESC \), which bubbletea hands over as keys: Alt-],
// the body as typed runes, then Alt-\ or BEL. Without this it would be
// typed into the prompt.
func (m *model) swallowReport(msg tea.KeyMsg) bool {
	switch {
	case msg.Type == tea.KeyRunes && msg.Alt && string(msg.Runes) == "]":
		m.osc = 1
		return true
	case m.osc == 1 && msg.Type == tea.KeyRunes && !msg.Alt && oscBody().MatchString(string(msg.Runes)):
		m.osc = 2
		return true
	case m.osc == 2 && (msg.Type == tea.KeyCtrlG || (msg.Type == tea.KeyRunes && msg.Alt && string(msg.Runes) == "\\")):
		m.osc = 0
		return true
	}
	m.osc = 0
	return false
}

func (m *model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if m.swallowReport(msg) {
		return m, nil
	}
	if m.secret != nil {
		return m.answerSecret(msg)
	}
	switch {
	case msg.Type == tea.KeyCtrlC:
		if m.busy {
			if m.cancel != nil {
				m.cancel()
			}
			m.notice = "stopping the turn…"
			m.queued = false // the message stays in the editor
			return m, nil
		}
		if m.ta.Value() != "" {
			m.ta.Reset()
			m.fit()
			m.lastCtrlC = time.Time{}
			return m, nil
		}
		if !m.lastCtrlC.IsZero() && time.Since(m.lastCtrlC) < 2*time.Second {
			m.interrupted = true
			return m, tea.Quit
		}
		m.lastCtrlC = time.Now()
		return m, tea.Println(m.c.st.dim.Render("(press Ctrl-C again within 2 s to exit, or Ctrl-D)"))
	case msg.Type == tea.KeyCtrlD && m.ta.Value() == "":
		if m.busy {
			// The turn's last text may be on screen before it has ended.
			m.quitAfterTurn = true
			m.notice = "exiting when this turn ends (Ctrl-C stops it)"
			return m, nil
		}
		return m, tea.Quit
	case msg.Type == tea.KeyCtrlL:
		return m, tea.ClearScreen // the scrollback keeps the conversation
	case msg.Type == tea.KeyCtrlO:
		return m, m.expandLast()
	case msg.Type == tea.KeyCtrlG && m.c.cfg.Editor != nil && !m.busy:
		return m.openEditor()
	case msg.Paste:
		// Pasted text is typed into the prompt and drawn: no escape in it
		// may reach the terminal (Sanitize also turns \r into \n).
		m.ta.InsertString(outbuf.Sanitize(string(msg.Runes)))
		m.fit()
		return m, nil
	case msg.Type == tea.KeyEnter && !msg.Alt:
		if m.busy {
			// Queued: it stays in the editor (still editable) and is
			// sent when the turn ends, as peers do.
			if strings.TrimSpace(m.ta.Value()) != "" && !m.quitAfterTurn {
				m.queued = true
				m.notice = "your message is queued: it is sent when this turn ends"
			}
			return m, nil
		}
		return m.submit()
	case msg.Type == tea.KeyTab && strings.HasPrefix(m.ta.Value(), "/") && !strings.ContainsAny(m.ta.Value(), " \n"):
		return m.complete()
	case msg.Type == tea.KeyTab && atToken(m.ta.Value()) != "" && m.c.cfg.Files != nil:
		return m.completeAt()
	case msg.Type == tea.KeyUp && m.ta.Line() == 0 && m.histIdx > 0:
		if m.histIdx == len(m.hist) {
			m.draft = m.ta.Value()
		}
		m.histIdx--
		m.ta.SetValue(m.hist[m.histIdx])
		m.fit()
		return m, nil
	case msg.Type == tea.KeyDown && m.ta.Line() == m.ta.LineCount()-1 && m.histIdx < len(m.hist):
		m.histIdx++
		if m.histIdx == len(m.hist) {
			m.ta.SetValue(m.draft)
		} else {
			m.ta.SetValue(m.hist[m.histIdx])
		}
		m.fit()
		return m, nil
	}
	m.lastCtrlC = time.Time{}
	var c tea.Cmd
	m.ta, c = m.ta.Update(msg)
	m.fit()
	return m, c
}

// expandLast prints the lines of the last tool output that its preview
// did not show (Ctrl-O).
func (m *model) expandLast() tea.Cmd {
	c := m.c
	c.lastMu.Lock()
	rest := c.lastOut.rest()
	full := c.lastOut.full
	c.lastOut.shown += len(rest)
	c.lastMu.Unlock()
	if len(rest) == 0 {
		return tea.Println(c.st.dim.Render("(no more tool output to show)"))
	}
	gutter := c.st.pipe.Render("  │ ")
	var b strings.Builder
	b.WriteString(c.st.dim.Render(fmt.Sprintf("  the last tool output, %d more lines:", len(rest))))
	w := int(c.width.Load()) - 4
	for _, l := range rest {
		l = expandTabs(l)
		if w > 0 && ansi.StringWidth(l) > w {
			l = strings.ReplaceAll(ansi.Hardwrap(l, w, true), "\n", "\n"+gutter)
		}
		b.WriteString("\n" + gutter + l)
	}
	if full {
		b.WriteString("\n" + gutter + c.st.dim.Render("… (kept up to 1 MiB)"))
	}
	return tea.Println(b.String())
}

// fit grows the editor with its content, up to a third of a usual screen.
func (m *model) fit() {
	h := m.ta.LineCount()
	h = min(max(h, 1), 12)
	if m.ta.Height() != h {
		m.ta.SetHeight(h)
	}
}

func (m *model) submit() (tea.Model, tea.Cmd) {
	text := m.ta.Value()
	prompt := strings.TrimSpace(text)
	if prompt == "" {
		return m, nil
	}
	m.ta.Reset()
	m.fit()
	m.lastCtrlC = time.Time{}
	if h := m.c.cfg.History; h != nil {
		if err := h.Add(prompt); err != nil {
			m.notice = err.Error()
		}
		m.hist = h.Entries()
	}
	m.histIdx, m.draft = len(m.hist), ""
	echo := m.c.st.prompt.Render("› ") + strings.ReplaceAll(outbuf.Sanitize(prompt), "\n", "\n  ")
	if isCommand(prompt) {
		name, arg, _ := strings.Cut(prompt, " ")
		for _, sc := range m.c.cfg.Commands {
			if sc.Name == name && sc.Run != nil {
				run := sc.Run
				return m.startTurn(echo, func(ctx context.Context) error {
					p := m.c.Printer()
					defer p.Close()
					return run(ctx, strings.TrimSpace(arg), p)
				})
			}
		}
		if name == "/model" && strings.TrimSpace(arg) == "" && m.c.cfg.ListModels != nil && m.c.cfg.PickModel != nil && m.c.cfg.SetModel != nil {
			current := m.modelName
			return m.startTurn(echo, func(ctx context.Context) error { return m.c.pickModel(ctx, current) })
		}
		out, quit := m.slash(prompt)
		if quit {
			return m, tea.Sequence(tea.Println(echo), tea.Quit)
		}
		return m, tea.Println(echo + "\n" + out + "\n")
	}
	if strings.HasPrefix(prompt, "//") {
		prompt = prompt[1:] // "//x" sends "/x"
	}
	if r := m.c.cfg.Redact; r != nil {
		red := r(prompt)
		if names := redact.Names(prompt, red); len(names) > 0 {
			m.secret = &secretAsk{typed: prompt, redacted: red}
			m.notice = fmt.Sprintf("your message contains the value of %s — send %s instead (Enter), send it as typed (a), or edit (e)",
				strings.Join(names, ", "), redact.Placeholders(names))
			return m, nil
		}
	}
	return m.send(prompt, echo)
}

// send starts the turn of prompt, echoed as echo.
func (m *model) send(prompt, echo string) (tea.Model, tea.Cmd) {
	m.turnPrompt = prompt
	return m.startTurn(echo, func(ctx context.Context) error {
		full, notes := m.c.attachments(prompt)
		for _, n := range notes {
			m.c.print(m.c.st.dim.Render("  · " + outbuf.Sanitize(n)))
		}
		return m.c.cfg.Turn(ctx, full)
	})
}

// answerSecret takes the user's choice for a prompt that holds a vault
// value: Enter sends the redacted form, a sends it as typed, e (or Esc,
// or Ctrl-C) puts it back in the editor; other keys are ignored.
func (m *model) answerSecret(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	ask := m.secret
	echoOf := func(p string) string {
		return m.c.st.prompt.Render("› ") + strings.ReplaceAll(outbuf.Sanitize(p), "\n", "\n  ")
	}
	switch {
	case msg.Type == tea.KeyEnter:
		m.secret, m.notice = nil, ""
		return m.send(ask.redacted, echoOf(ask.redacted))
	case msg.Type == tea.KeyRunes && string(msg.Runes) == "a":
		m.secret, m.notice = nil, ""
		return m.send(ask.typed, echoOf(ask.redacted))
	case msg.Type == tea.KeyRunes && string(msg.Runes) == "e", msg.Type == tea.KeyEsc, msg.Type == tea.KeyCtrlC:
		m.secret, m.notice = nil, ""
		m.ta.SetValue(ask.typed)
		m.fit()
	}
	return m, nil
}

// startTurn runs fn (a turn, or a session command that may call the model)
// off the event loop, with the spinner and Ctrl-C cancelling it.
func (m *model) startTurn(echo string, fn func(ctx context.Context) error) (tea.Model, tea.Cmd) {
	ctx, cancel := context.WithCancel(context.Background())
	m.busy, m.cancel, m.activity, m.started = true, cancel, "thinking", time.Now()
	m.turnIn, m.turnOut, m.turnCached = 0, 0, 0
	c := m.c
	c.turns.Add(1)
	prompt := m.turnPrompt
	m.turnPrompt = ""
	run := func() tea.Msg {
		defer c.turns.Done()
		c.toolRan = false
		err := fn(ctx)
		c.flushText()
		if errors.Is(err, executor.ErrStopped) {
			// Esc at an approval: nothing more ran, and the prompt is
			// back in the editor to change and send again.
			c.print(c.st.dim.Render("(turn stopped at the approval; nothing more ran — your message is back in the editor)") + "\n")
			c.needBlank = false
			cancel()
			return turnDoneMsg{restore: prompt}
		}
		switch {
		case ctx.Err() != nil && c.toolRan:
			c.print(c.st.dim.Render("(turn cancelled; the tool's processes were stopped)") + "\n")
		case ctx.Err() != nil:
			c.print(c.st.dim.Render("(turn cancelled)") + "\n")
		case err != nil:
			c.print(c.st.bad.Render("hush: "+outbuf.Sanitize(err.Error())) + "\n")
		default:
			c.print("")
		}
		c.needBlank = false
		cancel()
		return turnDoneMsg{}
	}
	return m, tea.Sequence(tea.Println(echo+"\n"), tea.Batch(run, m.spin.Tick))
}

func (m *model) View() string {
	if v := m.view(); v != "" {
		return clearRows(v)
	}
	return ""
}

func (m *model) view() string {
	if m.suspended {
		return ""
	}
	var b strings.Builder
	if p := m.pendingView(); p != "" {
		b.WriteString(p)
		b.WriteString("\n")
	}
	if m.toolLine != "" {
		b.WriteString(m.c.st.pipe.Render("  │ ") + m.toolLine + "\n")
	}
	if m.busy {
		label := m.activity
		if m.notice != "" {
			label = m.notice
		}
		b.WriteString(m.spin.View() + " " + m.c.st.dim.Render(strings.TrimSuffix(label, "…")+"… "+elapsed(time.Since(m.started))+" · Ctrl-C stops") + "\n")
	} else if m.notice != "" {
		b.WriteString(m.c.st.bad.Render(m.notice) + "\n")
	}
	b.WriteString(m.ta.View())
	b.WriteString("\n")
	b.WriteString(m.statusLine())
	return b.String()
}

// pendingView renders the unfinished Markdown block at most every 40 ms
// (the spinner's ticks redraw in between); of a long one it renders only
// the last lines, since re-rendering it whole on every token would fall
// behind.
func (m *model) pendingView() string {
	p := m.pending
	if strings.TrimSpace(p) == "" {
		return ""
	}
	// What was rendered last may stand in for a block that has grown since
	// (it is a prefix of it), never for a new block: that one is rendered
	// at once, so its raw Markdown is never drawn.
	fresh := m.renderedFor == "" || !strings.HasPrefix(p, m.renderedFor)
	if p != m.renderedFor && (fresh || time.Since(m.renderedAt) >= 40*time.Millisecond) {
		m.rendered = m.mdView.render(pendingTail(p), int(m.c.width.Load()))
		m.renderedFor, m.renderedAt = p, time.Now()
	}
	return m.rendered
}

// pendingTail returns a long unfinished block's last 20 lines (at most
// 16 KiB of them), opened
// again with its code fence where they start inside one, so they render
// as the code they are; a short block is returned whole.
func pendingTail(p string) string {
	const long, keep = 4096, 20
	if len(p) <= long {
		return p
	}
	lines := strings.Split(p, "\n")
	cut := max(len(lines)-keep, 0)
	opener := ""
	for _, l := range lines[:cut] {
		t := strings.TrimSpace(l)
		switch {
		case opener != "":
			if closesFence(t, opener) {
				opener = ""
			}
		case opensFence(t):
			opener = t
		}
	}
	tail := strings.Join(lines[cut:], "\n")
	if len(tail) > 4*long {
		// Long lines (minified code, a table row): their last 16 KiB,
		// from a character's start.
		i := len(tail) - 4*long
		for i < len(tail) && !utf8.RuneStart(tail[i]) {
			i++
		}
		tail = tail[i:]
	}
	if opener != "" {
		return opener + "\n" + tail
	}
	return tail
}

func (m *model) statusLine() string {
	dir := m.c.shortDir()
	sandbox := "sandbox " + m.c.cfg.Sandbox
	turn, cached, session, cost := "", "", "", ""
	if m.sessIn+m.sessOut > 0 {
		turn = fmt.Sprintf("turn %s in / %s out", count(m.turnIn), count(m.turnOut))
		if m.turnCached > 0 {
			cached = fmt.Sprintf(" (%s cached)", count(m.turnCached))
		}
		session = "session " + count(m.sessIn+m.sessOut) + " tokens"
	}
	if m.costSeen {
		cost = fmt.Sprintf("$%.4f", m.cost)
	}
	line := func() string {
		parts := []string{m.modelName}
		for _, p := range []string{dir, sandbox, turn + cached, session, cost} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		return strings.Join(parts, " · ")
	}
	// Too wide for the terminal: parts give way whole, never a count cut
	// mid-number by the renderer — the directory (to its last element,
	// then entirely), the cached count, the sandbox word, then the counts
	// from the last.
	w := int(m.c.width.Load())
	steps := []func(){
		func() { dir = "…/" + filepath.Base(dir) },
		func() { dir = "" },
		func() { cached = "" },
		func() { sandbox = "" },
		func() { cost = "" },
		func() { session = "" },
		func() { turn = "" },
	}
	s := line()
	for _, step := range steps {
		if w <= 0 || ansi.StringWidth(s) <= w {
			break
		}
		step()
		s = line()
	}
	return m.c.st.status.Render(s)
}

// elapsed is the spinner's clock: "12s", "3m 05s".
func elapsed(d time.Duration) string {
	s := int(d.Seconds())
	if s < 60 {
		return fmt.Sprintf("%ds", s)
	}
	return fmt.Sprintf("%dm %02ds", s/60, s%60)
}

// count prints a token count in full; scripts and people both read it.
func count(n int64) string { return fmt.Sprintf("%d", n) }

// ---- styles ----

type palette struct {
	r                                                                         *lipgloss.Renderer
	title, dim, prompt, toolMark, toolName, args, pipe, ok, bad, spin, status lipgloss.Style
}

// newStyles builds the chat's styles on a renderer of its own whose colour
// profile is decided here (never by asking the terminal): none with
// NO_COLOR, 256 colours otherwise.
func newStyles(out io.Writer, color bool) palette {
	r := lipgloss.NewRenderer(out)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	r.SetHasDarkBackground(true)
	n := r.NewStyle
	return palette{
		r:        r,
		title:    n().Bold(true),
		dim:      n().Foreground(lipgloss.Color("245")),
		prompt:   n().Foreground(lipgloss.Color("39")).Bold(true),
		toolMark: n().Foreground(lipgloss.Color("35")),
		toolName: n().Bold(true),
		args:     n().Foreground(lipgloss.Color("250")),
		pipe:     n().Foreground(lipgloss.Color("240")),
		ok:       n().Foreground(lipgloss.Color("35")),
		bad:      n().Foreground(lipgloss.Color("167")),
		spin:     n().Foreground(lipgloss.Color("39")),
		status:   n().Foreground(lipgloss.Color("244")),
	}
}

// Interrupt acts as Ctrl-C during a turn (SIGINT from outside the
// terminal): the turn is cancelled. At an idle prompt it does nothing.
func (c *Chat) Interrupt() { c.send(interruptMsg{}) }

// Stop ends Run at once, restoring the terminal (SIGTERM).
func (c *Chat) Stop() {
	c.send(interruptMsg{})
	if c.prog != nil {
		c.prog.Quit()
	}
}

type interruptMsg struct{}

// WaitTurns waits up to d for a turn cancelled by Stop to end (its tool's
// processes stopped), after Run has returned.
func (c *Chat) WaitTurns(d time.Duration) {
	done := make(chan struct{})
	go func() { c.turns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
