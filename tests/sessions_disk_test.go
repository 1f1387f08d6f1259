package tests

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// dataDirHolds names every file under the data dir whose raw bytes hold
// value.
func dataDirHolds(t *testing.T, dir, value string) []string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte(value)) {
			found = append(found, path)
		}
		return nil
	})
	return found
}

// TestTypedSecretsNeverReachTheDataDir: a session in which the user typed
// vault values (sent redacted by hush run; sent as typed after choosing
// "a" in chat), a tool was granted a secret, the session was compacted and
// resumed — and no file under the data dir holds any canary's raw bytes
// (the vault file itself aside, which is where they are kept). Positive
// controls: the model did receive the value typed with "a" (and /compact,
// after it, summarized that turn without the value), and the granted
// secret reached the tool.
func TestTypedSecretsNeverReachTheDataDir(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	vaultCanary := w.canaries["vault"]
	model := newRoutedModel(t, func(prompt string, k int) (step, bool) {
		switch {
		case strings.HasPrefix(prompt, "first") && k == 0:
			return step{calls: []fakeCall{{"bash", leakArgs}}}, true
		case strings.HasPrefix(prompt, "Summarize"):
			return step{text: "summary: the user shared a token"}, true
		case strings.HasPrefix(prompt, "fourth"), strings.HasPrefix(prompt, "fifth"):
			return step{text: strings.Fields(prompt)[0] + "-done"}, true
		}
		return step{text: "noted"}, true
	})
	w.fakeModelConfig(model, allowGranted+"[compaction]\ncontext_window = 200\nkeep_turns = 1\n")

	out, err := runHush(w, "run", "first my token is "+vaultCanary)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !strings.Contains(out, "hush: the prompt contains the value of VAULT_CANARY; it was sent as [REDACTED:VAULT_CANARY] instead") {
		t.Errorf("hush run did not say it sent the prompt redacted:\n%s", out)
	}
	if strings.Contains(model.Received(), vaultCanary) {
		t.Error("hush run sent the typed value to the model")
	}
	if !strings.Contains(model.Received(), w.grantedSHA) {
		t.Fatal("positive control: the granted secret did not reach the tool")
	}
	for i, p := range []string{"second " + w.granted, "third " + strings.Repeat("words ", 200)} {
		if out, err := runHush(w, "run", "--continue", p); err != nil {
			t.Fatalf("run --continue %d: %v\n%s", i, err, out)
		}
	}
	if !strings.Contains(model.Received(), "Summarize this conversation") {
		t.Fatal("the session was never compacted: the test does not cover compaction")
	}

	// In chat, the user chooses to send it as typed.
	tm := startPTY(t, w, "chat", "--continue")
	tm.expect("› ", 20*time.Second)
	tm.send("fourth as typed " + vaultCanary + "\r")
	tm.expect("your message contains the value of VAULT_CANARY", 20*time.Second)
	tm.send("a")
	tm.expect("fourth-done", 20*time.Second)
	if !strings.Contains(model.lastBody(), vaultCanary) {
		t.Fatal("positive control: the value typed and sent as typed did not reach the model")
	}
	// /compact summarizes the turn typed with "a": its request holds the
	// prompt, redacted, never the value.
	tm.send("fifth prompt\r")
	tm.expect("fifth-done", 20*time.Second)
	sent := model.Requests()
	tm.send("/compact 1\r")
	tm.expect("Compacted: ", 20*time.Second)
	tm.quit()
	model.mu.Lock()
	summaries := []string{}
	for _, b := range model.bodies[sent:] {
		if strings.Contains(b, "Summarize this conversation") {
			summaries = append(summaries, b)
		}
	}
	model.mu.Unlock()
	if len(summaries) != 1 || !strings.Contains(summaries[0], "fourth as typed [REDACTED:VAULT_CANARY]") {
		t.Fatalf("/compact's summary request does not hold the turn typed with a, redacted (%d summary requests)", len(summaries))
	}
	if strings.Contains(summaries[0], vaultCanary) {
		t.Error("/compact sent the value typed with a again")
	}
	list, err := runHush(w, "sessions", "list")
	if err != nil || strings.Contains(list, vaultCanary) {
		t.Errorf("sessions list (%v):\n%s", err, list)
	}

	vaultFile := filepath.Join(w.dataDir, "vault.env")
	for label, v := range w.canaries {
		for _, f := range dataDirHolds(t, w.dataDir, v) {
			if f != vaultFile {
				t.Errorf("%s holds the %s canary", f, label)
			}
		}
	}
	for _, f := range dataDirHolds(t, w.dataDir, w.granted) {
		if f != vaultFile {
			t.Errorf("%s holds the granted secret", f)
		}
	}
}

