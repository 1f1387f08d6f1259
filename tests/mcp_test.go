package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// everythingBin is the real third-party MCP server scripts/provision
// installs from npm; without Node or the package the test skips, saying why.
func everythingBin(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs mcp-everything: node is not installed, so @modelcontextprotocol/server-everything cannot run (run scripts/provision on a machine with Node)")
	}
	cache := os.Getenv("HUSH_TEST_CACHE")
	if cache == "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache", "hush-test")
	}
	bin := filepath.Join(cache, "npm", "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("needs mcp-everything: %s is not installed; run scripts/provision", bin)
	}
	return bin
}

var faultOnce struct {
	sync.Once
	path string
	err  error
}

// faultServerBin builds the Go fault-injection MCP server once.
func faultServerBin(t *testing.T) string {
	t.Helper()
	faultOnce.Do(func() {
		faultOnce.path = filepath.Join(filepath.Dir(hushBin), "faultserver")
		out, err := exec.Command("go", "build", "-o", faultOnce.path, "../toolset/mcp/testdata/faultserver").CombinedOutput()
		if err != nil {
			faultOnce.err = fmt.Errorf("build faultserver: %v\n%s", err, out)
		}
	})
	if faultOnce.err != nil {
		t.Fatal(faultOnce.err)
	}
	return faultOnce.path
}

