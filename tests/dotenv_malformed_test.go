package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMalformedRootDotEnv: a project .env with a line that does not parse
// no longer blocks the commands that manage the vault, MCP servers and the
// environment: each works and says, in one sentence, which file and line;
// the file's readable values are still secrets (an environment variable
// holding one is kept from a tool); `vault import` of the file names the
// line; a turn, which runs tools, still refuses to start and sends the
// model nothing.
func TestMalformedRootDotEnv(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	legacy := canary("malformedlegacy")
	w.write(filepath.Join(w.project, ".env"), "LEGACY_TOKEN="+legacy+"\nbad line "+canary("badline")+"\n")
	w.setEnv("COPY_OF_IT", legacy)
	dotenv := filepath.Join(w.project, ".env")
	warning := "hush: warning: " + dotenv + " line 2: malformed .env file (the line is not shown, it may hold a secret); hush uses the file's other values, and starts no chat or run until that line is fixed\n"
	check := func(what, out string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v\n%s", what, err, out)
		}
		if !strings.Contains(out, warning) {
			t.Errorf("%s: no warning naming the file and line:\n%s", what, out)
		}
		w.assertNoCanary(what, out)
		if strings.Contains(out, legacy) || strings.Contains(out, "badline") {
			t.Errorf("%s shows a value of the .env:\n%s", what, out)
		}
	}
	out, err := runHushStdin(w, "value-of-k\n", "vault", "set", "NEW_KEY")
	check("vault set", out, err)
	out, err = runHush(w, "vault", "list")
	check("vault list", out, err)
	if !strings.Contains(out, "LEGACY_TOKEN") || !strings.Contains(out, "NEW_KEY") {
		t.Errorf("vault list lacks the .env's readable value or the new key:\n%s", out)
	}
	out, err = runHush(w, "vault", "rm", "NEW_KEY")
	check("vault rm", out, err)
	out, err = runHush(w, "mcp", "list")
	check("mcp list", out, err)
	w.config("[tools.bash]\ninherit = \"all\"\ninclude = [\"*\"]\n")
	out, err = runHush(w, "env", "--tool", "bash", "--dropped")
	check("env", out, err)
	if !strings.Contains(out, "#   COPY_OF_IT: value equals the value of a secret\n") {
		t.Errorf("hush env: a variable holding the .env's value is not kept from the tool:\n%s", out)
	}

	out, err = runHush(w, "vault", "import", dotenv)
	if err == nil || !strings.Contains(out, "hush: "+dotenv+" line 2: malformed .env file") {
		t.Errorf("vault import of the malformed file: %v\n%s", err, out)
	}

	model := newFakeModel(t, step{text: "done"})
	w.fakeModelConfig(model, "")
	out, code := runHushWithin(t, w, 60*time.Second, "run", "hello")
	if code == 0 || !strings.Contains(out, dotenv+" line 2: malformed .env file") || !strings.Contains(out, "fix that line") {
		t.Errorf("run with a malformed .env: exit %d\n%s", code, out)
	}
	if model.Requests() != 0 {
		t.Errorf("run sent the model %d requests", model.Requests())
	}
}

// TestMalformedSubDotEnvValuesAreScrubbed: a .env below the project root
// with a line that does not parse is no longer left out: what parses of
// it is a secret, so a tool that prints one of its values (here from a
// copy in another file) hands the model and the transcript
// [REDACTED:NAME], never the value; one warning names the file and the
// line, and the run is not blocked.
func TestMalformedSubDotEnvValuesAreScrubbed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := canary("subdotenvgood")
	sub := filepath.Join(w.project, "sub", ".env")
	if err := os.MkdirAll(filepath.Dir(sub), 0o700); err != nil {
		t.Fatal(err)
	}
	w.write(sub, "SUB_TOKEN="+value+"\nbad line "+canary("subbadline")+"\n")
	w.write(filepath.Join(w.project, "notes.txt"), "token: "+value+"\n")
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": "cat notes.txt; echo tool-ran"}}}},
		step{text: "done"},
	)
	allowBashConfig(w, model)
	out, code := runHushWithin(t, w, 90*time.Second, "run", "read the notes")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	warning := "hush: warning: " + sub + " line 2: malformed .env file (the line is not shown, it may hold a secret); hush uses the file's other values\n"
	if !strings.Contains(out, warning) {
		t.Errorf("no warning naming the file and line:\n%s", out)
	}
	received := model.Received()
	transcript := w.transcripts()
	// Positive control: the tool ran and its output reached the model.
	if !strings.Contains(received, "tool-ran") {
		t.Fatalf("the tool's output did not reach the model:\n%s", received)
	}
	for where, raw := range map[string]string{"the requests the model received": received, "the transcript": transcript} {
		if !strings.Contains(raw, "token: [REDACTED:SUB_TOKEN]") {
			t.Errorf("%s lacks token: [REDACTED:SUB_TOKEN]:\n%s", where, raw)
		}
		w.assertNoCanary(where, raw)
	}
	w.assertNoCanary("the output", out)
}