// TestTwoContinuesAtOnce: while one `hush run --continue` is in its turn,
// a second says the session is open in another hush (with its pid) and
// changes nothing; --fork continues a copy at once; --wait waits for the
// first and then adds its turn. The next resume sends a history every
// provider accepts, with both prompts.
func TestTwoContinuesAtOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newRoutedModel(t, func(prompt string, k int) (step, bool) {
		if prompt == "slow-prompt" && k == 0 {
			return step{calls: []fakeCall{{"bash", map[string]any{"script": "sleep 3; echo slept"}}}}, true
		}
		return step{text: "answer to " + prompt}, true
	})
	w.fakeModelConfig(model, allowBash)
	if out, err := runHush(w, "run", "first-prompt"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	startSlow := func() (*exec.Cmd, *bytes.Buffer) {
		slow := exec.Command(hushBin, "run", "--continue", "slow-prompt")
		slow.Env, slow.Dir = w.env, w.project
		var slowOut bytes.Buffer
		slow.Stdout, slow.Stderr = &slowOut, &slowOut
		if err := slow.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond) // inside its tool call
		return slow, &slowOut
	}
	slow, slowOut := startSlow()
	out, code := runHushWithin(t, w, 20*time.Second, "run", "--continue", "busy-prompt")
	if code != 1 || !strings.Contains(out, "is open in another hush (pid ") || !strings.Contains(out, "--fork") {
		t.Errorf("the second --continue exited %d:\n%s", code, out)
	}
	out, code = runHushWithin(t, w, 30*time.Second, "run", "--continue", "--wait", "wait-prompt")
	if code != 0 {
		t.Errorf("--wait exited %d:\n%s", code, out)
	}
	if err := slow.Wait(); err != nil {
		t.Fatalf("the first --continue: %v\n%s", err, slowOut.String())
	}
	if !strings.Contains(model.lastBody(), "slow-prompt") || !strings.Contains(model.lastBody(), "slept") {
		t.Errorf("--wait did not see the turn the first added:\n%s", messagesOf(model.lastBody()))
	}
	if out, err := runHush(w, "run", "--continue", "last-prompt"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	body := model.lastBody()
	if p := historyProblems(t, body); len(p) > 0 {
		t.Errorf("the resumed history breaks the providers' rules: %v\n%s", p, messagesOf(body))
	}
	for _, want := range []string{"first-prompt", "slow-prompt", "wait-prompt", "last-prompt"} {
		if !strings.Contains(body, want) {
			t.Errorf("the resumed history lacks %s", want)
		}
	}
	if strings.Contains(body, "busy-prompt") {
		t.Errorf("the refused turn landed in the session:\n%s", messagesOf(body))
	}
	// --fork continues a copy while the session is busy.
	slow, slowOut = startSlow()
	if out, code := runHushWithin(t, w, 20*time.Second, "run", "--continue", "--fork", "fork-prompt"); code != 0 || !strings.Contains(out, "answer to fork-prompt") {
		t.Errorf("--fork exited %d:\n%s", code, out)
	}
	if body := model.lastBody(); !strings.Contains(body, "last-prompt") || historyProblems(t, body) != nil {
		t.Errorf("the fork did not carry the session's history:\n%s", messagesOf(body))
	}
	if err := slow.Wait(); err != nil {
		t.Fatalf("the slow run beside the fork: %v\n%s", err, slowOut.String())
	}
}

