package executor

import (
	"context"
	"testing"
)

// A Preview's Default decides only where no rule does: a routine read
// passes without asking, an explicit ask or deny rule still wins, and a
// write outside the project is refused even with --yes or a session choice.
func TestGateDefaults(t *testing.T) {
	read := Request{GateID: "tool.run:read", Subject: "read", Path: "/p/a", Default: Allow, DefaultReason: "read inside the project"}
	write := Request{GateID: "tool.run:write", Subject: "write", Path: "/etc/x", Default: Deny, DefaultReason: "/etc/x is outside the project directory"}
	tests := []struct {
		name  string
		rules []Rule
		p     *fakePrompter
		yes   bool
		req   Request
		want  Verdict
		asks  int
	}{
		{"routine read", nil, &fakePrompter{}, false, read, Verdict{Decision: Allow, Source: "default", Rule: "read inside the project"}, 0},
		{"deny rule beats a routine read", []Rule{{Gate: "tool.run:read", Subject: "*", Decision: Deny}}, &fakePrompter{}, false, read,
			Verdict{Decision: Deny, Source: "rule", Rule: "deny tool.run:read for *", Message: "tool.run:read for read is denied by a rule in config.toml (deny tool.run:read for *)"}, 0},
		{"ask rule asks about a routine read", []Rule{{Gate: "tool.run:read", Subject: "*", Decision: Ask}}, &fakePrompter{choice: ChoiceAllowOnce}, false, read,
			Verdict{Decision: Allow, Source: "prompt", Rule: "allow once"}, 1},
		{"write outside, --yes", nil, &fakePrompter{choice: ChoiceAllowOnce}, true, write,
			Verdict{Decision: Deny, Source: "default", Message: "/etc/x is outside the project directory. " + NoRuleMessage(write)}, 0},
		{"write outside, allowed by a rule", []Rule{{Gate: "tool.run:write", Subject: "write", Decision: Allow}}, nil, false, write,
			Verdict{Decision: Allow, Source: "rule", Rule: "allow tool.run:write for write"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &RuleGate{Rules: tt.rules, AutoApproveTools: tt.yes}
			if tt.p != nil {
				g.Prompter = tt.p
			}
			v, err := g.Decide(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if v != tt.want {
				t.Errorf("verdict = %+v\nwant      %+v", v, tt.want)
			}
			if tt.p != nil {
				tt.p.Verify(t, tt.asks)
			}
		})
	}
}

// "Allow for this session" on a file is remembered for that path, or for
// its directory, not for every call of the tool.
func TestSessionChoicePerPath(t *testing.T) {
	edit := func(p string) Request { return Request{GateID: "tool.run:edit", Subject: "edit", Path: p} }
	p := &fakePrompter{choice: ChoiceAllowSession}
	g := &RuleGate{Prompter: p}
	ctx := context.Background()
	if v, _ := g.Decide(ctx, edit("/p/src/a.go")); v.Rule != "allow for this session: /p/src/a.go" {
		t.Fatalf("first: %+v", v)
	}
	if v, _ := g.Decide(ctx, edit("/p/src/a.go")); v.Source != "session" {
		t.Errorf("same path asked again: %+v", v)
	}
	p.choice = ChoiceDeny
	if v, _ := g.Decide(ctx, edit("/p/src/b.go")); v.Decision != Deny {
		t.Errorf("another path passed on the first path's choice: %+v", v)
	}
	p.choice = ChoiceAllowSessionDir
	if v, _ := g.Decide(ctx, edit("/p/lib/c.go")); v.Rule != "allow for this session: /p/lib/" {
		t.Fatalf("dir choice: %+v", v)
	}
	p.choice = ChoiceDeny
	for _, path := range []string{"/p/lib/d.go", "/p/lib/sub/e.go"} {
		if v, _ := g.Decide(ctx, edit(path)); v.Source != "session" {
			t.Errorf("%s not covered by the directory choice: %+v", path, v)
		}
	}
	if v, _ := g.Decide(ctx, edit("/p/libx/f.go")); v.Decision != Deny {
		t.Errorf("a sibling directory with the same prefix passed: %+v", v)
	}
	p.Verify(t, 4)
}
