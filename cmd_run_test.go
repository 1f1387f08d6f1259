package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hushcli/hush/session"
)

// TestRunCmdOptions: run's flags and prompt reach runF's options; a flag
// after the prompt is a usage error that never reaches it.
func TestRunCmdOptions(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	var got *runOptions
	cmd := newRunCmd(ta.app, func(o *runOptions) error { got = o; return nil })
	err := runCommand(ta.app, cmd, "run", "--json", "--continue", "--fork", "--allow", "bash(make:*)", "--model", "m1", "--yes", "hello", "world")
	if err != nil || got == nil {
		t.Fatalf("run: %v", err)
	}
	if got.Prompt != "hello world" || !got.Model.json || !got.Model.yes || got.Model.model != "m1" || len(got.Model.allow) != 1 ||
		!got.Resume.Continue || !got.Resume.Fork || got.Resume.NoSave || got.Turn == nil || got.In != ta.Stdin {
		t.Errorf("options %+v", got)
	}
	got = nil
	err = runCommand(ta.app, cmd, "run", "hello", "--json")
	if asExit(err).code != exitUsage || got != nil || !strings.Contains(err.Error(), "flag --json comes after the prompt") {
		t.Errorf("a flag after the prompt: %v, runF called: %v", err, got != nil)
	}
}

// TestRunRunRefusesBeforeTheTurn: what runRun refuses it refuses without
// opening a turn; a prompt of "-" is read from In.
func TestRunRunRefusesBeforeTheTurn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts runOptions
		want string
	}{
		{"no prompt", runOptions{Prompt: "  "}, "run needs a prompt"},
		{"empty stdin", runOptions{Prompt: "-", In: strings.NewReader("\n")}, "run needs a prompt"},
		{"fork alone", runOptions{Prompt: "x", Resume: resumeRequest{Fork: true}}, "--fork and --wait go with --continue or --resume"},
		{"no-save and wait", runOptions{Prompt: "x", Resume: resumeRequest{Continue: true, Wait: true, NoSave: true}}, "--no-save writes no session"},
		{"bad allow", runOptions{Prompt: "x", Model: modelFlags{allow: []string{"bash("}}}, ""},
	} {
		turns := 0
		c.opts.Turn = func(session.Model, bool, resumeRequest) runTurn { turns++; return runTurn{} }
		err := runRun(&c.opts)
		if asExit(err).code != exitUsage || !strings.Contains(err.Error(), c.want) || turns != 0 {
			t.Errorf("%s: %v (exit %d), %d turn(s)", c.name, err, asExit(err).code, turns)
		}
	}
	// The control: a prompt from stdin runs, and a denied turn exits 3.
	var out bytes.Buffer
	closed := 0
	var prompt bool
	opts := runOptions{Prompt: "-", In: strings.NewReader("run it\n"), Model: modelFlags{json: true},
		Turn: func(_ session.Model, json bool, _ resumeRequest) runTurn {
			prompt = json
			return testRun(t, `{"steps":[{"tool_calls":[{"name":"bash","args":{"script":"true"}}]},{"text":"done"}]}`, &out, &closed)
		}}
	if err := runRun(&opts); asExit(err).code != exitDenied || !prompt || closed != 1 {
		t.Errorf("a denied turn: %v (exit %d), json %v, closed %d\n%s", err, asExit(err).code, prompt, closed, out.String())
	}
}
