package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// userPrompts is every user message the model was sent, in order, per
// request (the last one is the prompt of that request).
func (f *fakeModel) userPrompts() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]string
	for _, b := range f.bodies {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal([]byte(b), &req)
		var users []string
		for _, m := range req.Messages {
			if m.Role == "user" {
				users = append(users, fmt.Sprint(m.Content))
			}
		}
		out = append(out, users)
	}
	return out
}

func chatConfig(w *world, model *fakeModel) {
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n", model.URL()))
}

// TestChatHistoryRecallWithUp: a prompt typed in one chat is recalled with
// Up in the next and sent again; the history file is 0600 and holds a
// secret typed into a prompt only redacted (checked on its raw bytes).
func TestChatHistoryRecallWithUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "first answer"}, step{text: "second answer"})
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	first := "remember this: " + w.canaries["vault"]
	tm.send(first + "\r")
	// The prompt holds a vault value: hush asks first; "a" sends it as
	// typed, and the history must still keep only the redacted form.
	tm.expect("your message contains the value of VAULT_CANARY", 20*time.Second)
	tm.send("a")
	tm.expect("first answer", 20*time.Second)
	tm.quit()
	path := filepath.Join(w.dataDir, "history.jsonl")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %o, want 600", st.Mode().Perm())
	}
	raw := readFile(t, path)
	if strings.Contains(raw, w.canaries["vault"]) || !strings.Contains(raw, "remember this: [REDACTED:VAULT_CANARY]") {
		t.Errorf("history file holds %q", raw)
	}

	tm2 := startPTY(t, w, "chat")
	tm2.expect("› ", 20*time.Second)
	tm2.send("\x1b[A") // Up
	tm2.expect("› remember this: [REDACTED:VAULT_CANARY]", 10*time.Second)
	tm2.send("\r")
	tm2.expect("first answer", 20*time.Second) // a new conversation: step 0 again
	tm2.send("\x04")
	if code := tm2.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm2.Screen())
	}
	prompts := model.userPrompts()
	if len(prompts) != 2 || len(prompts[1]) != 1 || prompts[1][0] != "remember this: [REDACTED:VAULT_CANARY]" {
		t.Errorf("requests' user messages: %q", prompts)
	}
}

// TestChatMultiLinePasteIsOnePrompt: a bracketed paste of two lines stays
// in the editor as one prompt until Enter, and Alt-Enter adds a line.
func TestChatMultiLinePasteIsOnePrompt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "got both lines"})
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("\x1b[200~line one\rline two\x1b[201~")
	tm.send("\x1b\r") // Alt-Enter: a newline, not a send
	tm.send("line three")
	time.Sleep(300 * time.Millisecond)
	if n := model.Requests(); n != 0 {
		t.Fatalf("the paste was sent before Enter (%d requests)", n)
	}
	tm.send("\r")
	tm.expect("got both lines", 20*time.Second)
	tm.quit()
	prompts := model.userPrompts()
	if len(prompts) != 1 || len(prompts[0]) != 1 || prompts[0][0] != "line one\nline two\nline three" {
		t.Errorf("the model was sent %q, want one prompt of three lines", prompts)
	}
}

// TestSlashCommandsAreLocal: /help, an unknown /x, /usage and a
// Tab-completed /tools are answered by hush; the model gets no request.
func TestSlashCommandsAreLocal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "should not be asked"})
	chatConfig(w, model)
	// An AGENTS.md over the size cap: /tools names it and says it was cut.
	w.write(filepath.Join(w.project, "AGENTS.md"), strings.Repeat("Keep the build green.\n", 2000))
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("/help\r")
	tm.expect("Commands (answered by hush, never sent to the model)", 10*time.Second)
	tm.expect("/model [NAME]", time.Second)
	tm.send("/frobnicate\r")
	tm.expect("unknown command /frobnicate", 10*time.Second)
	tm.send("/to\t\r") // Tab completes /tools
	tm.expect("no secrets configured", 10*time.Second)
	tm.expect("project instructions: "+filepath.Join(w.project, "AGENTS.md")+" (", 10*time.Second)
	tm.expect("bytes cut by the 32 KiB size cap)", 10*time.Second)
	tm.send("/usage\r")
	tm.expect("(the server has reported no usage)", 10*time.Second)
	tm.send("/exit\r")
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
	if n := model.Requests(); n != 0 {
		t.Errorf("slash commands reached the model: %d requests:\n%s", n, model.Received())
	}
}

