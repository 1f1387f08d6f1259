package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hushcli/hush/executor/provider"
)

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

// A 20 MB line of tool output reaches the terminal in a few writes (one per
// chunk the tool produced, not one per character) and as a bounded preview.
func TestToolOutputIsWrittenInBatches(t *testing.T) {
	var w countingWriter
	ev := NewRunView(&w)
	call := provider.ToolCall{ID: "c1", Name: "bash"}
	ev.ToolStart(call)
	start := w.writes
	line := bytes.Repeat([]byte("é"), 10<<20) // 20 MB, no newline
	chunks := 0
	for len(line) > 0 {
		n := min(32<<10, len(line))
		ev.ToolOutput(call, line[:n])
		line = line[n:]
		chunks++
	}
	if got := w.writes - start; got > 2 {
		t.Errorf("%d writes for a 20 MB line in %d chunks; want the preview in at most 2", got, chunks)
	}
	ev.ToolEnd(call, "exit code 0", false)
	out := w.String()
	if len(out) > 20<<10 {
		t.Errorf("the preview of one line is %d bytes; want it bounded", len(out))
	}
	if !strings.Contains(out, "(preview cut") || !strings.Contains(out, "  │ éé") {
		t.Errorf("preview does not show the start of the line and the cut:\n%.200q", out)
	}
	if strings.ContainsRune(out, '\uFFFD') || !bytesValidUTF8(out) {
		t.Error("the cut split a character")
	}
}

func bytesValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// Ordinary output keeps its lines, each with the preview gutter.
func TestToolOutputPreviewLines(t *testing.T) {
	var w countingWriter
	ev := NewRunView(&w)
	call := provider.ToolCall{ID: "c1", Name: "bash"}
	ev.ToolStart(call)
	ev.ToolOutput(call, []byte("one\ntw"))
	ev.ToolOutput(call, []byte("o\nthree\n"))
	ev.ToolEnd(call, "exit code 0", false)
	if !strings.Contains(w.String(), "  │ one\n  │ two\n  │ three\n") {
		t.Errorf("preview = %q", w.String())
	}
}

// TestRunViewOneBlankLineBetweenCalls: two calls in a row are separated by
// one blank line, as a call and the text after it are.
func TestRunViewOneBlankLineBetweenCalls(t *testing.T) {
	var out bytes.Buffer
	v := NewRunView(&out)
	a := provider.ToolCall{ID: "1", Name: "read", Args: json.RawMessage(`{"path":"a"}`)}
	b := provider.ToolCall{ID: "2", Name: "read", Args: json.RawMessage(`{"path":"b"}`)}
	v.Text("looking")
	v.ToolStart(a)
	v.ToolEnd(a, "error: a does not exist", true)
	v.ToolStart(b)
	v.ToolEnd(b, "error: b does not exist", true)
	v.Text("done")
	want := "looking\n\n● Read a\n  └ ✗ error: a does not exist\n\n● Read b\n  └ ✗ error: b does not exist\n\ndone"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
}
