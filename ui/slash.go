package ui

import (
	"context"
	"fmt"
	"sort"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/hushcli/hush/executor/outbuf"
)

// command is one slash command, answered by hush itself: none is ever
// sent to the model.
type command struct {
	name, args, help string
}

var commands = []command{
	{"/help", "", "this list"},
	{"/clear", "", "start a new conversation (the model forgets the earlier turns)"},
	{"/model", "[NAME]", "switch to NAME from the next turn; without NAME, pick from the server's models"},
	{"/tools", "", "the tools the model is offered, how each runs and which secrets it is configured to get"},
	{"/usage", "", "tokens used this turn and this session, as the server reported them"},
	{"/exit", "", "leave hush (also /quit, Ctrl-D)"},
}

// all is the built-in commands and the session's, in /help order.
func (m *model) all() []command {
	out := append([]command(nil), commands[:len(commands)-1]...)
	for _, c := range m.c.cfg.Commands {
		out = append(out, command{c.Name, c.Args, c.Help})
	}
	return append(out, commands[len(commands)-1])
}

// isCommand reports whether a prompt is a slash command for hush: it
// starts with one "/" and its first word is a name, not a path — "/etc/hosts
// has a typo" and "/tmp/x.log: why?" are messages for the model. "//x"
// sends "/x" to the model.
func isCommand(prompt string) bool {
	if !strings.HasPrefix(prompt, "/") || strings.HasPrefix(prompt, "//") {
		return false
	}
	name := strings.Fields(prompt)[0]
	return !strings.Contains(name[1:], "/")
}

