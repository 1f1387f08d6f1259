package tests

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHarmlessCredentialNamedValuesRunUnchanged: with AWS_CA_BUNDLE set to
// a CA file that exists and AWS_PROFILE=default exported (as on many
// machines), the model's command naming that path and a word holding
// "default" runs unchanged and its output is not redacted; SSL_CERT_FILE,
// with the same path, still reaches a tool that includes it. The names
// stay out of the tool's environment (classification by name is
// unchanged), and the granted secret still arrives, redacted.
func TestHarmlessCredentialNamedValuesRunUnchanged(t *testing.T) {
	t.Parallel()
	const bundle = "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(bundle); err != nil {
		t.Skipf("%s is not on this machine", bundle)
	}
	w := newWorld(t)
	w.env = append(w.env, "AWS_CA_BUNDLE="+bundle, "AWS_PROFILE=default", "AWS_REGION=us-east-1", "SSL_CERT_FILE="+bundle)
	script := "ls " + bundle + " && git config --get init.defaultBranch; echo init.defaultBranch=main; echo region us-east-1; " +
		`echo "cert=$SSL_CERT_FILE profile=${AWS_PROFILE:-unset}"; printf %s "$T" | sha256sum`
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": script, "env": map[string]string{"T": "${GRANTED}"}}}}},
		step{text: "done"},
	)
	w.fakeModelConfig(model, allowGranted+"[tools.bash]\ninclude = [\"SSL_CERT_FILE\"]\n")
	out, code := runHushWithin(t, w, 60*time.Second, "run", "look")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	got := model.Received()
	for _, want := range []string{
		bundle + "\\n",                      // ls printed the path
		"init.defaultBranch=main",           // not init.[REDACTED:AWS_PROFILE]Branch
		"region us-east-1",                  // a region is not a secret
		"cert=" + bundle + " profile=unset", // SSL_CERT_FILE passed; AWS_PROFILE kept out by name
		w.grantedSHA,                        // positive control: the granted secret arrived
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the tool result lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "[REDACTED:AWS_") || strings.Contains(out, "[REDACTED:AWS_") {
		t.Errorf("a harmless value was redacted:\n%s", got)
	}
	w.assertNoCanary("the model's requests", got)

	env, err := runHush(w, "env", "--tool", "bash", "--dropped")
	if err != nil {
		t.Fatalf("%v\n%s", err, env)
	}
	if !strings.Contains(env, "SSL_CERT_FILE="+bundle+"\n") || strings.Contains(env, "SSL_CERT_FILE: value equals") {
		t.Errorf("hush env keeps SSL_CERT_FILE out:\n%s", env)
	}
	if !strings.Contains(env, "#   AWS_CA_BUNDLE: credential-named; grant it as a secret instead\n") {
		t.Errorf("hush env does not give AWS_CA_BUNDLE's true reason:\n%s", env)
	}
}

// TestDroppedUnderTheDefaultPolicy: `hush env --dropped` under the default
// policy lists what is kept out and why, not nothing.
func TestDroppedUnderTheDefaultPolicy(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.env = append(w.env, "GITHUB_TOKEN=ghp_9fK2mQ7xW4tZ8vB1nR6yC3", "LD_PRELOAD=/tmp/evil.so")
	out, err := runHush(w, "env", "--tool", "bash", "--dropped")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"# kept out:\n", "#   GITHUB_TOKEN: credential-named; grant it as a secret instead\n",
		"#   LD_PRELOAD: loader injection variable\n", "#   DATABASE_URL: value is a URL with a password\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("hush env --dropped lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ghp_9fK2") {
		t.Errorf("hush env shows a value:\n%s", out)
	}
}