// TestChatPathFirstMessageGoesToTheModel: a message that starts with a
// path ("/etc/hosts has a typo") is a prompt, not an unknown slash command;
// "//x" sends "/x".
func TestChatPathFirstMessageGoesToTheModel(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "first answer"}, step{text: "second answer"})
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("/etc/hosts has a typo\r")
	tm.expect("first answer", 20*time.Second)
	tm.send("//help me\r")
	tm.expect("second answer", 20*time.Second)
	tm.quit()
	if strings.Contains(tm.Screen(), "unknown command") {
		t.Errorf("a path was taken for a command:\n%s", tm.Screen())
	}
	prompts := model.userPrompts()
	if len(prompts) != 2 || strings.Join(prompts[1], "|") != "/etc/hosts has a typo|/help me" {
		t.Errorf("the model was sent %q", prompts)
	}
}

// TestChatWrapsLongLinesItself: on a narrow terminal a tool call and an
// output line wider than it are printed as rows no wider than the
// terminal. Left to the terminal's own wrap, the last row kept the old
// status line's text after it (bubbletea clears the rest of a row only
// for a line narrower than the terminal).
func TestChatWrapsLongLinesItself(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	long := strings.Repeat("a", 150)
	model := newFakeModel(t, step{calls: []fakeCall{{"bash", map[string]any{"script": "echo " + long + "; echo done"}}}},
		step{text: "finished"})
	w.fakeModelConfig(model, "[[rules]]\ngate = \"tool.run:bash\"\nsubject = \"bash\"\ndecision = \"allow\"\n")
	const cols = 60
	tm := startPTYSize(t, w, 30, cols, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("go\r")
	tm.expect("finished", 20*time.Second)
	tm.quit()
	calls, outputs := 0, 0
	// Runs of text the terminal draws in one go: a line break, a carriage
	// return or a cursor move ends one.
	moves := regexp.MustCompile(`\x1b\[[0-9;?]*[A-HJKSTf]|\r|\n`)
	for _, row := range moves.Split(tm.Raw(), -1) {
		row = ansi.ReplaceAllString(row, "")
		isCall, isOutput := strings.Contains(row, "● bash"), strings.Contains(row, "│ aaaa")
		if isCall || isOutput {
			if n := utf8.RuneCountInString(row); n > cols {
				t.Errorf("a row of %d columns on a %d-column terminal: %q", n, cols, row)
			}
		}
		if isCall {
			calls++
		}
		if isOutput {
			outputs++
		}
	}
	// 150 a's behind the 4-column gutter take three rows, each with the
	// gutter.
	if calls < 1 || outputs < 3 {
		t.Errorf("want the call and its output line on three rows behind the gutter, saw %d and %d:\n%s", calls, outputs, tm.Screen())
	}
}

// sgrBefore matches text drawn right after a colour or weight sequence.
func sgrBefore(text string) *regexp.Regexp {
	return regexp.MustCompile(`\x1b\[[0-9;]*m(\x1b\[[0-9;]*m)*` + regexp.QuoteMeta(text))
}

// TestChatRendersMarkdown: a heading and a code block arrive styled, with
// neither "##" nor the fence on screen; the status line shows the server's
// token counts for the turn and the session.
func TestChatRendersMarkdown(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	answer := "## Plan\n\nRun this **now**:\n\n```sh\necho hello-from-code\n```\n\nThat is all.\n"
	model := newFakeModel(t,
		step{text: answer, usage: &[2]int{1234, 56}},
		step{text: "again", usage: &[2]int{1300, 7}},
	)
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("plan it\r")
	tm.expect("That is all.", 20*time.Second)
	tm.expect("turn 1234 in / 56 out · session 1290 tokens", 10*time.Second)
	tm.send("more\r")
	tm.expect("again", 20*time.Second)
	tm.expect("turn 1300 in / 7 out · session 2597 tokens", 10*time.Second)
	tm.quit()
	screen, raw := tm.Screen(), tm.Raw()
	for _, bad := range []string{"## Plan", "```", "**now**"} {
		if strings.Contains(screen, bad) {
			t.Errorf("the screen shows %q raw:\n%s", bad, screen)
		}
	}
	for _, styled := range []string{"Plan", "echo", "now"} {
		if !sgrBefore(styled).MatchString(raw) {
			t.Errorf("%q was not drawn styled", styled)
		}
	}
	if !strings.Contains(screen, "hello-from-code") {
		t.Errorf("the code block's text is missing:\n%s", screen)
	}
}

// TestChatNoColor: NO_COLOR keeps the rendering but sends no colour.
func TestChatNoColor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.setEnv("NO_COLOR", "1")
	model := newFakeModel(t, step{text: "## Plan\n\nplain *words* and `code`\n\n```go\nfunc f() {}\n```\n"})
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("go\r")
	tm.expect("func f() {}", 20*time.Second)
	tm.send("\x04")
	tm.wait(10 * time.Second)
	// A colour parameter: 30–37, 38 (extended), 40–47, 48, 90–97, 100–107.
	colour := regexp.MustCompile(`\x1b\[([0-9]*;)*(3[0-8]|4[0-8]|9[0-7]|10[0-7])(;[0-9]*)*m`)
	if m := colour.FindString(tm.Raw()); m != "" {
		t.Errorf("colour sequence %q with NO_COLOR", m)
	}
	if strings.Contains(tm.Screen(), "## Plan") || !sgrBefore("Plan").MatchString(tm.Raw()) {
		t.Errorf("without colour the heading is not rendered:\n%s", tm.Screen())
	}
}

