package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

var (
	schemaOnce sync.Once
	schemaRes  *jsonschema.Resolved
	schemaErr  error
)

// eventSchema is docs/events.schema.json, the contract of `hush run --json`.
func eventSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	schemaOnce.Do(func() {
		data, err := os.ReadFile(filepath.Join("..", "docs", "events.schema.json"))
		if err != nil {
			schemaErr = err
			return
		}
		var s jsonschema.Schema
		if schemaErr = json.Unmarshal(data, &s); schemaErr == nil {
			schemaRes, schemaErr = s.Resolve(nil)
		}
	})
	if schemaErr != nil {
		t.Fatal(schemaErr)
	}
	return schemaRes
}

// event is one decoded --json line.
type event map[string]any

func (e event) str(k string) string { s, _ := e[k].(string); return s }

// parseEvents decodes `hush run --json` output and validates every line
// against the schema: a line that is not an event fails the test.
func parseEvents(t *testing.T, out []byte) []event {
	t.Helper()
	r := eventSchema(t)
	var evs []event
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("--json printed a non-JSON line %q", sc.Text())
		}
		if err := r.Validate(v); err != nil {
			t.Errorf("--json event does not match docs/events.schema.json: %v\n%s", err, sc.Text())
		}
		evs = append(evs, v)
	}
	return evs
}

func ofType(evs []event, typ string) []event {
	var out []event
	for _, e := range evs {
		if e.str("type") == typ {
			out = append(out, e)
		}
	}
	return out
}

// runJSON runs hush with args (which include --json) and returns its events,
// its stderr and its exit code.
func runJSON(t *testing.T, w *world, args ...string) ([]event, string, int) {
	t.Helper()
	cmd := exec.Command(hushBin, args...)
	cmd.Env, cmd.Dir = w.env, w.project
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	w.assertNoCanary("run --json output", stdout.String())
	w.assertNoCanary("run --json stderr", stderr.String())
	return parseEvents(t, stdout.Bytes()), stderr.String(), code
}

// exitCodeOf is the exit code of a finished command's error.
func exitCodeOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func (w *world) fakeModelConfig(m *fakeModel, extra string) {
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n%s", m.URL(), extra))
}

const allowGranted = "[[rules]]\ngate = \"tool.run:bash\"\nsubject = \"bash\"\ndecision = \"allow\"\n" +
	"[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"bash\"\ndecision = \"allow\"\n"

// TestRunJSONStream: a successful turn emits the documented events in order,
// with ids, the exit code of the tool, the provider's usage and the final
// text, and exits 0. The granted secret arrives (its hash is printed) but
// its value is in no event.
func TestRunJSONStream(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	script := `printf %s "$POS" | sha256sum; exit 0`
	model := newFakeModel(t,
		step{text: "Checking.", calls: []fakeCall{{"bash", map[string]any{"script": script, "env": map[string]string{"POS": "${GRANTED}"}}}}},
		step{text: "All good."},
	)
	w.fakeModelConfig(model, allowGranted)
	evs, stderr, code := runJSON(t, w, "run", "--json", "check it")
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr %s", code, stderr)
	}
	var types []string
	for _, e := range evs {
		if typ := e.str("type"); typ != "text.delta" || types[len(types)-1] != typ {
			types = append(types, typ)
		}
	}
	want := "session.started turn.started text.delta tool.started permission permission tool.output tool.finished text.delta turn.completed"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	s := ofType(evs, "session.started")[0]
	if s.str("session_id") == "" || s.str("directory") != w.project || s["model"].(map[string]any)["name"] != "fake" {
		t.Errorf("session.started %v", s)
	}
	if _, err := os.Stat(s.str("transcript")); err != nil {
		t.Errorf("session.started names a transcript that is not there: %v", err)
	}
	started, finished := ofType(evs, "tool.started")[0], ofType(evs, "tool.finished")[0]
	if started.str("call_id") != "call_0_0" || finished.str("call_id") != "call_0_0" {
		t.Errorf("call ids %q %q", started.str("call_id"), finished.str("call_id"))
	}
	if finished.str("status") != "ok" || finished["exit_code"] != float64(0) {
		t.Errorf("tool.finished %v", finished)
	}
	if out := ofType(evs, "tool.output")[0].str("text"); !strings.Contains(out, w.grantedSHA) {
		t.Errorf("positive control: the granted secret did not arrive (output %q)", out)
	}
	done := ofType(evs, "turn.completed")[0]
	if done.str("final_text") != "All good." {
		t.Errorf("final_text %q", done.str("final_text"))
	}
	u := done["usage"].(map[string]any)
	if u["input_tokens"] != float64(2*fakePromptTokens) || u["output_tokens"] != float64(2*fakeCompletionTokens) || u["cached_tokens"] != float64(2*fakeCachedTokens) {
		t.Errorf("usage %v, want the two responses' counts summed", u)
	}
}

