package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReplayPlaysStepsInOrder(t *testing.T) {
	t.Parallel()
	p, err := NewReplayBytes("demo.json", []byte(`{"model":"replay","steps":[
		{"text":"Let me look at the environment.","tool_calls":[{"name":"bash","args":{"script":"env"}},{"name":"read_file","args":{"path":".env"}}]},
		{"text":"One more.","tool_calls":[{"id":"mine","name":"bash","args":{"script":"id"}},{"name":"ls"}]},
		{"text":"Done: nothing secret was visible."}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "replay" {
		t.Errorf("Name() = %q, want replay", p.Name())
	}
	want := []Response{
		{Text: "Let me look at the environment.", StopReason: "tool_use", ToolCalls: []ToolCall{
			{ID: "call_1", Name: "bash", Args: json.RawMessage(`{"script":"env"}`)},
			{ID: "call_2", Name: "read_file", Args: json.RawMessage(`{"path":".env"}`)},
		}},
		{Text: "One more.", StopReason: "tool_use", ToolCalls: []ToolCall{
			{ID: "mine", Name: "bash", Args: json.RawMessage(`{"script":"id"}`)},
			{ID: "call_4", Name: "ls", Args: json.RawMessage(`{}`)},
		}},
		{Text: "Done: nothing secret was visible.", StopReason: "end_turn"},
		// Out of steps: a polite final answer, not an error.
		{Text: "(replay finished)", StopReason: "end_turn"},
		{Text: "(replay finished)", StopReason: "end_turn"},
	}
	for i, w := range want {
		var c collector
		got, err := p.Stream(context.Background(), Request{}, c.onText)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("step %d:\n got %s\nwant %s", i+1, dump(got), dump(w))
		}
		if joined := strings.Join(c.got(), ""); joined != w.Text {
			t.Errorf("step %d: onText deltas join to %q, want %q", i+1, joined, w.Text)
		}
	}
}

func TestReplayStreamsWordByWord(t *testing.T) {
	t.Parallel()
	p, err := NewReplayBytes("w.json", []byte(`{"steps":[{"text":"  Two words\nand\ta line. "}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var c collector
	if _, err := p.Stream(context.Background(), Request{}, c.onText); err != nil {
		t.Fatal(err)
	}
	want := []string{"  ", "Two ", "words\n", "and\t", "a ", "line. "}
	if !reflect.DeepEqual(c.got(), want) {
		t.Errorf("deltas = %q, want %q", c.got(), want)
	}
}

func TestReplayReturnsCopies(t *testing.T) {
	t.Parallel()
	p, err := NewReplayBytes("c.json", []byte(`{"steps":[{"text":"x","tool_calls":[{"name":"bash","args":{"script":"env"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := p.Stream(context.Background(), Request{}, nil)
	resp.ToolCalls[0].Args[2] = 'X' // a careless caller
	rp := p.(*replayProvider)
	if got := string(rp.steps[0].ToolCalls[0].Args); got != `{"script":"env"}` {
		t.Errorf("stored step changed to %s", got)
	}
}

func TestReplayCancelled(t *testing.T) {
	t.Parallel()
	p, err := NewReplayBytes("c.json", []byte(`{"steps":[{"text":"a b c d"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, err = p.Stream(ctx, Request{}, func(string) { n++; cancel() })
	if err != context.Canceled || n != 1 {
		t.Errorf("Stream = %v after %d deltas, want context.Canceled after 1", err, n)
	}
}

func TestReplayErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data, want string
	}{
		{"unknown top-level field", `{"model":"replay","stepz":[]}`,
			`replay bad.json:1:19: unknown field "stepz" (known: model, steps; in a step: text, tool_calls; in a tool call: id, name, args)`},
		{"unknown step field", "{\"steps\":[\n  {\"text\":\"hi\",\"tool_call\":[]}\n]}",
			`replay bad.json:2:16: unknown field "tool_call" (known: model, steps; in a step: text, tool_calls; in a tool call: id, name, args)`},
		{"unknown tool call field", `{"steps":[{"tool_calls":[{"name":"bash","arguments":{}}]}]}`,
			`replay bad.json:1:41: unknown field "arguments" (known: model, steps; in a step: text, tool_calls; in a tool call: id, name, args)`},
		{"malformed", "{\"steps\":[\n  {\"text\":\"hi\",}\n]}",
			`replay bad.json:2:16: malformed JSON: invalid character '}' looking for beginning of object key string`},
		{"truncated", "{\"steps\":[\n", `replay bad.json:2:1: malformed JSON: unexpected end of input`},
		{"wrong type", `{"steps":[{"text":3}]}`, `replay bad.json:1:19: field "steps.text": got JSON number, want string`},
		{"trailing data", `{"steps":[{"text":"a"}]} {}`, `replay bad.json:1:26: unexpected data after the JSON document`},
		{"no steps", `{"model":"replay","steps":[]}`, `replay bad.json: no steps`},
		{"tool call without name", `{"steps":[{"tool_calls":[{"args":{}}]}]}`, `replay bad.json: step 1, tool call 1: missing "name"`},
		{"args not an object", `{"steps":[{"text":"a"},{"tool_calls":[{"name":"bash","args":"env"}]}]}`,
			`replay bad.json: step 2, tool call 1: "args" must be a JSON object`},
		{"duplicate id", `{"steps":[{"tool_calls":[{"name":"a"},{"id":"call_1","name":"b"}]}]}`,
			`replay bad.json: step 1, tool call 2: duplicate id "call_1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewReplayBytes("bad.json", []byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Errorf("error =\n %v\nwant\n %s", err, tc.want)
			}
		})
	}
}

func TestReplayFromFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, []byte(`{"steps":[{"text":"from a file"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := NewReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := p.Stream(context.Background(), Request{}, nil); err != nil || resp.Text != "from a file" {
		t.Errorf("Stream = %q, %v", resp.Text, err)
	}

	missing := filepath.Join(dir, "missing.json")
	_, err = NewReplay(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: error = %v, want fs.ErrNotExist", err)
	}
	if want := "replay: open " + missing + ": no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("missing file: error = %v, want %q", err, want)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"steps":[{"txt":"x"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewReplay(bad); err == nil || !strings.Contains(err.Error(), bad+":1:12: unknown field \"txt\"") {
		t.Errorf("unknown field in a file: error = %v, want it to name %s and \"txt\"", err, bad)
	}
}

func TestDefaultReplayIsTheLeakCheck(t *testing.T) {
	t.Parallel()
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "leak-check.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(example, DefaultReplay) {
		t.Error("examples/leak-check.json and replays/leak-check.json differ; keep them identical")
	}

	p, err := NewReplayBytes("embedded leak-check.json", DefaultReplay)
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Stream(context.Background(), Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != "bash" || first.ToolCalls[0].ID != "call_1" {
		t.Fatalf("first step tool calls = %s, want one bash call", dump(first.ToolCalls))
	}
	var args struct{ Script string }
	if err := json.Unmarshal(first.ToolCalls[0].Args, &args); err != nil {
		t.Fatal(err)
	}
	const script = `env; echo ---; cat .env; echo ---; cat /proc/$PPID/environ | tr '\0' '\n'`
	if args.Script != script {
		t.Errorf("script = %q, want %q", args.Script, script)
	}
	second, err := p.Stream(context.Background(), Request{}, nil)
	if err != nil || len(second.ToolCalls) != 0 || second.Text == "" || second.Text == replayFinishedText {
		t.Errorf("second step = %s, %v; want a final text summary", dump(second), err)
	}
}
