package tests

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCLIConventions: a mistyped command or flag gets one line and the
// usage, exit 2; `hush help [command]` works; chat's flags work on the
// root command.
func TestCLIConventions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, tc := range []struct {
		args []string
		code int
		want []string
		not  []string
	}{
		{[]string{"frobnicate"}, 2, []string{`hush: unknown command "frobnicate" (see hush --help)`}, []string{"No help topic", "USAGE:"}},
		{[]string{"--frob"}, 2, []string{"hush: unknown flag --frob\nusage: hush [options]; hush --help explains each option\n"}, []string{"USAGE:", "Incorrect Usage", "did you mean"}},
		// A flag one letter off names the flag meant, on the same line.
		{[]string{"run", "--modle", "x", "hi"}, 2, []string{"hush: unknown flag --modle; did you mean --model?\nusage: hush run [options] [--] PROMPT"}, []string{"USAGE:", "OPTIONS:"}},
		// After the prompt too: not sent as prompt text.
		{[]string{"run", "hi", "--modle", "x"}, 2, []string{"hush: unknown flag --modle; did you mean --model?\nusage: hush run [options] [--] PROMPT"}, []string{"USAGE:", "OPTIONS:", "no model"}},
		{[]string{"run", "hi", "there", "-q"}, 2, []string{"hush: unknown flag -q\nusage: hush run"}, []string{"no model"}},
		{[]string{"run", "hi", "--model=x"}, 2, []string{`hush: flag --model=x comes after the prompt; put flags first`}, []string{"no model"}},
		{[]string{"run", "--help"}, 0, []string{`hush run -- "-v prints nothing"`}, nil},
		{[]string{"audit", "--no-dcoker"}, 2, []string{"hush: unknown flag --no-dcoker; did you mean --no-docker?\nusage: hush audit [options]; hush audit --help explains each option\n"}, []string{"OPTIONS:"}},
		{[]string{"vault", "list", "--frob"}, 2, []string{"hush: unknown flag --frob\nusage: hush vault list [options]"}, []string{"USAGE:"}},
		{[]string{"help"}, 0, []string{"USAGE:", "run "}, nil},
		{[]string{"help", "run"}, 0, []string{"hush run - run one agent turn"}, nil},
		// help of a command with subcommands lists them and its options,
		// and reads every word: help vault set is vault set's help.
		{[]string{"help", "vault"}, 0, []string{"COMMANDS:", "   set ", "   reveal ", "OPTIONS:", "--help"}, nil},
		{[]string{"help", "vault", "set"}, 0, []string{"hush vault set - store a secret"}, []string{"COMMANDS:"}},
		{[]string{"help", "vault", "frob"}, 2, []string{`hush: no help for "vault frob": hush vault has no such command (see hush vault --help)`}, nil},
		// A word hush does not know is an error, never help or a silently
		// ignored argument (`hush audit frob` ran the whole audit).
		{[]string{"vault", "frob"}, 2, []string{`hush: unknown command "hush vault frob" (see hush vault --help)`}, []string{"No help topic", "USAGE:"}},
		{[]string{"mcp", "frob"}, 2, []string{`hush: unknown command "hush mcp frob" (see hush mcp --help)`}, []string{"No help topic"}},
		{[]string{"audit", "frob"}, 2, []string{`hush: unknown command "hush audit frob" (see hush audit --help)`}, []string{"PATH"}},
		{[]string{"sessions", "frob"}, 2, []string{`hush: unknown command "hush sessions frob"`}, []string{"FIRST PROMPT"}},
		{[]string{"help", "frob"}, 2, []string{`hush: no help for "frob": hush has no such command (see hush --help)`}, []string{"No help topic"}},
		{[]string{"env", "frob"}, 2, []string{`hush: hush env takes no arguments (got "frob"; see hush env --help)`}, []string{"HOME="}},
		{[]string{"vault", "list", "frob"}, 2, []string{`hush: hush vault list takes no arguments (got "frob"`}, []string{"NAME"}},
		{[]string{"audit", "log", "--last", "-1"}, 2, []string{"hush: --last -1: give a number of entries, 1 or more"}, []string{"TIME"}},
		{[]string{"vault"}, 0, []string{"USAGE:", "set "}, nil},
		{[]string{"sessions"}, 0, []string{"No sessions yet"}, []string{"unknown"}},
	} {
		out, code := runHushWithin(t, w, 20*time.Second, tc.args...)
		if code != tc.code {
			t.Errorf("hush %s: exit %d, want %d\n%s", strings.Join(tc.args, " "), code, tc.code, out)
		}
		for _, s := range tc.want {
			if !strings.Contains(out, s) {
				t.Errorf("hush %s: output lacks %q:\n%s", strings.Join(tc.args, " "), s, out)
			}
		}
		for _, s := range tc.not {
			if strings.Contains(out, s) {
				t.Errorf("hush %s: output has %q:\n%s", strings.Join(tc.args, " "), s, out)
			}
		}
		if n := strings.Count(out, "unknown"); n > 1 {
			t.Errorf("hush %s: the error is printed %d times:\n%s", strings.Join(tc.args, " "), n, out)
		}
	}
	// The model flags on the root command: `hush --provider … --model …`.
	model := newFakeModel(t, step{text: "root flags work"})
	out, err := runHushStdin(w, "hi\n", "--provider", "openai", "--base-url", model.URL(), "--model", "from-the-root")
	if err != nil || !strings.Contains(out, "root flags work") {
		t.Fatalf("hush --model …: %v\n%s", err, out)
	}
	if !strings.Contains(model.Received(), `"model":"from-the-root"`) {
		t.Errorf("the root's --model was not used:\n%s", model.Received())
	}
	// After --, words written as flags are the prompt's.
	dash := newFakeModel(t, step{text: "dash prompt sent"})
	out, code := runHushWithin(t, w, 20*time.Second, "run", "--provider", "openai", "--base-url", dash.URL(), "--model", "m", "--", "-v prints", "--nothing")
	if code != 0 || !strings.Contains(out, "dash prompt sent") || !strings.Contains(dash.Received(), `"content":"-v prints --nothing"`) {
		t.Errorf("hush run -- -v prints --nothing: exit %d\n%s\nthe model got:\n%s", code, out, dash.Received())
	}
}