func lookup(name string) (command, bool) {
	if name == "/quit" {
		name = "/exit"
	}
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// slash answers a slash command; quit reports /exit.
func (m *model) slash(line string) (out string, quit bool) {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	st := m.c.st
	cmd, ok := lookup(name)
	if !ok {
		return st.bad.Render(fmt.Sprintf("unknown command %s", outbuf.Sanitize(name))) +
			st.dim.Render(" — /help lists the commands; start a message with // to send it to the model as /…"), false
	}
	switch cmd.name {
	case "/help":
		var b strings.Builder
		b.WriteString("Commands (answered by hush, never sent to the model):\n")
		for _, c := range m.all() {
			fmt.Fprintf(&b, "  %-14s %s\n", strings.TrimSpace(c.name+" "+c.args), st.dim.Render(c.help))
		}
		b.WriteString("Keys: Enter sends · Alt-Enter, Shift-Enter or Ctrl-J adds a line · Up/Down recall earlier prompts\n")
		b.WriteString("      Tab completes a command · Ctrl-A/E start/end of line · Alt-B/F or Ctrl-←/→ word jumps\n")
		b.WriteString("      Ctrl-K/U/W delete to end/start/word · Ctrl-L clears the screen\n")
		b.WriteString("      @path + Tab attaches a project file · Ctrl-G edits the prompt in $EDITOR · Ctrl-O shows the last tool output whole\n")
		b.WriteString("      Ctrl-C stops a turn (twice at an empty prompt exits) · Ctrl-D exits")
		return b.String(), false
	case "/exit":
		return "", true
	case "/clear":
		if m.c.cfg.Clear != nil {
			m.c.cfg.Clear()
		}
		m.turnIn, m.turnOut, m.turnCached = 0, 0, 0
		return st.dim.Render("(new conversation: the model remembers nothing of the earlier turns)"), false
	case "/model":
		if arg == "" {
			return "model: " + m.modelName + st.dim.Render(" — /model NAME switches"), false
		}
		if m.c.cfg.SetModel == nil {
			return st.bad.Render("this session cannot switch models"), false
		}
		if err := m.c.cfg.SetModel(arg); err != nil {
			return st.bad.Render("model not changed: " + outbuf.Sanitize(err.Error())), false
		}
		m.modelName = arg
		return "model: " + outbuf.Sanitize(arg) + st.dim.Render(" (from the next turn)"), false
	case "/tools":
		if m.c.cfg.Tools == nil {
			return "no tools\n" + m.instructionsLine(), false
		}
		var b strings.Builder
		tools := m.c.cfg.Tools()
		sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
		for i, t := range tools {
			secrets := "no secrets configured"
			if len(t.Secrets) > 0 {
				secrets = "secrets: " + strings.Join(t.Secrets, ", ")
			}
			desc, _, _ := strings.Cut(t.Description, "\n")
			fmt.Fprintf(&b, "  %s %s\n    %s", st.toolName.Render(outbuf.Sanitize(t.Name)), st.dim.Render("— "+t.Sandbox+"; "+secrets), outbuf.Sanitize(shorten(desc, 200)))
			if i < len(tools)-1 {
				b.WriteString("\n")
			}
		}
		if len(tools) == 0 {
			b.WriteString("no tools")
		}
		b.WriteString("\n" + m.instructionsLine())
		return b.String(), false
	case "/usage":
		s := fmt.Sprintf("this turn: %d input, %d output tokens", m.turnIn, m.turnOut)
		if m.turnCached > 0 {
			s += fmt.Sprintf(" (%d input tokens from the cache)", m.turnCached)
		}
		s += fmt.Sprintf("\nthis session: %d input, %d output tokens", m.sessIn, m.sessOut)
		if m.costSeen {
			s += fmt.Sprintf("\ncost reported by the server: $%.4f", m.cost)
		}
		if m.sessIn+m.sessOut == 0 {
			s += st.dim.Render("\n(the server has reported no usage)")
		}
		return s, false
	}
	return "", false
}

// complete fills in a slash command on Tab: the one match, or the
// common prefix with the matches listed.
func (m *model) complete() (tea.Model, tea.Cmd) {
	typed := m.ta.Value()
	var matches []string
	for _, c := range m.all() {
		if strings.HasPrefix(c.name, typed) {
			matches = append(matches, c.name)
		}
	}
	switch len(matches) {
	case 0:
		return m, nil
	case 1:
		m.ta.SetValue(matches[0] + " ")
		return m, nil
	}
	prefix := matches[0]
	for _, s := range matches[1:] {
		for !strings.HasPrefix(s, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	m.ta.SetValue(prefix)
	return m, tea.Println(m.c.st.dim.Render(strings.Join(matches, "  ")))
}

// instructionsLine says, under /tools, which AGENTS.md files the system
// prompt carries and whether the size cap cut one.
func (m *model) instructionsLine() string {
	if m.c.cfg.Instructions == nil {
		return m.c.st.dim.Render("project instructions: none loaded (no AGENTS.md found)")
	}
	in := m.c.cfg.Instructions()
	if in == "" {
		return m.c.st.dim.Render("project instructions: none loaded (no AGENTS.md found)")
	}
	return "project " + outbuf.Sanitize(in)
}

// pickModel is /model without a name: the server's models as a picker;
// the one picked is used from the next turn.
func (c *Chat) pickModel(ctx context.Context, current string) error {
	// The list is loaded with the terminal already handed to the picker:
	// what is typed while the server answers (a filter, Down, Enter) is
	// the picker's, not the chat editor's.
	var models []string
	var picked string
	var err, perr error
	if serr := c.Suspend(func() {
		if models, err = c.cfg.ListModels(ctx); err == nil && len(models) > 0 {
			picked, perr = c.cfg.PickModel(ctx, models, current)
		}
	}); serr != nil {
		return serr
	}
	if err != nil {
		return err
	}
	if len(models) == 0 {
		c.print("model: " + outbuf.Sanitize(current) + c.st.dim.Render(" — the server lists no models; /model NAME switches"))
		return nil
	}
	if perr != nil || picked == "" || picked == current {
		c.print("model: " + outbuf.Sanitize(current) + c.st.dim.Render(" (unchanged)"))
		return nil
	}
	if err := c.cfg.SetModel(picked); err != nil {
		c.print(c.st.bad.Render("model not changed: " + outbuf.Sanitize(err.Error())))
		return nil
	}
	c.send(modelNameMsg(picked))
	c.print("model: " + outbuf.Sanitize(picked) + c.st.dim.Render(" (from the next turn)"))
	return nil
}
