package executor

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/hushcli/hush/executor/auditlog"
)

// Decision is what the PermissionGate says about one request. It is the
// audit log's type, so that leaf package records it without importing the
// gate.
type Decision = auditlog.Decision

const (
	Allow = auditlog.Allow
	Deny  = auditlog.Deny
	Ask   = auditlog.Ask
)

// Gate ids. A tool run is "tool.run:<tool>"; a vault read is
// "vault.read:<NAME>". Subjects are tool names: "bash", "background",
// "dockerbash", "mcp:<server>".
const (
	GateToolRun   = "tool.run:"
	GateVaultRead = "vault.read:"
)

// Request is one question to the gate.
type Request struct {
	GateID  string // "vault.read:GITHUB_TOKEN"
	Subject string // "bash"
	Turn    int
	// Detail is shown to a person deciding (e.g. the command about to run).
	// It is never a secret value.
	Detail string
}

// Verdict is the gate's answer and where it came from, for the audit log.
type Verdict struct {
	Decision Decision
	// Source is "rule", "session", "prompt", "flag" or "default".
	Source string
	// Rule is the rule that decided, as "decision gate subject".
	Rule string
	// Message explains a denial to the model and the user.
	Message string
}

// Gate decides whether a subject may pass a gate. An installation can
// replace hush's RuleGate with its own.
type Gate interface {
	Decide(ctx context.Context, req Request) (Verdict, error)
}

// Choice is a person's answer to an ask.
type Choice int

const (
	ChoiceDeny Choice = iota
	ChoiceAllowOnce
	ChoiceAllowSession
)

// Prompter asks a person. hush's is a huh form on the terminal; it is nil
// when hush cannot prompt (no terminal, `hush run`, CI).
type Prompter interface {
	Confirm(ctx context.Context, req Request) (Choice, error)
}

// Rule is one configured gate rule; Gate and Subject are globs.
type Rule struct {
	Gate, Subject string
	Decision      Decision
}

func (r Rule) String() string { return string(r.Decision) + " " + r.Gate + " for " + r.Subject }

func (r Rule) matches(req Request) bool {
	subj := r.Subject
	if subj == "" {
		subj = "*"
	}
	g, err1 := path.Match(r.Gate, req.GateID)
	s, err2 := path.Match(subj, req.Subject)
	return err1 == nil && err2 == nil && g && s
}

// ErrDenied is wrapped by every denial error.
var ErrDenied = errors.New("permission denied")

// RuleGate is hush's PermissionGate: configured rules (deny beats allow
// beats ask), then choices made earlier in this session, then a person, or —
// when nobody can be asked — a denial that names the rule to add.
type RuleGate struct {
	Rules    []Rule
	Prompter Prompter // nil: non-interactive
	// AutoApproveTools approves asks for tool.run:* (the --yes flag). It
	// never approves a vault.read:* ask.
	AutoApproveTools bool

	mu      sync.Mutex
	session map[[2]string]bool
}

// Decide implements Gate.
func (g *RuleGate) Decide(ctx context.Context, req Request) (Verdict, error) {
	var allow, ask *Rule
	for i := range g.Rules {
		r := &g.Rules[i]
		if !r.matches(req) {
			continue
		}
		switch r.Decision {
		case Deny:
			return Verdict{Decision: Deny, Source: "rule", Rule: r.String(),
				Message: fmt.Sprintf("%s for %s is denied by a rule in config.toml (%s)", req.GateID, req.Subject, r)}, nil
		case Allow:
			if allow == nil {
				allow = r
			}
		case Ask:
			if ask == nil {
				ask = r
			}
		}
	}
	if allow != nil && ask == nil {
		return Verdict{Decision: Allow, Source: "rule", Rule: allow.String()}, nil
	}
	key := [2]string{req.GateID, req.Subject}
	g.mu.Lock()
	remembered := g.session[key]
	g.mu.Unlock()
	if remembered {
		return Verdict{Decision: Allow, Source: "session"}, nil
	}
	if g.AutoApproveTools && strings.HasPrefix(req.GateID, GateToolRun) {
		return Verdict{Decision: Allow, Source: "flag", Rule: "--yes"}, nil
	}
	if g.Prompter == nil {
		return Verdict{Decision: Deny, Source: "default", Message: NoRuleMessage(req)}, nil
	}
	choice, err := g.Prompter.Confirm(ctx, req)
	if err != nil {
		return Verdict{}, fmt.Errorf("ask about %s for %s: %w", req.GateID, req.Subject, err)
	}
	switch choice {
	case ChoiceAllowSession:
		g.mu.Lock()
		if g.session == nil {
			g.session = map[[2]string]bool{}
		}
		g.session[key] = true
		g.mu.Unlock()
		return Verdict{Decision: Allow, Source: "prompt", Rule: "allow for this session"}, nil
	case ChoiceAllowOnce:
		return Verdict{Decision: Allow, Source: "prompt", Rule: "allow once"}, nil
	default:
		return Verdict{Decision: Deny, Source: "prompt", Message: fmt.Sprintf("%s for %s was denied by the user", req.GateID, req.Subject)}, nil
	}
}

// NoRuleMessage is the non-interactive denial: it names the exact rule that
// would allow the request.
func NoRuleMessage(req Request) string {
	return fmt.Sprintf("%s for %s is denied: no rule allows it and hush cannot ask here. To allow it, add to config.toml:\n\n"+
		"[[rules]]\ngate = %q\nsubject = %q\ndecision = \"allow\"", req.GateID, req.Subject, req.GateID, req.Subject)
}