// TestReadmeDemo: the README's first command — an exported DEMO_API_KEY,
// a .env in the project, one rule — replays examples/demo.json: the
// ungranted call gets neither value, the granted one gets the key (its
// length arrives) and the screen shows it only redacted.
func TestReadmeDemo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := canary("demokey")
	dotenv := canary("demodotenv")
	w.setEnv("DEMO_API_KEY", key)
	w.write(filepath.Join(w.project, ".env"), "DEMO_DOTENV_TOKEN="+dotenv+"\n")
	w.config("[[rules]]\ngate = \"vault.read:DEMO_API_KEY\"\nsubject = \"bash\"\ndecision = \"allow\"\n")
	demo, err := filepath.Abs(filepath.Join("..", "examples", "demo.json"))
	if err != nil {
		t.Fatal(err)
	}
	tm := startPTY(t, w, "run", "--provider", "replay", "--replay", demo, "--yes", "check what a tool can see")
	if code := tm.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
	raw := tm.Raw()
	for _, v := range []string{key, dotenv} {
		if strings.Contains(raw, v) {
			t.Errorf("the terminal received a demo secret's value")
		}
	}
	screen := tm.Screen()
	for _, want := range []string{"the key I was given: [REDACTED:DEMO_API_KEY]", fmt.Sprintf("│ %d\r\n", len(key)), "│ 0\r\n"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the demo's screen lacks %q:\n%s", want, screen)
		}
	}
}