// TestEveryDotEnvFileIsALegacySource: values in .env.local and sub/.env
// are secrets: a copy of them printed by a tool (cat of a log that holds
// them; the files themselves are masked) reaches the model, the screen and
// the transcript only as placeholders, checked on the raw bytes with
// od -c and xxd; each file is named in the start-up warning, and `hush
// vault import` takes sub/.env and says it copies.
func TestEveryDotEnvFileIsALegacySource(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	local, sub := canary("dotenvlocal"), canary("subdotenv")
	w.write(filepath.Join(w.project, ".env.local"), "LOCAL_KEY="+local+"\n")
	if err := os.MkdirAll(filepath.Join(w.project, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	w.write(filepath.Join(w.project, "sub", ".env"), "SUB_SECRET="+sub+"\n")
	w.write(filepath.Join(w.project, "build.log"), "deploying with "+local+"\nand "+sub+"\n")
	model := newFakeModel(t,
		step{calls: []fakeCall{{"bash", map[string]any{"script": "cat .env.local sub/.env; cat build.log; printf %s \"$T\" | sha256sum",
			"env": map[string]string{"T": "${GRANTED}"}}}}},
		step{text: "done"},
	)
	w.fakeModelConfig(model, allowGranted)
	out, code := runHushWithin(t, w, 60*time.Second, "run", "deploy")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "legacy secret files in the project, values hush treats as secrets: .env (1), .env.local (1), sub/.env (1)") {
		t.Errorf("the warning does not name each file:\n%s", out)
	}
	got := model.Received()
	for _, want := range []string{"deploying with [REDACTED:LOCAL_KEY]", "and [REDACTED:SUB_SECRET]", w.grantedSHA} {
		if !strings.Contains(got, want) {
			t.Errorf("the tool result lacks %q:\n%s", want, got)
		}
	}
	for where, raw := range map[string]string{"the screen": out, "the model's requests": got, "the transcript": w.transcripts()} {
		for _, v := range []string{local, sub} {
			if leaked := inRawBytes(t, raw, v); leaked != "" {
				t.Errorf("%s holds a .env value (%s)", where, leaked)
			}
		}
	}

	imp, err := runHush(w, "vault", "import", filepath.Join(w.project, "sub", ".env"))
	if err != nil {
		t.Fatalf("%v\n%s", err, imp)
	}
	if !strings.Contains(imp, "copied into the vault") || !strings.Contains(imp, "SUB_SECRET") || !strings.Contains(imp, "import copies, it does not move") {
		t.Errorf("vault import of sub/.env:\n%s", imp)
	}
}

// inRawBytes looks for v in data the way a person auditing raw bytes
// would: in od -c's listing (characters spaced out, a line per 16 bytes)
// and in xxd -p's hex, with the line breaks both put in removed.
func inRawBytes(t *testing.T, data, v string) string {
	t.Helper()
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Stdin = strings.NewReader(data)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return string(b)
	}
	if hexOut := strings.ReplaceAll(run("xxd", "-p"), "\n", ""); strings.Contains(hexOut, hex.EncodeToString([]byte(v))) {
		return "xxd -p"
	}
	var chars bytes.Buffer
	for _, line := range strings.Split(run("od", "-An", "-c", "-w16"), "\n") {
		for _, f := range strings.Fields(line) {
			chars.WriteString(f)
		}
	}
	if strings.Contains(chars.String(), v) {
		return "od -c"
	}
	return ""
}

// TestLiteralKeyInMCPJSONIsSaid: a key written literally in mcp.json (the
// format the README recommends) is named when a session starts its servers
// and by hush audit's risks — by name, never by value.
func TestLiteralKeyInMCPJSONIsSaid(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const token = "ghp_9fK2mQ7xW4tZ8vB1nR6yC3literal"
	w.write(filepath.Join(w.configDir, "mcp.json"),
		`{"mcpServers":{"gh":{"command":"/bin/false","env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"`+token+`","LOG_LEVEL":"debug"}}}}`)
	model := newFakeModel(t, step{text: "hello"})
	w.fakeModelConfig(model, "")
	out, _ := runHushWithin(t, w, 60*time.Second, "run", "hi")
	want := "hush: warning: MCP server gh has a literal value for GITHUB_PERSONAL_ACCESS_TOKEN in mcp.json: store it with `hush vault set GITHUB_PERSONAL_ACCESS_TOKEN`"
	if !strings.Contains(out, want) {
		t.Errorf("hush run does not warn about the literal key:\n%s", out)
	}
	if strings.Contains(out, token) || strings.Contains(out, "LOG_LEVEL") {
		t.Errorf("the warning shows a value or flags a harmless variable:\n%s", out)
	}
}
