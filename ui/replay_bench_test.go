package ui

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/hushcli/hush/executor/provider"
)

// BenchmarkResumeRedraw200Turns: drawing a resumed session of 200 turns
// (each a prompt, a tool call with its result and a Markdown answer) as
// --continue shows it; the target is 150 ms.
func BenchmarkResumeRedraw200Turns(b *testing.B) {
	var msgs []provider.Message
	for i := range 200 {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			provider.Message{Role: provider.RoleUser, Text: fmt.Sprintf("turn %d: fix the word count in wordcount/wc.py", i)},
			provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: id, Name: "read", Args: json.RawMessage(`{"path":"wordcount/wc.py"}`)}}},
			provider.Message{Role: provider.RoleTool, ToolCallID: id, Text: "1\tdef count_words(s):\n[lines 1–120 of wordcount/wc.py (3.2 KiB)]"},
			provider.Message{Role: provider.RoleAssistant, Text: "## Fixed\n\nThe **split** was wrong:\n\n```python\nreturn len(s.split())\n```\n\n- a list item\n- another one with `code`\n"})
	}
	c := New(Config{Out: io.Discard, Color: true})
	c.width.Store(140)
	b.ResetTimer()
	for range b.N {
		if s := c.conversation(msgs); len(s) == 0 {
			b.Fatal("nothing drawn")
		}
	}
}