// TestCtrlCTwiceAtIdleExits: one Ctrl-C at an empty prompt says how to
// leave; a second within two seconds leaves.
func TestCtrlCTwiceAtIdleExits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t)
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("\x03")
	tm.expect("press Ctrl-C again within 2 s to exit", 10*time.Second)
	tm.send("\x03")
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
}

// TestCtrlCAtPermissionPromptDenies: Ctrl-C at the secret prompt denies
// the read and says so; the tool gets nothing and the turn ends.
func TestCtrlCAtPermissionPromptDenies(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": `echo "got=$POS"`, "env": map[string]string{"POS": "${GRANTED}"}}}}},
		step{text: "the turn went on"},
	)
	allowBashConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("need the secret\r")
	tm.expect("bash wants the secret GRANTED", 20*time.Second)
	tm.send("\x03")
	tm.expect("(you pressed Ctrl-C)", 10*time.Second)
	// Ctrl-C at an approval ends the turn: no further model request.
	tm.expect("turn stopped at the approval", 20*time.Second)
	time.Sleep(time.Second)
	if n := model.Requests(); n != 1 {
		t.Errorf("the model got %d requests after Ctrl-C at the approval, want 1", n)
	}
	tm.send("\x15") // the prompt is back in the editor; Ctrl-U empties it
	tm.quit()
	if strings.Contains(model.Received(), w.grantedSHA) || strings.Contains(model.Received(), "got=[REDACTED:GRANTED]") {
		t.Errorf("the tool got the secret after Ctrl-C:\n%s", model.Received())
	}
	if !strings.Contains(w.audit(), `"gate":"vault.read:GRANTED","decision":"deny","source":"prompt"`) {
		t.Errorf("the audit log does not record the prompt's denial:\n%s", w.audit())
	}
	w.assertNoCanary("the screen", tm.Raw())
}

// TestCtrlCWhileTheModelThinksNamesNoTool: Ctrl-C before any tool ran says
// the turn was cancelled, not that a tool's processes were stopped; the
// chat goes on.
func TestCtrlCWhileTheModelThinksNamesNoTool(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{hang: true}, step{text: "second answer"})
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("think forever\r")
	tm.expect("thinking", 20*time.Second)
	tm.send("\x03")
	tm.expect("(turn cancelled)", 10*time.Second)
	if strings.Contains(tm.Screen(), "processes were stopped") {
		t.Errorf("a cancelled turn with no tool speaks of stopped processes:\n%s", tm.Screen())
	}
	tm.quit()
}

// TestServerThatNeverAnswersTimesOut: a model server that takes the
// request and sends nothing ends the turn after first_byte_timeout with one
// sentence, in chat (which goes on) and in run (exit 1).
func TestServerThatNeverAnswersTimesOut(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{hang: true})
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\nfirst_byte_timeout = \"1s\"\n", model.URL()))
	const sentence = "accepted the request but sent nothing for 1s; it may be stuck or overloaded (model.first_byte_timeout in config.toml sets how long to wait)"
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("hello?\r")
	tm.expect(sentence, 20*time.Second)
	tm.send("/usage\r") // the chat goes on
	tm.expect("this session: 0 input", 10*time.Second)
	tm.quit()
	out, err := runHush(w, "run", "hello?")
	if err == nil || !strings.Contains(out, sentence) || strings.Contains(out, "goroutine") {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if n := model.Requests(); n != 2 {
		t.Errorf("the server saw %d requests, want 2 (a timeout is not retried)", n)
	}
}

// TestSlashModelSwitches: /model NAME is answered locally and the next
// turn asks for that model.
func TestSlashModelSwitches(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "answered by the new model"})
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("/model other-model\r")
	tm.expect("model: other-model (from the next turn)", 10*time.Second)
	if n := model.Requests(); n != 0 {
		t.Fatalf("/model reached the model (%d requests)", n)
	}
	tm.send("hi\r")
	tm.expect("answered by the new model", 20*time.Second)
	tm.expect("other-model · ", 10*time.Second) // the status line
	tm.send("\x04")
	tm.wait(10 * time.Second)
	if !strings.Contains(model.Received(), `"model":"other-model"`) {
		t.Errorf("the turn did not use the new model:\n%s", model.Received())
	}
}

