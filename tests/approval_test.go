package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script330 is 330 characters whose dangerous part is at its very end,
// with the * and _ that Markdown would have eaten.
func script330(victim string) string {
	s := "for f in *_test.go; do echo checking __init__ $f; done; "
	end := "rm -rf " + victim
	for len(s)+len("echo step; ")+len(end) <= 330 {
		s += "echo step; "
	}
	return s + strings.Repeat(" ", 330-len(s)-len(end)) + end
}

// TestApprovalShowsTheWholeCommand: a 330-character script whose rm is at
// the end is on the screen, verbatim, before the choice is offered, with
// the directory, the secrets it would get and the three keys; y runs
// exactly that.
func TestApprovalShowsTheWholeCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	victim := filepath.Join(w.project, "victim")
	if err := os.Mkdir(victim, 0o700); err != nil {
		t.Fatal(err)
	}
	script := script330("victim")
	if len(script) != 330 {
		t.Fatalf("script is %d characters", len(script))
	}
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": script, "env": map[string]string{"T": "${GRANTED}"}}}}},
		step{text: "script finished"},
	)
	w.fakeModelConfig(model, "[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"bash\"\ndecision = \"allow\"\n")
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("clean up\r")
	// The hint is the prompt's last line: once it shows, so does the rest
	// (a frame can reach the terminal in more than one read).
	tm.expect("Esc or Ctrl-C denies", 20*time.Second)
	screen := tm.Screen()
	// A command wider than the terminal wraps behind its gutter: its rows,
	// joined back, are the whole script, before the choice.
	var joined strings.Builder
	for _, r := range commandRows(t, screen) {
		joined.WriteString(strings.TrimPrefix(strings.TrimPrefix(r, "  │ "), "  "))
	}
	at := strings.Index(screen, "command (1 line")
	choice := strings.Index(screen, "[y] Allow once")
	if joined.String() != script || at < 0 || at > choice {
		t.Fatalf("the whole command was not on screen before the choice (command at %d, choice at %d):\n%q\nwant %q\n%s", at, choice, joined.String(), script, screen)
	}
	for _, want := range []string{"command (1 line, exactly as it will run)", "in " + w.project, "secrets it would receive: GRANTED",
		"[s] Allow exactly this command, shown above, for this session", "[n] Deny", "press y, s, p, n, t"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, screen)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("the script ran before it was approved: %v", err)
	}
	tm.send("y")
	tm.expect("script finished", 20*time.Second)
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Errorf("the approved script did not run as shown: %v", err)
	}
	tm.quit()
}

// TestSessionRuleIsACommandPrefix: s on "echo one" allows later simple
// commands starting "echo one" without asking, and nothing else: a chained
// command is asked about again, and its denial is shown as a denial while
// the model gets one sentence.
func TestSessionRuleIsACommandPrefix(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": "echo one"}}}},
		step{calls: []fakeCall{{"bash", map[string]any{"script": "echo one two"}}}},
		step{calls: []fakeCall{{"bash", map[string]any{"script": "echo one; touch pwned"}}}},
		step{text: "all done"},
	)
	w.fakeModelConfig(model, "")
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("go\r")
	tm.expect("[s] Allow bash(echo one:*) for this session", 20*time.Second)
	tm.send("s")
	// The second prompt: the chained command, with its own rules to offer.
	tm.expect("│ echo one; touch pwned", 20*time.Second)
	tm.expect("Esc or Ctrl-C denies", 20*time.Second)
	// Counted by the header each prompt prints once before it asks: the
	// choice under it is a frame, which bubbletea draws again whole when
	// the terminal's size arrives after its first frame.
	if n := strings.Count(tm.Screen(), "command (1 line, exactly as it will run)"); n != 2 {
		t.Errorf("asked %d times, want 2 (echo one two is covered by the rule):\n%s", n, tm.Screen())
	}
	tm.send("n")
	tm.expect("all done", 20*time.Second)
	if _, err := os.Stat(filepath.Join(w.project, "pwned")); !os.IsNotExist(err) {
		t.Errorf("the chained command ran under the prefix rule")
	}
	screen := tm.Screen()
	if !strings.Contains(screen, "✗ denied: the user denied this bash call") {
		t.Errorf("the denial is not shown as one:\n%s", screen)
	}
	got := model.Received()
	if !strings.Contains(got, "denied: the user denied this bash call") || strings.Contains(got, "error: error:") || strings.Contains(got, "error: denied") {
		t.Errorf("the model was not told the denial in one sentence:\n%s", got)
	}
	tm.quit()
}