// TestFullDiskRunResumesCleanly: the transcripts live on a 64 KiB tmpfs
// that a tool's output fills; the run ends with error kind "storage" and
// exit 1, the transcript holds no entry after the failed one, and once
// there is space again --continue sends a history every provider accepts.
func TestFullDiskRunResumesCleanly(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root; run the suite as root (CI does) to cover a full disk")
	}
	w := newWorld(t)
	dir := filepath.Join(w.dataDir, "transcripts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k,mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	model := newRoutedModel(t, func(prompt string, k int) (step, bool) {
		if prompt == "fill-prompt" && k == 0 {
			big := func(c string) fakeCall {
				return fakeCall{"bash", map[string]any{"script": "head -c 30000 /dev/zero | tr '\\0' " + c}}
			}
			return step{calls: []fakeCall{big("w"), big("x"), big("y"), big("z"), {"bash", map[string]any{"script": "echo sm''all-output"}}}}, true
		}
		return step{text: "answer to " + prompt}, true
	})
	w.fakeModelConfig(model, allowBash)
	evs, stderr, code := runJSON(t, w, "run", "--json", "fill-prompt")
	errs := ofType(evs, "error")
	if code != 1 || len(errs) != 1 || errs[0].str("kind") != "storage" {
		t.Fatalf("a full disk: exit %d, errors %v\n%s", code, errs, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts %v", files)
	}
	raw, _ := os.ReadFile(files[0])
	if bytes.Contains(raw, []byte("small-output")) || bytes.Contains(raw, []byte("answer to fill-prompt")) {
		t.Errorf("entries after the failed one were written (%d bytes)", len(raw))
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT, "size=4m,mode=0700"); err != nil {
		t.Fatal(err)
	}
	if out, err := runHush(w, "run", "--continue", "after-prompt"); err != nil {
		t.Fatalf("--continue once there is space: %v\n%s", err, out)
	}
	body := model.lastBody()
	if p := historyProblems(t, body); len(p) > 0 {
		t.Errorf("the resumed history breaks the providers' rules: %v", p)
	}
	if !strings.Contains(body, "fill-prompt") || !strings.Contains(body, "not recorded: hush stopped before the result was saved") {
		t.Errorf("the cut turn was not restored repaired (%d bytes sent)", len(body))
	}
}

// TestSessionsListSkipsAFIFOAndADevice: a named pipe and a link to
// /dev/zero in transcripts/ are skipped with a one-line note each, in
// well under a second's work (the bound here is generous for a loaded
// machine; a hang is what it catches), and the real session is listed.
func TestSessionsListSkipsAFIFOAndADevice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{text: "ok"})
	w.fakeModelConfig(model, "")
	if out, err := runHush(w, "run", "real-prompt"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dir := filepath.Join(w.dataDir, "transcripts")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"sessions", "list"}, {"run", "--continue", "again"}} {
		out, code := runHushWithin(t, w, 15*time.Second, args...)
		if code != 0 {
			t.Errorf("%v exited %d:\n%s", args, code, out)
		}
		if args[0] == "sessions" {
			for _, want := range []string{"real-prompt", "pipe.jsonl: it is a named pipe", "zero.jsonl: it is a symlink to /dev/zero"} {
				if !strings.Contains(out, want) {
					t.Errorf("sessions list lacks %q:\n%s", want, out)
				}
			}
		}
	}
}

