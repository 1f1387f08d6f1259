package tests

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// checkLeakTurn asserts what every leak test shares: no canary on the screen,
// in what the model received, in the transcript or the audit log — as
// printed, and in the raw forms leakScript prints that the redactor does not
// know (reversed, hex), with no secret's name in the child's environment;
// and the positive control arrived exactly, reversed in raw bytes and
// redacted where printed plainly.
func checkLeakTurn(t *testing.T, w *world, screen, received string) {
	t.Helper()
	w.assertNoCanary("the screen", screen)
	w.assertNoCanary("the requests the model received", received)
	w.assertNoCanary("the transcript", w.transcripts())
	w.assertNoCanary("the audit log", w.audit())
	w.assertNoRawCanary("the requests the model received", received)
	w.assertNoRawCanary("the transcript", w.transcripts())
	for _, name := range leakNames {
		if strings.Contains(received, reverse(name+"=")) {
			t.Errorf("the tool's environment holds %s (env | rev shows its name)", name)
		}
	}
	if !strings.Contains(received, w.grantedSHA) {
		t.Errorf("positive control: the granted secret did not reach the child exactly (no sha256 %s in the tool result)", w.grantedSHA)
	}
	if !strings.Contains(received, reverse(w.granted)) {
		t.Errorf("positive control: the granted secret, reversed, is not in the tool result: the raw channel shows nothing")
	}
	if !strings.Contains(received, "positive=[REDACTED:GRANTED]") {
		t.Errorf("positive control: the granted secret did not come back redacted")
	}
	// The env output really was there (the channel works), and the .env and
	// /proc reads ran; the sandbox shows the tool an empty .env.
	for _, want := range []string{reverse("PATH="), reverse("LANG=C.UTF-8"), "---"} {
		if !strings.Contains(received, want) {
			t.Errorf("tool result lacks %q; the turn did not run as scripted", want)
		}
	}
	if !dotEnvReadEmpty(received) {
		t.Errorf("the sandboxed tool's cat .env did not read an empty file; the turn did not run as scripted")
	}
	if strings.Count(w.transcripts(), `"role":"tool"`) == 0 {
		t.Error("transcript has no tool result")
	}
	if !strings.Contains(w.audit(), `"gate":"vault.read:GRANTED"`) {
		t.Errorf("audit log lacks the vault read:\n%s", w.audit())
	}
}

// leakNames are the names newWorld plants a canary under, in the vault,
// the project's .env and hush's environment: none may be in a tool's
// environment (GRANTED arrives as POS, under the name the call gave it).
var leakNames = []string{"VAULT_CANARY", "GRANTED", "DOTENV_CANARY", "OPENAI_API_KEY", "MY_SERVICE_TOKEN", "DATABASE_URL", "INNOCENT_SETTING"}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

func TestChatTurnRunningEnvLeaksNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t,
		step{text: "Let me look at the environment.", calls: []fakeCall{{"bash", leakArgs}}},
		step{text: "All done: nothing secret was visible."},
	)
	allowBashConfig(w, model)
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("check the environment please\r")
	// No rule covers vault.read:GRANTED: hush asks, and we allow once.
	tm.expect("bash wants the secret GRANTED", 20*time.Second)
	tm.send("\r")
	tm.expect("All done: nothing secret was visible.", 30*time.Second)
	tm.expect("› ", 10*time.Second)
	tm.send("\x04") // Ctrl-D exits
	if code := tm.wait(10 * time.Second); code != 0 {
		t.Fatalf("exit code %d; screen:\n%s", code, tm.Screen())
	}
	checkLeakTurn(t, w, tm.Raw(), model.Received())
	if !strings.Contains(tm.Screen(), "● bash env | rev; echo ---") {
		t.Errorf("the tool call was not shown with its arguments:\n%s", tm.Screen())
	}
	if !strings.Contains(w.audit(), `"gate":"vault.read:GRANTED","decision":"allow","source":"prompt"`) {
		t.Errorf("audit does not record the prompt's allow:\n%s", w.audit())
	}
}

func TestRunTurnRunningEnvLeaksNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t,
		step{text: "Checking.", calls: []fakeCall{{"bash", leakArgs}}},
		step{text: "Finished."},
	)
	w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[[rules]]
