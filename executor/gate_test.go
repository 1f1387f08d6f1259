package executor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/executor/auditlog"
)

// fakePrompter answers with a fixed choice and records what it was asked.
type fakePrompter struct {
	choice Choice
	reason string
	err    error
	asked  []Request
}

func (f *fakePrompter) Confirm(_ context.Context, req Request) (Answer, error) {
	f.asked = append(f.asked, req)
	return Answer{Choice: f.choice, Reason: f.reason}, f.err
}

func (f *fakePrompter) Verify(t *testing.T, wantAsks int) {
	t.Helper()
	if len(f.asked) != wantAsks {
		t.Fatalf("prompter asked %d times (%v), want %d", len(f.asked), f.asked, wantAsks)
	}
}

func TestRuleGate(t *testing.T) {
	t.Parallel()
	read := Request{GateID: "vault.read:GITHUB_TOKEN", Subject: "bash"}
	run := Request{GateID: "tool.run:bash", Subject: "bash"}
	cases := []struct {
		name     string
		rules    []Rule
		prompter *fakePrompter
		yes      bool
		req      Request
		want     Verdict
		asks     int
	}{
		{"allow rule", []Rule{{Gate: "vault.read:GITHUB_*", Subject: "bash", Decision: Allow}}, nil, false, read,
			Verdict{Decision: Allow, Source: "rule", Rule: "allow vault.read:GITHUB_* for bash"}, 0},
		{"deny beats allow in any order", []Rule{{Gate: "vault.read:*", Subject: "*", Decision: Allow}, {Gate: "vault.read:GITHUB_TOKEN", Subject: "bash", Decision: Deny}}, nil, false, read,
			Verdict{Decision: Deny, Source: "rule", Rule: "deny vault.read:GITHUB_TOKEN for bash",
				Message: "vault.read:GITHUB_TOKEN for bash is denied by a rule in config.toml (deny vault.read:GITHUB_TOKEN for bash)"}, 0},
		{"subject must match", []Rule{{Gate: "vault.read:*", Subject: "mcp:*", Decision: Allow}}, nil, false, read,
			Verdict{Decision: Deny, Source: "default", Message: NoRuleMessage(read)}, 0},
		{"empty subject means any", []Rule{{Gate: "tool.run:*", Subject: "", Decision: Allow}}, nil, false, run,
			Verdict{Decision: Allow, Source: "rule", Rule: "allow tool.run:* for "}, 0},
		{"ask rule overrides allow and asks", []Rule{{Gate: "vault.read:*", Subject: "*", Decision: Allow}, {Gate: "vault.read:GITHUB_TOKEN", Subject: "*", Decision: Ask}}, &fakePrompter{choice: ChoiceAllowOnce}, false, read,
			Verdict{Decision: Allow, Source: "prompt", Rule: "allow once"}, 1},
		{"no rule, interactive deny", nil, &fakePrompter{choice: ChoiceDeny}, false, read,
			Verdict{Decision: Deny, Source: "prompt", Message: UserDeniedMessage(read)}, 1},
		{"--yes approves a tool run", nil, nil, true, run, Verdict{Decision: Allow, Source: "flag", Rule: "--yes"}, 0},
		{"--yes never approves a vault read", nil, nil, true, read, Verdict{Decision: Deny, Source: "default", Message: NoRuleMessage(read)}, 0},
		{"--yes does not ask a person about a tool run", nil, &fakePrompter{choice: ChoiceDeny}, true, run, Verdict{Decision: Allow, Source: "flag", Rule: "--yes"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := &RuleGate{Rules: tc.rules, AutoApproveTools: tc.yes}
			if tc.prompter != nil {
				g.Prompter = tc.prompter
			}
			got, err := g.Decide(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("verdict = %+v\nwant      %+v", got, tc.want)
			}
			if tc.prompter != nil {
				tc.prompter.Verify(t, tc.asks)
			}
		})
	}
}