// TestTypedSecretChoicesInChat: a chat prompt holding a vault value asks
// first. Enter sends the redacted form: the raw request the model
// received holds the placeholder and not the value. e puts the prompt
// back in the editor and sends nothing; the prompt edited there is what
// the model gets. After either, no file under the data dir but the vault
// holds the value's raw bytes. (a, sending it as typed, and its positive
// control are TestTypedSecretsNeverReachTheDataDir's.)
func TestTypedSecretChoicesInChat(t *testing.T) {
	t.Parallel()
	for _, choice := range []string{"enter", "edit"} {
		t.Run(choice, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			canary := w.canaries["vault"]
			model := newRoutedModel(t, func(prompt string, k int) (step, bool) {
				return step{text: "answered: " + prompt + "."}, true
			})
			chatConfig(w, model)
			tm := startPTY(t, w, "chat")
			tm.expect("› ", 20*time.Second)
			tm.send("deploy with " + canary + "\r")
			tm.expect("your message contains the value of VAULT_CANARY — send [REDACTED:VAULT_CANARY] instead (Enter), send it as typed (a), or edit (e)", 20*time.Second)
			switch choice {
			case "enter":
				tm.send("\r")
				tm.expect("answered: deploy with [REDACTED:VAULT_CANARY].", 20*time.Second)
			case "edit":
				tm.send("e")
				time.Sleep(500 * time.Millisecond)
				if n := model.Requests(); n != 0 {
					t.Fatalf("e sent the prompt (%d requests)", n)
				}
				tm.send(strings.Repeat("\x7f", len(canary)) + "the staging key\r") // Backspace over the value
				tm.expect("answered: deploy with the staging key.", 20*time.Second)
			}
			tm.quit()
			body := model.Received()
			if model.Requests() != 1 {
				t.Errorf("%d requests, want 1", model.Requests())
			}
			if strings.Contains(body, canary) {
				t.Error("the model received the typed value")
			}
			want := map[string]string{"enter": "deploy with [REDACTED:VAULT_CANARY]", "edit": "deploy with the staging key"}[choice]
			if !strings.Contains(body, want) {
				t.Errorf("the request holds no %q:\n%s", want, messagesOf(model.lastBody()))
			}
			vaultFile := filepath.Join(w.dataDir, "vault.env")
			for label, v := range w.canaries {
				for _, f := range dataDirHolds(t, w.dataDir, v) {
					if f != vaultFile {
						t.Errorf("%s holds the %s canary", f, label)
					}
				}
			}
			if found := dataDirHolds(t, w.dataDir, want); len(found) == 0 {
				t.Errorf("no file of the data dir holds the prompt sent (%q): the scan read nothing", want)
			}
		})
	}
}

// TestHistoryProblemsFindsWhatProvidersRefuse is the positive control of
// the resume tests' check (historyProblems): each history a provider
// refuses is reported, and a valid one is not.
func TestHistoryProblemsFindsWhatProvidersRefuse(t *testing.T) {
	t.Parallel()
	const call = `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]}`
	for _, c := range []struct {
		name, messages string
		bad            bool
	}{
		{"valid", `{"role":"user","content":"a"},` + call + `,{"role":"tool","tool_call_id":"c1","content":"out"},{"role":"assistant","content":"done"},{"role":"user","content":"b"}`, false},
		{"unanswered call", `{"role":"user","content":"a"},` + call + `,{"role":"user","content":"b"}`, true},
		{"result without a call", `{"role":"user","content":"a"},{"role":"tool","tool_call_id":"c9","content":"out"}`, true},
		{"result of another call", `{"role":"user","content":"a"},` + call + `,{"role":"tool","tool_call_id":"c2","content":"out"}`, true},
		{"two prompts in a row", `{"role":"user","content":"a"},{"role":"user","content":"b"}`, true},
	} {
		p := historyProblems(t, `{"model":"m","messages":[`+c.messages+`]}`)
		if (len(p) > 0) != c.bad {
			t.Errorf("%s: problems %q", c.name, p)
		}
	}
}
