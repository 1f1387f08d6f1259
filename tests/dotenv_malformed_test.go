package tests

import (
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