// TestRunExitCodes: each documented exit code, with the error event that
// goes with it as the stream's last line.
func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	t.Run("2 usage: no prompt", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		evs, _, code := runJSON(t, w, "run", "--json")
		if code != 2 || len(evs) != 1 || evs[0].str("kind") != "usage" {
			t.Fatalf("exit %d, events %v; want 2 and one usage error", code, evs)
		}
	})
	t.Run("2 usage: unknown flag", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		_, stderr, code := runJSON(t, w, "run", "--jsn", "x")
		if code != 2 || !strings.Contains(stderr, "jsn") {
			t.Fatalf("exit %d (%s), want 2 naming the flag", code, stderr)
		}
	})
	t.Run("2 usage: unknown flag after --json", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		evs, stderr, code := runJSON(t, w, "run", "--json", "--frob", "x")
		if code != 2 || len(evs) != 1 || evs[0].str("kind") != "usage" || evs[0].str("message") != "unknown flag --frob" {
			t.Fatalf("exit %d, events %v (%s); want 2 and one usage error naming the flag", code, evs, stderr)
		}
	})
	t.Run("1 model failure", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
			http.Error(rw, `{"error":{"message":"model fake-x does not exist"}}`, http.StatusBadRequest)
		}))
		t.Cleanup(srv.Close)
		w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake-x\"\n", srv.URL+"/v1"))
		evs, _, code := runJSON(t, w, "run", "--json", "hi")
		last := evs[len(evs)-1]
		if code != 1 || last.str("kind") != "model" || !strings.Contains(last.str("message"), "does not exist") {
			t.Fatalf("exit %d, last event %v; want 1 and a model error with the server's message", code, last)
		}
	})
	t.Run("1 config failure", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		evs, _, code := runJSON(t, w, "run", "--json", "hi") // no model configured
		if code != 1 || len(evs) != 1 || evs[0].str("kind") != "config" {
			t.Fatalf("exit %d, events %v; want 1 and a config error", code, evs)
		}
	})
	t.Run("3 denied tool run", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		model := newFakeModel(t, step{calls: []fakeCall{{"bash", map[string]any{"script": "touch ran"}}}}, step{text: "could not"})
		w.fakeModelConfig(model, "") // no --yes, no rule: tool.run:bash is denied
		evs, stderr, code := runJSON(t, w, "run", "--json", "go")
		if code != 3 {
			t.Fatalf("exit %d, want 3; stderr %s", code, stderr)
		}
		if _, err := os.Stat(filepath.Join(w.project, "ran")); err == nil {
			t.Fatal("the denied tool ran")
		}
		if f := ofType(evs, "tool.finished"); len(f) != 1 || f[0].str("status") != "denied" {
			t.Errorf("tool.finished %v, want status denied", f)
		}
		last := evs[len(evs)-1]
		if last.str("kind") != "denied" || !strings.Contains(last.str("message"), "tool.run:bash") {
			t.Errorf("last event %v", last)
		}
	})
	t.Run("3 denied MCP start-up secret", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		cs := newCheckingServer(t, w.granted)
		model := newFakeModel(t, step{text: "done without it"})
		// No rule: hush run denies the server's read of GRANTED at start.
		w.fakeModelConfig(model, fmt.Sprintf("[mcp.remote]\nurl = %q\nheaders = { X-Api-Key = \"${GRANTED}\" }\n", cs.srv.URL+"/mcp"))
		evs, stderr, code := runJSON(t, w, "run", "--json", "go")
		if code != 3 {
			t.Fatalf("exit %d, want 3; stderr %s", code, stderr)
		}
		if n := len(cs.requests()); n != 0 {
			t.Fatalf("the denied server was sent %d request(s)", n)
		}
		p := ofType(evs, "permission")
		if len(p) != 1 || p[0].str("gate") != "vault.read:GRANTED" || p[0].str("subject") != "mcp:remote" || p[0].str("decision") != "deny" || p[0]["turn"] != float64(0) {
			t.Errorf("permission events %v", p)
		}
		// The turn itself ran (positive control), then the run ended denied.
		if d := ofType(evs, "turn.completed"); len(d) != 1 || d[0].str("final_text") != "done without it" {
			t.Errorf("turn.completed %v", d)
		}
		last := evs[len(evs)-1]
		if last.str("kind") != "denied" || !strings.Contains(last.str("message"), `mcp server "remote" was not started: vault.read:GRANTED for mcp:remote is denied`) {
			t.Errorf("last event %v", last)
		}
	})
	t.Run("0 with a granted secret", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		model := newFakeModel(t, step{calls: []fakeCall{{"bash", map[string]any{"script": "true", "env": map[string]string{"X": "${GRANTED}"}}}}}, step{text: "ok"})
		w.fakeModelConfig(model, allowGranted)
		evs, stderr, code := runJSON(t, w, "run", "--json", "go")
		if code != 0 || len(ofType(evs, "error")) != 0 {
			t.Fatalf("exit %d (%s), want 0 and no error event", code, stderr)
		}
	})
}

// TestRunInterruptedExits130: Ctrl-C (SIGINT) during a tool call stops it,
// ends the stream with an interrupted error and exits 130.
func TestRunInterruptedExits130(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	model := newFakeModel(t, step{calls: []fakeCall{{"bash", map[string]any{"script": "echo started; sleep 60"}}}}, step{text: "late"})
	w.fakeModelConfig(model, "")
	cmd := exec.Command(hushBin, "run", "--yes", "--json", "go")
	cmd.Env, cmd.Dir = w.env, w.project
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var out bytes.Buffer
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out.Write(append(sc.Bytes(), '\n'))
		if strings.Contains(sc.Text(), `"type":"tool.output"`) {
			break
		}
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		out.Write(append(sc.Bytes(), '\n'))
	}
	err = cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, out.String())
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("the sleeping tool was not stopped")
	}
	evs := parseEvents(t, out.Bytes())
	if f := ofType(evs, "tool.finished"); len(f) != 1 || f[0].str("status") != "cancelled" {
		t.Errorf("tool.finished %v, want cancelled", f)
	}
	if last := evs[len(evs)-1]; last.str("kind") != "interrupted" {
		t.Errorf("last event %v, want an interrupted error", last)
	}
}
