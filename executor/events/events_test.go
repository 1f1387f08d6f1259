package events_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/executor/events"
	"github.com/hushcli/hush/executor/provider"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/bash"
)

// schema is docs/events.schema.json, resolved.
func schema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "events.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// decode validates every line of out and returns the events.
func decode(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	r := schema(t)
	var evs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if err := r.Validate(v); err != nil {
			t.Errorf("event does not match the schema: %v\n%s", err, sc.Text())
		}
		evs = append(evs, v)
	}
	return evs
}

type steps []provider.Response

type scripted struct{ steps steps }

func (s *scripted) Name() string { return "scripted" }
func (s *scripted) Stream(_ context.Context, _ provider.Request, onText func(string)) (provider.Response, error) {
	r := s.steps[0]
	s.steps = s.steps[1:]
	if onText != nil && r.Text != "" {
		onText(r.Text)
	}
	return r, nil
}

type mapVault map[string]string

func (m mapVault) Get(name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", os.ErrNotExist
}

func TestStreamOfATurnMatchesTheSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const secret = "canary-events-secret-9f3a"
	v := mapVault{"GRANTED": secret, "OTHER": "canary-events-other-77"}
	model := &scripted{steps: steps{
		{Text: "Looking.", ToolCalls: []provider.ToolCall{
			{ID: "c1", Name: "bash", Args: json.RawMessage(`{"script":"printf %s \"$G\"; exit 4","env":{"G":"${GRANTED}"}}`)},
			{ID: "c2", Name: "bash", Args: json.RawMessage(`{"script":"touch ran","env":{"O":"${OTHER}"}}`)},
		}, Usage: provider.Usage{InputTokens: 100, OutputTokens: 20, CachedTokens: 64}},
		{Text: "Done: " + secret, Usage: provider.Usage{InputTokens: 150, OutputTokens: 5}},
	}}
	var out bytes.Buffer
	w := events.New(&out)
	agent := &executor.Agent{
		Provider: model,
		Tools:    executor.NewRegistry(bash.Tool{}),
		Gate: &executor.RuleGate{Rules: []executor.Rule{
			{Gate: "tool.run:bash", Subject: "bash", Decision: executor.Allow},
			{Gate: "vault.read:GRANTED", Subject: "bash", Decision: executor.Allow},
		}},
		Audit:   auditlog.Open(filepath.Join(dir, "audit.jsonl")),
		Vault:   v,
		Secrets: func() (map[string]string, error) { return v, nil },
		Ambient: map[string]string{"PATH": "/usr/bin:/bin"},
		Dir:     dir,
		Policy:  func(string) tools.Policy { return tools.Policy{} },
		Events:  w,
	}
	w.SessionStarted(events.Session{ID: "s1", Model: events.Model{Provider: "scripted", Name: "m"}, Directory: dir,
		Sandbox: events.Sandbox{State: "off"}, Tools: []string{"bash"}})
	res, err := agent.RunTurn(context.Background(), nil, "go")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), secret) || strings.Contains(out.String(), "canary-events-other") {
		t.Fatalf("a secret value reached the stream:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("the call whose secret was denied ran")
	}
	evs := decode(t, out.Bytes())
	var types []string
	byType := map[string][]map[string]any{}
	for _, e := range evs {
		typ := e["type"].(string)
		if n := len(types); n == 0 || typ != "text.delta" || types[n-1] != typ {
			types = append(types, typ) // the redactor may split a delta
		}
		byType[typ] = append(byType[typ], e)
	}
	want := "session.started turn.started text.delta tool.started permission permission tool.output tool.finished " +
		"tool.started permission permission tool.finished text.delta turn.completed"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("event order\n got %s\nwant %s", got, want)
	}
	f1, f2 := byType["tool.finished"][0], byType["tool.finished"][1]
	if f1["status"] != "error" || f1["exit_code"] != float64(4) || f1["call_id"] != "c1" {
		t.Errorf("first call finished as %v", f1)
	}
	if f2["status"] != "denied" || f2["exit_code"] != nil || !strings.Contains(f2["result"].(string), "vault.read:OTHER") {
		t.Errorf("second call (secret denied) finished as %v", f2)
	}
	if out := byType["tool.output"][0]["text"]; out != "[REDACTED:GRANTED]" {
		t.Errorf("tool output %q, want the granted value redacted (positive control: it arrived)", out)
	}
	if args := byType["tool.started"][0]["arguments"].(map[string]any); args["env"].(map[string]any)["G"] != "${GRANTED}" {
		t.Errorf("arguments not as the model sent them: %v", args)
	}
	perms := byType["permission"]
	if perms[3]["gate"] != "vault.read:OTHER" || perms[3]["decision"] != "deny" || perms[3]["source"] != "default" {
		t.Errorf("denial event %v", perms[3])
	}
	if perms[1]["gate"] != "vault.read:GRANTED" || perms[1]["rule"] != "allow vault.read:GRANTED for bash" {
		t.Errorf("grant event %v", perms[1])
	}
	done := byType["turn.completed"][0]
	usage := done["usage"].(map[string]any)
	if usage["input_tokens"] != float64(250) || usage["output_tokens"] != float64(25) || usage["cached_tokens"] != float64(64) {
		t.Errorf("usage %v, want the two steps summed", usage)
	}
	if done["final_text"] != "Done: [REDACTED:GRANTED]" || done["steps"] != float64(2) {
		t.Errorf("turn.completed %v", done)
	}
	if d := done["denied"].([]any); len(d) != 1 || d[0] != "vault.read:OTHER" {
		t.Errorf("denied %v", d)
	}
	if len(res.Denied) != 1 {
		t.Errorf("RunTurn reports denials %v", res.Denied)
	}
}

func TestSchemaRejectsWhatV1DoesNotDefine(t *testing.T) {
	t.Parallel()
	r := schema(t)
	bad := []string{
		`{"type":"text.delta","v":1,"time":"2026-01-01T00:00:00Z","turn":1}`,                            // no text
		`{"type":"text.delta","v":2,"time":"2026-01-01T00:00:00Z","turn":1,"text":"x"}`,                 // wrong version
		`{"type":"tool_result","v":1,"time":"2026-01-01T00:00:00Z"}`,                                    // old name
		`{"type":"error","v":1,"time":"2026-01-01T00:00:00Z","kind":"oops","message":"x"}`,              // unknown kind
		`{"type":"tool.output","v":1,"time":"2026-01-01T00:00:00Z","call_id":"c","text":"x","extra":1}`, // undocumented field
	}
	for _, line := range bad {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		if r.Validate(v) == nil {
			t.Errorf("schema accepts %s", line)
		}
	}
	var ok map[string]any
	_ = json.Unmarshal([]byte(`{"type":"tool.output","v":1,"time":"2026-01-01T00:00:00Z","call_id":"c","text":"x"}`), &ok)
	if err := r.Validate(ok); err != nil {
		t.Errorf("schema rejects a valid event: %v", err)
	}
}