func TestNoRuleMessageNamesTheRule(t *testing.T) {
	t.Parallel()
	got := NoRuleMessage(Request{GateID: "vault.read:NPM_TOKEN", Subject: "mcp:github"})
	want := "vault.read:NPM_TOKEN for mcp:github is denied: no rule allows it and hush cannot ask here. To allow it, add to config.toml:\n\n" +
		"[[rules]]\ngate = \"vault.read:NPM_TOKEN\"\nsubject = \"mcp:github\"\ndecision = \"allow\""
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestSessionChoiceIsRemembered(t *testing.T) {
	t.Parallel()
	p := &fakePrompter{choice: ChoiceAllowSession}
	g := &RuleGate{Prompter: p}
	req := Request{GateID: "vault.read:A", Subject: "bash"}
	for i := 0; i < 3; i++ {
		v, err := g.Decide(context.Background(), req)
		if err != nil || v.Decision != Allow {
			t.Fatalf("decision %d = %+v, %v", i, v, err)
		}
	}
	p.Verify(t, 1)
	// Another subject is asked again: a session choice is per gate and subject.
	if _, err := g.Decide(context.Background(), Request{GateID: "vault.read:A", Subject: "background"}); err != nil {
		t.Fatal(err)
	}
	p.Verify(t, 2)
	// Allow once is not remembered.
	once := &fakePrompter{choice: ChoiceAllowOnce}
	g2 := &RuleGate{Prompter: once}
	g2.Decide(context.Background(), req)
	g2.Decide(context.Background(), req)
	once.Verify(t, 2)
}

func TestPrompterErrorIsAnError(t *testing.T) {
	t.Parallel()
	g := &RuleGate{Prompter: &fakePrompter{err: errors.New("terminal gone")}}
	_, err := g.Decide(context.Background(), Request{GateID: "tool.run:bash", Subject: "bash"})
	if err == nil || err.Error() != "ask about tool.run:bash for bash: terminal gone" {
		t.Fatalf("err = %v", err)
	}
}

func TestAuditRecordsEveryDecision(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", auditlog.FileName)
	log := auditlog.Open(path)
	g := Audited(&RuleGate{Rules: []Rule{{Gate: "tool.run:*", Subject: "*", Decision: Allow}, {Gate: "vault.read:B", Subject: "*", Decision: Deny}}, Prompter: &fakePrompter{choice: ChoiceAllowOnce}}, log, "s1")
	reqs := []Request{
		{GateID: "tool.run:bash", Subject: "bash", Turn: 1},
		{GateID: "vault.read:A", Subject: "bash", Turn: 1},
		{GateID: "vault.read:B", Subject: "bash", Turn: 2},
	}
	for _, r := range reqs {
		if _, err := g.Decide(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	entries, _, err := auditlog.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, strings.Join([]string{e.Session, e.Tool, e.Gate, string(e.Decision), e.Source, e.Rule}, "|"))
		if e.Time.IsZero() {
			t.Error("entry without time")
		}
	}
	want := []string{
		"s1|bash|tool.run:bash|allow|rule|allow tool.run:* for *",
		"s1|bash|vault.read:A|allow|prompt|allow once",
		"s1|bash|vault.read:B|deny|rule|deny vault.read:B for *",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit log mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}

func TestUnwritableAuditDenies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := Audited(&RuleGate{Rules: []Rule{{Gate: "*", Subject: "*", Decision: Allow}}}, auditlog.Open(filepath.Join(blocker, "audit.jsonl")), "")
	v, err := g.Decide(context.Background(), Request{GateID: "vault.read:A", Subject: "bash"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Decision != Deny || !strings.HasPrefix(v.Message, "denied because the audit log cannot be written") {
		t.Fatalf("verdict = %+v", v)
	}
}

func TestCallTimeout(t *testing.T) {
	t.Parallel()
	const m = time.Minute
	cases := []struct {
		configured, fallback, max time.Duration
		seconds                   int
		want                      time.Duration
	}{
		{0, 2 * m, 0, 0, 2 * m},
		{5 * m, 2 * m, 0, 0, 5 * m},
		{5 * m, 2 * m, 0, 30, 30 * time.Second},
		{0, 2 * m, 10 * m, 3600, 10 * m},
		{20 * m, 2 * m, 10 * m, 0, 10 * m},
	}
	for _, c := range cases {
		if got := CallTimeout(c.configured, c.fallback, c.max, c.seconds); got != c.want {
			t.Errorf("CallTimeout(%v, %v, %v, %d) = %v, want %v", c.configured, c.fallback, c.max, c.seconds, got, c.want)
		}
	}
}
