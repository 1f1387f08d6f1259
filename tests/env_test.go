package tests

import (
	"strings"
	"testing"
)

// TestEnvCommandShowsNoSecret is the security core's acceptance check:
// `hush env --tool bash` shows PATH and none of the environment's secrets.
func TestEnvCommandShowsNoSecret(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.config("[tools.bash]\ninherit = \"all\"\ninclude = [\"*\"]\nset = { GREETING = \"hello\" }\nsecrets = [\"GRANTED\"]\n")
	out, err := runHush(w, "env", "--tool", "bash", "--dropped")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	w.assertNoCanary("hush env", out)
	for _, want := range []string{
		"PATH=",
		"GREETING=hello\n",
		"GRANTED=<granted at run time: vault.read:GRANTED>\n",
		"#   DATABASE_URL: value is a URL with a password\n",
		"#   INNOCENT_SETTING: value equals the value of a secret\n",
		"#   MY_SERVICE_TOKEN: credential-named; grant it as a secret instead\n",
		"#   OPENAI_API_KEY: credential-named; grant it as a secret instead\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("hush env lacks %q:\n%s", want, out)
		}
	}
}

func TestEnvCommandUnknownTool(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	out, err := runHush(w, "env", "--tool", "nope")
	if err == nil || !strings.Contains(out, `hush: unknown tool "nope" (known: background, bash, dockerbash)`) {
		t.Fatalf("err=%v out=%s", err, out)
	}
}
