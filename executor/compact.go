package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
)

// CompactPolicy says when a conversation is compacted automatically and
// how much of it stays verbatim.
type CompactPolicy struct {
	// Auto compacts once the conversation passes Threshold of Window.
	Auto bool
	// Window is the model's context window in tokens (default 128000).
	Window int64
	// Threshold is the fraction of Window that triggers it (default 0.8).
	Threshold float64
	// KeepTurns is how many of the latest turns stay verbatim (default 2).
	KeepTurns int
}

// Defaults fills the zero fields.
func (p CompactPolicy) Defaults() CompactPolicy {
	if p.Window <= 0 {
		p.Window = 128000
	}
	if p.Threshold <= 0 || p.Threshold > 1 {
		p.Threshold = 0.8
	}
	if p.KeepTurns <= 0 {
		p.KeepTurns = 2
	}
	return p
}

// Compacted describes one compaction.
type Compacted struct {
	// Through is the last turn the summary replaces.
	Through int
	// Summarized counts the turns folded into the summary this time.
	Summarized int
	// Kept counts the turns left verbatim.
	Kept    int
	Summary string
}

// ErrNothingToCompact: the conversation has no more turns than are kept.
var ErrNothingToCompact = errors.New("nothing to compact")

// compactSystem is the summarizer's instruction.
const compactSystem = "You summarize a conversation between a user and a coding agent (hush) so that the agent can " +
	"continue the work with only your summary and the latest turns. Keep the user's goals and constraints, decisions " +
	"made, files, commands and tools involved, what was done, what failed, and what remains to do. Do not invent " +
	"anything. Secret values appear as [REDACTED:NAME]; keep those markers as they are and never guess a value. " +
	"Answer with the summary only, in plain text."

// EstimateTokens guesses the token count of msgs for a provider that
// reports no usage: about four bytes a token.
func EstimateTokens(msgs []provider.Message) int64 {
	var n int64
	for _, m := range msgs {
		n += int64(len(m.Text))
		for _, c := range m.ToolCalls {
			n += int64(len(c.Name) + len(c.Args))
		}
	}
	return n / 4
}

// NeedsCompaction reports whether conv is near the context window: by the
// size the provider last reported (lastContext), or an estimate when it
// reported none.
func (a *Agent) NeedsCompaction(conv *transcript.Conversation, lastContext int64) bool {
	p := a.Compaction.Defaults()
	if !a.Compaction.Auto || len(conv.Turns) <= p.KeepTurns {
		return false
	}
	size := lastContext
	if size <= 0 {
		size = EstimateTokens(conv.Messages())
	}
	return float64(size) >= p.Threshold*float64(p.Window)
}

// Compact asks the model to summarize all but the last keep turns of conv
// (keep <= 0: the policy's KeepTurns), replaces them in conv with the
// summary, and records the summary in the transcript.
func (a *Agent) Compact(ctx context.Context, conv *transcript.Conversation, keep int) (Compacted, error) {
	if keep <= 0 {
		keep = a.Compaction.Defaults().KeepTurns
	}
	if len(conv.Turns) <= keep {
		return Compacted{}, fmt.Errorf("%w: the conversation has %d turn(s) and the last %d stay verbatim", ErrNothingToCompact, len(conv.Turns), keep)
	}
	red, _, err := a.scrubbers()
	if err != nil {
		return Compacted{}, err
	}
	if a.UnsafeNoRedaction {
		red = nil
	}
	old, kept := conv.Turns[:len(conv.Turns)-keep], conv.Turns[len(conv.Turns)-keep:]
	resp, err := a.Provider.Stream(ctx, provider.Request{System: compactSystem,
		Messages: []provider.Message{{Role: provider.RoleUser, Text: red.String(renderForSummary(conv.Summary, old))}}}, nil)
	if err != nil {
		if ctx.Err() != nil {
			return Compacted{}, ctx.Err()
		}
		return Compacted{}, fmt.Errorf("%w: compaction: %s", ErrModel, red.String(err.Error()))
	}
	summary := strings.TrimSpace(red.String(outbuf.Sanitize(resp.Text)))
	if summary == "" {
		return Compacted{}, fmt.Errorf("%w: compaction: the model returned an empty summary; nothing was changed", ErrModel)
	}
	c := Compacted{Through: old[len(old)-1].N, Summarized: len(old), Kept: len(kept), Summary: summary}
	if a.Transcript != nil {
		line := transcript.Line(transcript.Entry{Type: transcript.TypeSummary, SessionID: a.Session, Text: summary,
			ThroughTurn: c.Through, KeptTurns: c.Kept, Time: time.Now()})
		if _, err := a.Transcript.Write(line); err != nil {
			return Compacted{}, fmt.Errorf("record the summary in the transcript: %w", err)
		}
	}
	conv.Summary, conv.SummaryThrough = summary, c.Through
	conv.Turns = append([]transcript.Turn(nil), kept...)
	return c, nil
}

// renderForSummary writes turns as plain text: the summarizer gets no
// tools, and some providers refuse tool calls in a request without them.
func renderForSummary(earlier string, turns []transcript.Turn) string {
	const maxResult = 2000
	var b strings.Builder
	b.WriteString("Summarize this conversation.\n\n")
	if earlier != "" {
		b.WriteString("Summary of what came before it:\n" + earlier + "\n\n")
	}
	for _, t := range turns {
		fmt.Fprintf(&b, "## Turn %d\n", t.N)
		for _, m := range t.Messages {
			switch m.Role {
			case provider.RoleUser:
				b.WriteString("User: " + m.Text + "\n")
			case provider.RoleAssistant:
				if m.Text != "" {
					b.WriteString("Agent: " + m.Text + "\n")
				}
				for _, c := range m.ToolCalls {
					fmt.Fprintf(&b, "Agent called %s %s\n", c.Name, c.Args)
				}
			case provider.RoleTool:
				text := m.Text
				if len(text) > maxResult {
					text = text[:maxResult] + " …(cut)"
				}
				b.WriteString("Tool result: " + text + "\n")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
