package ui

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/executor/provider"
)

// RunView renders a turn for a person (`hush run`, and `hush chat --plain`): streamed model text, each tool
// call with its arguments, a bounded preview of its output, and its result.
// Nothing reaches the terminal unsanitized: tool output cannot move the
// cursor, set the title, or write the clipboard.
type RunView struct {
	mu  sync.Mutex
	out io.Writer
	// PreviewLines bounds the output shown per tool call.
	PreviewLines int

	lines     int  // preview lines shown for the current call
	shown     int  // preview bytes shown for the current call
	cut       bool // preview limit reached
	lineStart bool
	partial   strings.Builder
	inText    bool
	afterTool bool // a tool's result, and the blank line after it, came last
}

// NewRunView renders on out, with a preview of 12 lines per tool call.
func NewRunView(out io.Writer) *RunView {
	return &RunView{out: out, PreviewLines: 12}
}

func (t *RunView) Text(delta string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inText, t.afterTool = true, false
	io.WriteString(t.out, delta) // sanitized by the executor
}

func (t *RunView) ToolStart(call provider.ToolCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inText {
		io.WriteString(t.out, "\n")
		t.inText = false
	}
	// The name is the model's too: an unknown tool's name reaches here as
	// sent, escapes and all.
	lead := "\n"
	if t.afterTool {
		lead = "" // one blank line between two calls, not two
	}
	t.afterTool = false
	fmt.Fprintf(t.out, "%s● %s\n", lead, outbuf.Sanitize(ToolTitle(call.Name, call.Args, "", 300)))
	t.lines, t.shown, t.cut, t.lineStart = 0, 0, false, true
	t.partial.Reset()
}

func (t *RunView) ToolOutput(_ provider.ToolCall, chunk []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut {
		return
	}
	// One write per chunk: a 20 MB line written a character at a time
	// took 32.7 s to reach the terminal.
	var b strings.Builder
	b.Grow(len(chunk) + 16)
	for len(chunk) > 0 { // sanitized by the executor
		if t.lines >= t.PreviewLines || t.shown >= previewBytes {
			t.cut = true
			break
		}
		if t.lineStart {
			b.WriteString("  │ ")
			t.lineStart = false
		}
		line := chunk
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			line = chunk[:i+1]
		}
		if room := previewBytes - t.shown; len(line) > room {
			line = line[:room]
			for len(line) > 0 && !utf8.RuneStart(chunk[len(line)]) { // never split a character
				line = line[:len(line)-1]
			}
			t.cut = true
		}
		b.Write(line)
		t.shown += len(line)
		chunk = chunk[len(line):]
		if n := len(line); n > 0 && line[n-1] == '\n' {
			t.lines++
			t.lineStart = true
		}
		if t.cut {
			break
		}
	}
	io.WriteString(t.out, b.String())
}

// previewBytes bounds the bytes of one call's preview: twelve lines can be
// one line of 20 MB.
const previewBytes = 16 << 10

func (t *RunView) ToolEnd(_ provider.ToolCall, result string, isErr bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.lineStart {
		io.WriteString(t.out, "\n")
	}
	if t.cut {
		io.WriteString(t.out, "  │ … (preview cut; the model sees up to 32 KiB)\n")
	}
	last := result
	if i := strings.LastIndexByte(strings.TrimRight(result, "\n"), '\n'); i >= 0 && !strings.HasPrefix(result, "denied:") {
		last = result[i+1:]
	}
	if sentence, rule, ok := executor.DenialParts(strings.TrimSpace(last)); ok {
		// A denial reads as one: what was refused, and the rule that
		// would allow it, as a block to copy into config.toml.
		fmt.Fprintf(t.out, "  └ ✗ denied: %s\n", outbuf.Sanitize(sentence))
		if len(rule) > 0 {
			io.WriteString(t.out, "    to allow it, add to config.toml:\n")
			for _, l := range rule {
				fmt.Fprintf(t.out, "      %s\n", outbuf.Sanitize(l))
			}
		}
		io.WriteString(t.out, "\n")
		t.afterTool = true
		return
	}
	mark := "└"
	if isErr {
		mark = "└ ✗"
	}
	if t.lines == 0 || strings.HasPrefix(result, "denied:") || strings.HasPrefix(last, "[") || strings.HasPrefix(last, "error:") || strings.HasPrefix(last, "cancelled") {
		fmt.Fprintf(t.out, "  %s %s\n", mark, outbuf.Sanitize(strings.TrimSpace(last)))
	}
	io.WriteString(t.out, "\n")
	t.afterTool = true
}