// TestRunShowsADenialWithItsRule: in hush run a secret read with no rule is
// shown as a denial with the rule to add (not the rule's last line), and
// the model gets one line without "error: error:".
func TestRunShowsADenialWithItsRule(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": "echo hi", "env": map[string]string{"T": "${GRANTED}"}}}}},
		step{text: "ok"},
	)
	w.fakeModelConfig(model, "[[rules]]\ngate = \"tool.run:bash\"\nsubject = \"bash\"\ndecision = \"allow\"\n")
	out, _ := runHushWithin(t, w, 60*time.Second, "run", "say hi")
	for _, want := range []string{"✗ denied: vault.read:GRANTED for bash is denied: no rule allows it and hush cannot ask here.",
		"to allow it, add to config.toml:", "[[rules]]", `gate = "vault.read:GRANTED"`, `subject = "bash"`, `decision = "allow"`} {
		if !strings.Contains(out, want) {
			t.Errorf("hush run output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "└ ✗ decision") {
		t.Errorf("the denial is shown by its last line:\n%s", out)
	}
	got := model.Received()
	if !strings.Contains(got, `denied: vault.read:GRANTED for bash is denied: no rule allows it`) || strings.Contains(got, "error: error:") {
		t.Errorf("the model got:\n%s", got)
	}
}

// TestModelStringsNeverReachTheTerminalRaw: OSC 0 (title), OSC 8
// (hyperlink), OSC 52 (clipboard), CSI and DCS in the model's text, in a
// tool name, and in every argument of a call (script, env names and
// values, secrets) reach the terminal inert.
func TestModelStringsNeverReachTheTerminalRaw(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const evil = "\x1b]0;PWNTITLE\x07\x1b]8;;http://pwn.example/\x1b\\PWNLINK\x1b]8;;\x1b\\\x1b]52;c;UFdOQ0xJUA==\x07\x1b[2J\x1b[31;7mPWNCSI\x1bP1$rPWNDCS\x1b\\"
	model := newFakeModel(t,
		step{text: "hello " + evil, calls: []fakeCall{
			{"x" + evil, map[string]any{"a" + evil: evil}},
			{"bash", map[string]any{"script": "echo '" + evil + "'", "env": map[string]string{"E" + evil: evil}, "secrets": []string{"S" + evil}}},
		}},
		step{text: "bye " + evil},
	)
	w.fakeModelConfig(model, "")
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("go\r")
	tm.expect("[y] Allow once", 20*time.Second)
	tm.send("n")
	tm.expect("bye", 20*time.Second)
	raw := tm.Raw()
	for _, bad := range []string{"\x1b]0;PWN", "\x1b]8;;http://pwn", "\x1b]52;", "\x1b[2J", "\x1b[31;7mPWN", "\x1bP1$r"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the terminal received %q raw", bad)
		}
	}
	if !strings.Contains(tm.Screen(), "PWNTITLE") {
		t.Errorf("the model's text was not shown at all (positive control):\n%s", tm.Screen())
	}
	tm.send("\x04")
	tm.wait(10 * time.Second)
}

// TestApprovalWrapsOnANarrowTerminal: on a 50-column terminal the options
// and the hint are wrapped, not cut at the screen's edge: the whole [s]
// label and the whole hint are on screen, and s still chooses it.
func TestApprovalWrapsOnANarrowTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	script := "echo narrow-terminal-check && echo 0123456789012345678901234567890123456789"
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": script}}}},
		step{text: "script finished"},
	)
	w.fakeModelConfig(model, "")
	tm := startPTYSize(t, w, 40, 50, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("run it\r")
	tm.expect("[n] Deny", 20*time.Second)
	// The hint, wrapped, is the prompt's last line; once it shows, so does
	// the rest.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) &&
		!strings.Contains(strings.Join(strings.Fields(tm.Screen()), " "), "Esc or Ctrl-C denies"); {
		time.Sleep(20 * time.Millisecond)
	}
	screen := tm.Screen()
	at := strings.LastIndex(screen, "[s] Allow bash(echo narrow-terminal-")
	if at < 0 {
		t.Fatalf("no [s] option:\n%s", screen)
	}
	// The label wraps inside its words; compared without white space it
	// must be whole.
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	want := squeeze("[s] Allow bash(echo narrow-terminal-check:*) and bash(echo 0123456789012345678901234567890123456789:*) for this session")
	if !strings.HasPrefix(squeeze(screen[at:]), want) {
		t.Errorf("the [s] option is cut on a 50-column terminal:\n%s", screen)
	}
	if !strings.Contains(strings.Join(strings.Fields(screen), " "), "Esc or Ctrl-C denies") {
		t.Errorf("the hint is cut on a 50-column terminal:\n%s", screen)
	}
	tm.send("s")
	tm.expect("script finished", 20*time.Second)
	tm.quit()
}
