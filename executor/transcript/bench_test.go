package transcript_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/executor/transcript"
)

// BenchmarkAppend is one entry written to a locked session's transcript:
// a tool result of 1 KiB (target ≤ 50 µs).
func BenchmarkAppend(b *testing.B) {
	f, err := transcript.Create(b.TempDir(), transcript.Header{ID: "b", Project: "/p"})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m := provider.Message{Role: provider.RoleTool, ToolCallID: "c1", Text: strings.Repeat("output line\n", 85)}
	for b.Loop() {
		if _, err := f.Write(transcript.Line(transcript.MessageEntry("b", 1, m))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList1000 lists 1,000 sessions of 5 turns each, every turn a
// tool call with 2 KiB of output (about 15 MB in all; target ≤ 200 ms).
func BenchmarkList1000(b *testing.B) {
	data := b.TempDir()
	out := strings.Repeat("x", 2048)
	for i := range 1000 {
		id := fmt.Sprintf("s%04d", i)
		f, err := transcript.Create(data, transcript.Header{ID: id, Project: "/p"})
		if err != nil {
			b.Fatal(err)
		}
		for n := 1; n <= 5; n++ {
			for _, m := range []provider.Message{
				{Role: provider.RoleUser, Text: fmt.Sprintf("prompt %d of %s", n, id)},
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c", Name: "bash", Args: json.RawMessage(`{"script":"ls"}`)}}},
				{Role: provider.RoleTool, ToolCallID: "c", Text: out},
				{Role: provider.RoleAssistant, Text: "done"},
			} {
				_, _ = f.Write(transcript.Line(transcript.MessageEntry(id, n, m)))
			}
		}
		f.Close()
	}
	b.ResetTimer()
	for b.Loop() {
		all, _, err := transcript.List(data)
		if err != nil || len(all) != 1000 || all[0].Completed != 5 {
			b.Fatalf("%d sessions, %v", len(all), err)
		}
	}
}