// processesWith lists live processes whose command line starts with
// marker or whose environment holds it.
func processesWith(marker string) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, d := range dirs {
		cmdline, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		if len(cmdline) == 0 {
			continue // a zombie or a kernel thread
		}
		if bytes.HasPrefix(cmdline, []byte("hush-sandbox-init\x00")) || bytes.HasPrefix(cmdline, []byte("hush-reaper\x00")) {
			continue // a tool's sandbox init or reaper, which carries its environment and dies with it
		}
		environ, _ := os.ReadFile(filepath.Join(d, "environ"))
		if bytes.HasPrefix(cmdline, []byte(marker)) || bytes.Contains(environ, []byte(marker)) {
			out = append(out, filepath.Base(d)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

// TestChatTurnWithBackgroundAndMCPLeaksNothing: one chat turn starts a
// background process that runs the leak script, calls the real
// server-everything's get-env, and reads the background output. The MCP
// server's secret is asked for at session start; no canary reaches the
// model, the screen, the transcript or the audit log; the granted secret
// arrives exactly; and when hush exits, neither process survives.
func TestChatTurnWithBackgroundAndMCPLeaksNothing(t *testing.T) {
	t.Parallel()
	bin := everythingBin(t)
	w := newWorld(t)
	marker := canary("marker")
	bgScript := leakScript + "; touch bg-ready; exec -a " + marker + "-bg sleep 300"
	model := newFakeModel(t,
		step{text: "Starting a watcher.", calls: []fakeCall{{"background", map[string]any{"action": "start", "command": bgScript, "env": map[string]string{"POS": "${GRANTED}"}}}}},
		step{text: "Asking the MCP server.", calls: []fakeCall{{"mcp__everything__get-env", map[string]any{}}}},
		step{calls: []fakeCall{{"bash", map[string]any{"script": "while [ ! -e bg-ready ]; do sleep 0.05; done; echo watcher ready"}}}},
		step{calls: []fakeCall{{"background", map[string]any{"action": "output", "id": "bg1", "offset": 0}}}},
		step{text: "All done: nothing secret was visible."},
	)
	w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[mcp.everything]
command = %q
args = ["stdio"]
env = { HUSH_GRANTED = "${GRANTED}", PLAIN_SETTING = %q }

[[rules]]
gate = "tool.run:*"
subject = "*"
decision = "allow"
`, model.URL(), bin, marker))
	tm := startPTY(t, w, "chat")
	// The server needs a secret: hush asks before the first prompt.
	tm.expect("mcp:everything wants the secret GRANTED", 30*time.Second)
	tm.send("\r") // allow once
	// The chat's banner, not "› ": the approval's cursor is one too.
	tm.expect("Ctrl-C stops a turn", 30*time.Second)
	tm.send("start a watcher and check the MCP server\r")
	tm.expect("background wants the secret GRANTED", 30*time.Second)
	tm.send("\r")
	tm.expect("All done: nothing secret was visible.", 60*time.Second)
	tm.expect("› ", 10*time.Second)
	if got := processesWith(marker); len(got) != 2 {
		t.Errorf("before exit: %q, want the background process and the MCP server", got)
	}
	tm.send("\x04")
	if code := tm.wait(20 * time.Second); code != 0 {
		t.Fatalf("exit code %d; screen:\n%s", code, tm.Screen())
	}
	received := model.Received()
	checkLeakTurn(t, w, tm.Raw(), received)
	for _, want := range []string{
		`HUSH_GRANTED\": \"[REDACTED:GRANTED]\"`, // get-env: the secret arrived, redacted on the way back
		`PLAIN_SETTING\": \"` + marker,
		`"name":"mcp__everything__get-env"`, // offered to the model
		`"name":"background"`,
		"started bg1 (pid ",
	} {
		if !strings.Contains(received, want) {
			t.Errorf("the model did not receive %q", want)
		}
	}
	// Redaction would hide a leaked value, so check names too: neither the
	// background process (env, /proc/$PPID/environ) nor the MCP server got
	// a variable it was not given.
	for _, name := range []string{"OPENAI_API_KEY", "MY_SERVICE_TOKEN", "DATABASE_URL", "INNOCENT_SETTING"} {
		if strings.Contains(received, name+"=") || strings.Contains(received, name+`\": `) {
			t.Errorf("a tool child got %s from hush's environment", name)
		}
	}
	if env := getEnvResult(t, received); env != nil {
		var keys []string
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		// The proxy variables point at hush's egress proxy inside the
		// server's own network: its one way out.
		if got, want := strings.Join(keys, ","), "ALL_PROXY,HOME,HTTPS_PROXY,HTTP_PROXY,HUSH_GRANTED,NO_PROXY,PATH,PLAIN_SETTING,TERM,all_proxy,http_proxy,https_proxy,no_proxy"; got != want {
			t.Errorf("server-everything's environment has %s, want exactly %s", got, want)
		}
		if got := env["HTTPS_PROXY"]; got != "http://127.0.0.1:1023" {
			t.Errorf("server-everything's HTTPS_PROXY is %q, want hush's egress proxy http://127.0.0.1:1023", got)
		}
	}
	for _, want := range []string{
		`"tool":"mcp:everything","gate":"vault.read:GRANTED","decision":"allow","source":"prompt"`,
		`"tool":"background","gate":"vault.read:GRANTED","decision":"allow","source":"prompt"`,
	} {
		if !strings.Contains(w.audit(), want) {
			t.Errorf("audit lacks %s:\n%s", want, w.audit())
		}
	}
	// Shutdown stopped the background process and the MCP server.
	deadline := time.Now().Add(5 * time.Second)
	for len(processesWith(marker)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := processesWith(marker); len(got) > 0 {
		t.Errorf("survived hush's exit: %q", got)
	}
	if logs, _ := filepath.Glob(filepath.Join(w.dataDir, "background", "*", "*")); len(logs) > 0 {
		t.Errorf("background logs left behind: %q", logs)
	}
}

// getEnvResult finds get-env's result in the last request the model
// received and parses it.
func getEnvResult(t *testing.T, received string) map[string]string {
	t.Helper()
	bodies := strings.Split(received, "\n")
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(bodies[len(bodies)-1]), &req); err != nil {
		t.Errorf("the last request is not JSON: %v", err)
		return nil
	}
	for _, m := range req.Messages {
		if m.Role != "tool" || m.ToolCallID != "call_1_0" { // step 1's call
			continue
		}
		var text string
		if err := json.Unmarshal(m.Content, &text); err != nil {
			t.Errorf("get-env's result is not a string: %s", m.Content)
			return nil
		}
		env := map[string]string{}
		if err := json.Unmarshal([]byte(text), &env); err != nil {
			t.Errorf("get-env's result is not the JSON environment: %v\n%s", err, text)
			return nil
		}
		return env
	}
	t.Error("no get-env result in the last request")
	return nil
}

// TestRunDeniedMCPSecret: without a rule, a non-interactive run does not
// start the server, says which rule to add, offers none of its tools, and
// exits 3.
func TestRunDeniedMCPSecret(t *testing.T) {
	t.Parallel()
	bin := everythingBin(t)
	w := newWorld(t)
	marker := canary("marker")
	model := newFakeModel(t, step{text: "Nothing to do."})
	w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[mcp.everything]
command = %q
args = ["stdio"]
env = { HUSH_GRANTED = "${GRANTED}", PLAIN_SETTING = %q }
`, model.URL(), bin, marker))
	out, err := runHush(w, "run", "--yes", "hello")
	if code := exitCodeOf(err); code != 3 {
		t.Fatalf("exit %d (%v), want 3: the start-up secret was denied\n%s", code, err, out)
	}
	want := `hush: mcp server "everything" not started: vault.read:GRANTED for mcp:everything is denied: no rule allows it and hush cannot ask here. To allow it, add to config.toml:

[[rules]]
gate = "vault.read:GRANTED"
subject = "mcp:everything"
decision = "allow"
`
	if !strings.Contains(out, want) {
		t.Errorf("output lacks the denial naming the rule:\n%s", out)
	}
	if strings.Contains(model.Received(), "mcp__everything__") {
		t.Error("the tools of a server that did not start were offered to the model")
	}
	if got := processesWith(marker); len(got) > 0 {
		t.Errorf("a server process exists although its secret was denied: %q", got)
	}
	if !strings.Contains(w.audit(), `"tool":"mcp:everything","gate":"vault.read:GRANTED","decision":"deny","source":"default"`) {
		t.Errorf("audit lacks the denial:\n%s", w.audit())
	}
	w.assertNoCanary("run output", out)
}

// TestRunSurvivesACrashingServer: a server that crashes mid-call gives the
// model a clear error, and the next call restarts it.
func TestRunSurvivesACrashingServer(t *testing.T) {
	t.Parallel()
	fs := faultServerBin(t)
	w := newWorld(t)
	model := newFakeModel(t,
		step{calls: []fakeCall{{"mcp__faulty__crash", map[string]any{}}}},
		step{calls: []fakeCall{{"mcp__faulty__echo", map[string]any{"text": "back again"}}}},
		step{text: "Recovered."},
	)
	w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[mcp.faulty]
command = %q

[[rules]]
gate = "tool.run:mcp__faulty__*"
subject = "*"
decision = "allow"
`, model.URL(), fs))
	out, err := runHush(w, "run", "go")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	received := model.Received()
	for _, want := range []string{
		`error: mcp server \"faulty\" exited unexpectedly (exit status 3) during the call to crash; it is restarted on the next call; its stderr ends: faultserver: starting in mode normal | faultserver: panic: simulated crash`,
		`"content":"back again"`,
	} {
		if !strings.Contains(received, want) {
			t.Errorf("the model did not receive %s:\n%s", want, received)
		}
	}
	if !strings.Contains(out, "Recovered.") {
		t.Errorf("the turn did not finish:\n%s", out)
	}
}