gate = "vault.read:GRANTED"
subject = "bash"
decision = "allow"
`, model.URL()))
	tm := startPTY(t, w, "run", "--yes", "check the environment")
	if code := tm.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit code %d; screen:\n%s", code, tm.Screen())
	}
	tm.expect("Finished.", time.Second)
	checkLeakTurn(t, w, tm.Raw(), model.Received())
}

func TestRunDeniesSecretWithoutRule(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": "touch ran", "env": map[string]string{"X": "${VAULT_CANARY}"}}}}},
		step{text: "ok"},
	)
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n", model.URL()))
	evs, stderr, code := runJSON(t, w, "run", "--yes", "--json", "go")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (the turn ended with a denial); stderr %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(w.project, "ran")); err == nil {
		t.Fatal("the script ran although its secret was denied")
	}
	var sawDenial bool
	for _, ev := range ofType(evs, "tool.finished") {
		r := strings.Join(strings.Fields(ev.str("result")), " ") // the rule, on one line or several
		if strings.Contains(r, `[[rules]] gate = "vault.read:VAULT_CANARY" subject = "bash" decision = "allow"`) {
			sawDenial = true
		}
	}
	if !sawDenial {
		t.Fatalf("no denial naming the rule to add:\n%v", evs)
	}
	if p := ofType(evs, "permission"); len(p) != 2 || p[1].str("gate") != "vault.read:VAULT_CANARY" || p[1].str("decision") != "deny" {
		t.Errorf("permission events %v", p)
	}
	if !strings.Contains(w.audit(), `"gate":"vault.read:VAULT_CANARY","decision":"deny","source":"default"`) {
		t.Errorf("audit lacks the denial:\n%s", w.audit())
	}
}

func TestReplayTurnLeaksNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	argsJSON, _ := json.Marshal(leakArgs)
	replay := fmt.Sprintf(`{"steps":[{"text":"Checking.","tool_calls":[{"name":"bash","args":%s}]},{"text":"Replay finished cleanly."}]}`, argsJSON)
	w.write(filepath.Join(w.project, "turn.json"), replay)
	w.config("[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"bash\"\ndecision = \"allow\"\n")
	tm := startPTY(t, w, "run", "--provider", "replay", "--replay", "turn.json", "--yes", "go")
	if code := tm.wait(60 * time.Second); code != 0 {
		t.Fatalf("exit code %d; screen:\n%s", code, tm.Screen())
	}
	tm.expect("Replay finished cleanly.", time.Second)
	// The replay has no model server; what the model "received" is the transcript.
	checkLeakTurn(t, w, tm.Raw(), w.transcripts())
}

// TestEmbeddedReplayRuns: the embedded replay prints a tool's environment,
// the project's .env and hush's own environ. None of the names newWorld
// plants a canary under may be in any of them: a name is never redacted, so
// this reads what the tool really got; the allowlisted LANG and TERM are
// the positive control.
func TestEmbeddedReplayRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	out, err := runHush(w, "run", "--provider", "replay", "--yes", "check what a tool can see")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	w.assertNoCanary("the embedded replay's output", out)
	if !strings.Contains(out, "PATH=") || !dotEnvReadEmpty(out) {
		t.Fatalf("the embedded replay did not show env and an empty .env (the sandbox hides it):\n%s", out)
	}
	for _, name := range leakNames {
		if regexp.MustCompile(`(?m)^\s*(│ )?` + name + `=`).MatchString(out) {
			t.Errorf("a tool's environment or hush's environ holds %s:\n%s", name, out)
		}
	}
	for _, want := range []string{"LANG=C.UTF-8", "TERM=xterm-256color"} {
		if !regexp.MustCompile(`(?m)^\s*(│ )?` + regexp.QuoteMeta(want) + `$`).MatchString(out) {
			t.Errorf("positive control: the tool's environment lacks %s:\n%s", want, out)
		}
	}
}

// dotEnvReadEmpty reports whether the leak script's `echo ---; cat .env;
// echo ---` printed nothing between the markers, in plain text, the
// screen's tool box, or JSON: the sandbox binds an empty file over .env.
func dotEnvReadEmpty(out string) bool {
	// Under the .env layer (a background process, an MCP server) the file
	// does not exist at all: xxd says so, and reads nothing.
	out = strings.NewReplacer("xxd: .env: No such file or directory\n", "", `xxd: .env: No such file or directory\n`, "",
		"│ xxd: .env: No such file or directory\r\n", "", "│ xxd: .env: No such file or directory\n", "").Replace(out)
	return strings.Contains(out, "---\n---") || strings.Contains(out, `---\n---`) ||
		regexp.MustCompile(`(?m)^\s*│ ---\r?\n\s*│ ---`).MatchString(out)
}

// runHush runs the binary without a terminal and returns stdout+stderr.
func runHush(w *world, args ...string) (string, error) {
	cmd := exec.Command(hushBin, args...)
	cmd.Env = w.env
	cmd.Dir = w.project
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestGrantedSecretInBase64NeverReachesTheModel: a tool granted a secret
// prints it base64-encoded (standard, URL-safe, with and without padding);
// the raw request bodies the model server received hold
// none of those forms, and the hash of the value proves the tool had it.
func TestGrantedSecretInBase64NeverReachesTheModel(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// A value whose encodings use '+', '/' and padding, so each form differs.
	w.granted = "canary-b64>?~" + w.granted[len("canary-granted-"):]
	w.grantedSHA = sha(w.granted)
	w.write(filepath.Join(w.dataDir, "vault.env"), fmt.Sprintf("VAULT_CANARY=%q\nGRANTED=%q\n", w.canaries["vault"], w.granted))
	script := `printf %s "$POS" | base64 -w0; echo; printf %s "$POS" | base64 -w0 | tr '+/' '-_' | tr -d =; echo; ` +
		`printf %s "$POS" | sha256sum`
	model := newFakeModel(t,
		step{text: "Encoding.", calls: []fakeCall{{"bash", map[string]any{"script": script, "env": map[string]string{"POS": "${GRANTED}"}}}}},
		step{text: "Finished."},
	)
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n\n"+
		"[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"bash\"\ndecision = \"allow\"\n", model.URL()))
	out, err := runHush(w, "run", "--yes", "encode it")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	received := model.Received()
	v := []byte(w.granted)
	for form, enc := range map[string]string{
		"the value":              w.granted,
		"base64":                 base64.StdEncoding.EncodeToString(v),
		"base64 without padding": base64.RawStdEncoding.EncodeToString(v),
		"URL-safe base64":        base64.RawURLEncoding.EncodeToString(v),
	} {
		if strings.Contains(received, enc) || strings.Contains(out, enc) {
			t.Errorf("the model (or the screen) received the granted secret as %s: %s", form, enc)
		}
	}
	if !strings.Contains(received, w.grantedSHA) {
		t.Errorf("positive control: the tool did not get the granted secret (no sha256 %s in what the model received)", w.grantedSHA)
	}
	if n := strings.Count(received, "[REDACTED:GRANTED]"); n < 2 {
		t.Errorf("the encoded forms were not replaced by [REDACTED:GRANTED] (%d found):\n%s", n, received)
	}
}