// TestChatLineEditorKeys: Ctrl-A/E, Ctrl-W, Ctrl-K, Ctrl-U and a word jump
// edit the prompt before it is sent.
func TestChatLineEditorKeys(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "edited"})
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	for _, k := range []string{
		"throwaway line", "\x15", // Ctrl-U: gone
		"world", "\x01", "hello ", // Ctrl-A, then insert at the start
		"\x05", " extra words", "\x17", "\x17", // Ctrl-E, then Ctrl-W twice
		"\x01", "\x1bf", "\x0b", // Ctrl-A, Alt-F to the end of "hello", Ctrl-K
		" there", "\x05", "!", // type, Ctrl-E, type
	} {
		tm.send(k)
		time.Sleep(40 * time.Millisecond)
	}
	tm.send("\r")
	tm.expect("edited", 20*time.Second)
	tm.send("\x04")
	tm.wait(10 * time.Second)
	if p := model.userPrompts(); len(p) != 1 || p[0][0] != "hello there!" {
		t.Errorf("the model was sent %q, want %q", p, "hello there!")
	}
}

// TestChatShiftEnterAddsALine: Shift-Enter as terminals report it with
// the kitty protocol or xterm's modifyOtherKeys adds a line.
func TestChatShiftEnterAddsALine(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "two lines"})
	chatConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("one")
	tm.send("\x1b[13;2u")
	tm.send("two")
	tm.send("\x1b[27;2;13~")
	tm.send("three")
	time.Sleep(200 * time.Millisecond)
	tm.send("\r")
	tm.expect("two lines", 20*time.Second)
	tm.send("\x04")
	tm.wait(10 * time.Second)
	if p := model.userPrompts(); len(p) != 1 || p[0][0] != "one\ntwo\nthree" {
		t.Errorf("the model was sent %q", p)
	}
}

// TestPlainCtrlCTwiceAtIdleExits: --plain matches the full UI: one Ctrl-C
// at the prompt says how to leave, a second within two seconds leaves; a
// line typed in between starts over.
func TestPlainCtrlCTwiceAtIdleExits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t)
	chatConfig(w, model)
	tm := startPTY(t, w, "chat", "--plain")
	tm.expect("› ", 20*time.Second)
	tm.send("\x03")
	tm.expect("press Ctrl-C again within 2 s to exit", 10*time.Second)
	tm.send("\r")
	// The line is read apart from the signal: the next prompt (the third
	// "› ", after the first and the hint's) is printed once the line has
	// reset the Ctrl-C; a Ctrl-C sent before that raced the reset.
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(tm.Screen(), "› ") < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := strings.Count(tm.Screen(), "› "); n != 3 {
		t.Fatalf("after the hint and a line, %d prompts, want 3:\n%s", n, tm.Screen())
	}
	tm.send("\x03")
	deadline = time.Now().Add(10 * time.Second)
	for strings.Count(tm.Screen(), "press Ctrl-C again") < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := strings.Count(tm.Screen(), "press Ctrl-C again"); n != 2 {
		t.Fatalf("a Ctrl-C after a line exited or was not answered with the hint (%d hints)\n%s", n, tm.Screen())
	}
	tm.send("\x03")
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, tm.Screen())
	}
}

// TestChatEnterDuringATurnQueues: a message sent with Enter while a turn
// runs is not lost or silently held: the status says it is queued, and it
// goes to the model as the next turn once the running one ends.
func TestChatEnterDuringATurnQueues(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": "sleep 2; echo slept"}}}},
		step{text: "first turn done"},
		step{text: "queued message answered"},
	)
	allowBashConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("take your time\r")
	tm.expect("sleep 2", 20*time.Second)
	tm.send("and then this\r")
	tm.expect("your message is queued", 10*time.Second)
	tm.expect("queued message answered", 30*time.Second)
	prompts := model.userPrompts()
	if n := len(prompts); n != 3 || prompts[n-1][len(prompts[n-1])-1] != "and then this" {
		t.Errorf("the queued message was not the next turn's prompt: %q", prompts)
	}
	if i, j := strings.Index(tm.Screen(), "first turn done"), strings.LastIndex(tm.Screen(), "› and then this"); i < 0 || j < i {
		t.Errorf("the queued message was not sent after the first turn ended:\n%s", tm.Screen())
	}
	tm.quit()
}

// TestChatNamesTheReplayedModel: with the replay provider the header and
// the status line name what is replayed, as `hush run --json` does, not
// an empty model name.
func TestChatNamesTheReplayedModel(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tm := startPTY(t, w, "chat", "--provider", "replay")
	tm.expect("› ", 20*time.Second)
	tm.expect("embedded leak check · ", 10*time.Second)
	tm.quit()
	if !strings.Contains(tm.Screen(), "hush chat — embedded leak check (replay)") {
		t.Errorf("the header does not name the replay:\n%s", tm.Screen())
	}
}