// TestMCPImportListAndTools: a pasted mcpServers block with a literal token
// becomes an mcp.json that refers to the vault; `hush mcp list` shows why a
// server did not start, then its tools once a rule allows its secret.
func TestMCPImportListAndTools(t *testing.T) {
	t.Parallel()
	bin := everythingBin(t)
	fs := faultServerBin(t)
	w := newWorld(t)
	token := canary("pasted")
	w.canaries["pasted"] = token
	headerToken := canary("pastedheader")
	w.canaries["pasted-header"] = headerToken
	w.config(fmt.Sprintf("[mcp.broken]\ncommand = %q\nargs = [\"-start=exit\"]\n", fs))
	paste := fmt.Sprintf(`"mcpServers": {
  "everything": {"command": %q, "args": ["stdio"], "env": {"EVERYTHING_TOKEN": %q, "LOG_LEVEL": "debug"}},
  "remote": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer %s"}}
}`, bin, token, headerToken)
	cmd := exec.Command(hushBin, "mcp", "import", "-")
	cmd.Env, cmd.Dir, cmd.Stdin = w.env, w.project, strings.NewReader(paste)
	outBytes, err := cmd.CombinedOutput()
	out := string(outBytes)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	w.assertNoCanary("import output", out)
	for _, want := range []string{
		`server "remote": AUTHORIZATION: the value was moved into the vault as AUTHORIZATION; mcp.json refers to it as ${AUTHORIZATION}`,
		`server "everything": EVERYTHING_TOKEN: the value was moved into the vault as EVERYTHING_TOKEN; mcp.json refers to it as ${EVERYTHING_TOKEN}`,
		"added everything, remote to " + filepath.Join(w.configDir, "mcp.json"),
		"[[rules]]\ngate = \"vault.read:EVERYTHING_TOKEN\"\nsubject = \"mcp:everything\"\ndecision = \"allow\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	mcpJSON, err := os.ReadFile(filepath.Join(w.configDir, "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	w.assertNoCanary("mcp.json", string(mcpJSON))
	if !strings.Contains(string(mcpJSON), `"Authorization": "${AUTHORIZATION}"`) || !strings.Contains(string(mcpJSON), `"url": "http://127.0.0.1:1/mcp"`) {
		t.Errorf("mcp.json does not keep the remote server with its header in the vault:\n%s", mcpJSON)
	}
	if !strings.Contains(string(mcpJSON), `"EVERYTHING_TOKEN": "${EVERYTHING_TOKEN}"`) {
		t.Errorf("mcp.json does not refer to the vault:\n%s", mcpJSON)
	}
	vaultFile, _ := os.ReadFile(filepath.Join(w.dataDir, "vault.env"))
	if !strings.Contains(string(vaultFile), token) || !strings.Contains(string(vaultFile), headerToken) {
		t.Error("a pasted token is not in the vault")
	}

	out, err = runHush(w, "mcp", "list")
	if err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	for _, want := range []string{
		"broken: failed to start: exited during the MCP handshake (exit status 2); its stderr ends: faultserver: starting in mode exit | faultserver: fatal: no configuration found",
		"everything: not started: vault.read:EVERYTHING_TOKEN for mcp:everything is denied: no rule allows it and hush cannot ask here. To allow it, add to config.toml:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("mcp list lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^everything\s+denied\s+-\s+mcp\.json\s`).MatchString(out) {
		t.Errorf("mcp list row for everything:\n%s", out)
	}

	cfg, _ := os.ReadFile(filepath.Join(w.configDir, "config.toml"))
	w.config(string(cfg) + "\n[[rules]]\ngate = \"vault.read:EVERYTHING_TOKEN\"\nsubject = \"mcp:everything\"\ndecision = \"allow\"\n")
	out, err = runHush(w, "mcp", "list")
	if err != nil {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^everything\s+running\s+[1-9][0-9]*\s+mcp\.json\s`).MatchString(out) {
		t.Errorf("mcp list does not show everything running with its tools:\n%s", out)
	}
	out, err = runHush(w, "mcp", "tools", "everything")
	if err != nil {
		t.Fatalf("tools: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^mcp__everything__get-env\s+Print Environment Tool\.`).MatchString(out) {
		t.Errorf("mcp tools lacks get-env:\n%s", out)
	}
	w.assertNoCanary("mcp tools output", out)
	if !strings.Contains(w.audit(), `"tool":"mcp:everything","gate":"vault.read:EVERYTHING_TOKEN","decision":"allow","source":"rule"`) {
		t.Errorf("audit lacks the allowed read:\n%s", w.audit())
	}
}

// TestCtrlCWhileAnMCPServerStarts: a server that never answers the
// handshake (start_timeout two minutes) does not hold the session
// hostage. Ctrl-C in the terminal ends hush at once with exit code 130,
// and the server is gone.
func TestCtrlCWhileAnMCPServerStarts(t *testing.T) {
	t.Parallel()
	fs := faultServerBin(t)
	w := newWorld(t)
	marker := fmt.Sprintf("hush-hung-server-%d", time.Now().UnixNano())
	w.config(fmt.Sprintf("[mcp.hung]\ncommand = %q\nargs = [\"-start=hang\"]\nenv = { HUSH_TEST_MARK = %q }\nstart_timeout = \"2m\"\n", fs, marker))
	tm := startPTY(t, w, "chat", "--provider", "replay")
	deadline := time.Now().Add(20 * time.Second)
	for len(processesWith(marker)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the server never started; screen:\n%s", tm.Screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.send("\x03")
	if code := tm.wait(10 * time.Second); code != 130 {
		t.Fatalf("exit code %d, want 130; screen:\n%s", code, tm.Screen())
	}
	if !strings.Contains(tm.Screen(), "interrupted while the MCP servers were starting") {
		t.Errorf("no word of the interruption:\n%s", tm.Screen())
	}
	deadline = time.Now().Add(5 * time.Second)
	for left := processesWith(marker); len(left) > 0; left = processesWith(marker) {
		if time.Now().After(deadline) {
			t.Fatalf("the server outlived hush: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
