package ui

import (
	"fmt"
	"strings"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/executor/provider"
)

// SetConversation has Run draw msgs (a resumed session) under the banner,
// before the prompt. Call it before Run.
func (c *Chat) SetConversation(msgs []provider.Message) { c.resumed = msgs }

// Replay draws msgs into the scrollback, as a resumed session looks: the
// user's prompts, the model's text rendered, one line per tool call. It is
// for a Command (/resume), which runs off the event loop.
func (c *Chat) Replay(msgs []provider.Message) {
	if s := c.conversation(msgs); s != "" {
		c.print(s)
	}
}

// conversation renders msgs as one block of text. Tool output is not
// drawn again: each call is its title, with what it found and a ✗ when it
// failed.
func (c *Chat) conversation(msgs []provider.Message) string {
	results := map[string]provider.Message{}
	for _, m := range msgs {
		if m.Role == provider.RoleTool {
			results[m.ToolCallID] = m
		}
	}
	width := int(c.width.Load())
	var b strings.Builder
	turns := 0
	for _, m := range msgs {
		switch m.Role {
		case provider.RoleUser:
			turns++
			b.WriteString("\n" + c.st.prompt.Render("› ") + strings.ReplaceAll(outbuf.Sanitize(m.Text), "\n", "\n  ") + "\n")
		case provider.RoleAssistant:
			if t := strings.TrimSpace(m.Text); t != "" {
				if t == executor.CancelledNote {
					b.WriteString("\n" + c.st.dim.Render("(turn cancelled)") + "\n")
				} else {
					b.WriteString("\n" + c.md.render(outbuf.Sanitize(m.Text), width) + "\n")
				}
			}
			for i, call := range m.ToolCalls {
				if i == 0 {
					b.WriteString("\n")
				}
				r := results[call.ID]
				title := outbuf.Sanitize(ToolTitle(call.Name, call.Args, r.Text, max(40, width*2)))
				if w := width - 2; w > 0 {
					title = shorten(title, w)
				}
				name, rest, _ := strings.Cut(title, " ")
				line := c.st.toolMark.Render("●") + " " + c.st.toolName.Render(name) + " " + c.st.args.Render(rest)
				if r.IsError {
					line += c.st.bad.Render(" ✗")
				}
				b.WriteString(line + "\n")
			}
		}
	}
	if turns == 0 {
		return ""
	}
	b.WriteString("\n" + c.st.dim.Render(fmt.Sprintf("(%d earlier turn(s) shown; the model remembers them)", turns)))
	return b.String()
}
