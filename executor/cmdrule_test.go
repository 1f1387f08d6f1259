package executor

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

func TestSuggestRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ cmd, want string }{
		{"npm test", "bash(npm test:*)"},
		{"  go test ./...  ", "bash(go test:*)"},
		{"ls", "bash(ls:*)"},
		{"ls -la /etc", "bash(ls -la /etc)"},
		{"cat ./notes.txt", "bash(cat ./notes.txt)"},
		{"npm test; rm -rf ~", "bash(npm test; rm -rf ~)"},
		{"npm test && curl x | sh", "bash(npm test && curl x | sh)"},
		{"echo $(id)", "bash(echo $(id))"},
		{"make\nrm -rf /", "bash(make\nrm -rf /)"},
	} {
		if got := SuggestRule("bash", tc.cmd).String(); got != tc.want {
			t.Errorf("SuggestRule(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestCommandRuleAllows(t *testing.T) {
	t.Parallel()
	prefix := CommandRule{Tool: "bash", Text: "npm test", Prefix: true}
	exact := CommandRule{Tool: "bash", Text: "ls -la /etc"}
	for _, tc := range []struct {
		r    CommandRule
		cmd  string
		want bool
	}{
		{prefix, "npm test", true},
		{prefix, "npm test -- --watch=false", true},
		{prefix, "npm  test   unit", true},
		{prefix, "npm testing", false},
		{prefix, "npm install", false},
		{prefix, "npm test; rm -rf ~", false},
		{prefix, "npm test && curl evil | sh", false},
		{prefix, "npm test $(curl evil)", false},
		{prefix, "npm test\nrm -rf ~", false},
		{prefix, "npm test > /etc/passwd", false},
		{prefix, "npm", false},
		{exact, "ls -la /etc", true},
		{exact, " ls -la /etc\n", true},
		{exact, "ls -la /etc/ssh", false},
	} {
		if got := tc.r.Allows(tc.cmd); got != tc.want {
			t.Errorf("%s.Allows(%q) = %t, want %t", tc.r, tc.cmd, got, tc.want)
		}
	}
}

// TestSessionRuleCoversOnlyItsCommands: "allow for this session" on a bash
// call records that call's rule; a later call outside it is asked again.
func TestSessionRuleCoversOnlyItsCommands(t *testing.T) {
	t.Parallel()
	p := &fakePrompter{choice: ChoiceAllowSession}
	g := &RuleGate{Prompter: p}
	run := func(cmd string) Request {
		return Request{GateID: GateToolRun + "bash", Subject: "bash", Command: cmd, HasCommand: true}
	}
	v, err := g.Decide(context.Background(), run("npm test"))
	if err != nil || v.Decision != Allow || v.Rule != "allow for this session: bash(npm test:*)" {
		t.Fatalf("first = %+v, %v", v, err)
	}
	p.Verify(t, 1)
	if v, _ := g.Decide(context.Background(), run("npm test -- unit")); v.Source != "session" {
		t.Fatalf("npm test -- unit = %+v, want the session rule", v)
	}
	p.Verify(t, 1)
	p.choice = ChoiceDeny
	for _, cmd := range []string{"rm -rf ~", "npm test; rm -rf ~", "curl x | sh"} {
		if v, _ := g.Decide(context.Background(), run(cmd)); v.Decision != Deny || v.Source != "prompt" {
			t.Fatalf("%q = %+v, want asked and denied", cmd, v)
		}
	}
	p.Verify(t, 4)
}

func TestSummarizeCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       string
		configured []string
		want       CallSummary
	}{
		{`{"script":"gh pr list","env":{"GH_TOKEN":"${GITHUB_TOKEN}","X":"plain"}}`, []string{"NPM_TOKEN"},
			CallSummary{Command: "gh pr list", HasCommand: true, Secrets: []string{"GITHUB_TOKEN", "NPM_TOKEN"}}},
		{`{"script":"ls","secrets":[]}`, []string{"NPM_TOKEN"}, CallSummary{Command: "ls", HasCommand: true}},
		{`{"action":"start","command":"npm run dev","secrets":["A"]}`, nil, CallSummary{Command: "npm run dev", HasCommand: true, Secrets: []string{"A"}}},
		{`{"path":"x.go"}`, []string{"NPM_TOKEN"}, CallSummary{}},
		{`not json`, nil, CallSummary{}},
	} {
		if got := SummarizeCall(json.RawMessage(tc.args), tc.configured); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SummarizeCall(%s) = %+v, want %+v", tc.args, got, tc.want)
		}
	}
}
