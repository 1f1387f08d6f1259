package executor

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
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
	// GateToolKeep is "tool.keep:<tool>": a process that outlives hush
	// (background keep), and with it its sandbox. --yes never approves it.
	GateToolKeep = "tool.keep:"
)

// Request is one question to the gate.
type Request struct {
	GateID  string // "vault.read:GITHUB_TOKEN"
	Subject string // "bash"
	Turn    int
	// Detail is shown to a person deciding (e.g. the command about to run).
	// It is never a secret value.
	Detail string
	// Path, Diff, Default and DefaultReason come from the tool's Preview
	// (file tools): the resolved path the call touches, the complete diff
	// of what it will write, and the decision when no rule decides.
	Path          string
	Diff          string
	Default       Decision
	DefaultReason string
	// Command is the command a process tool's call runs, verbatim, and
	// HasCommand says there is one: the person deciding sees it whole,
	// and "allow for this session" records SuggestRules(Subject, Command)
	// instead of allowing every later call. Dir is where it runs; Secrets
	// are the names the call would receive (each still gated).
	Command    string
	HasCommand bool
	Dir        string
	Secrets    []string
	// CanSave: the gate can save the command's rules for the project
	// (ChoiceAllowProject); set by RuleGate before it asks.
	CanSave bool
	// HTTP is what an http call will send, for the person deciding.
	HTTP *HTTPCall
}

// HTTPCall is an http tool call as its approval shows it: the method, the
// URL, every header (a ${NAME} stays the name: values are never shown) and
// the body.
type HTTPCall struct {
	Method, URL string
	Headers     [][2]string
	Body        string
	Host        string
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
	// Stop says the person ended the turn at this approval (Esc,
	// Ctrl-C): the call is denied and nothing more runs in the turn.
	Stop bool
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
	// ChoiceAllowSessionDir allows, for this session, every later call of
	// the tool on a path in the directory of the request's Path.
	ChoiceAllowSessionDir
	// ChoiceAllowProject allows the command's rules (SuggestRules) for
	// this session and saves them to the user's config.toml under the
	// project (RuleGate.SaveRules), so later sessions there allow them too.
	ChoiceAllowProject
	// ChoiceStop denies and ends the turn (Esc, Ctrl-C at the prompt).
	ChoiceStop
	// ChoiceDenyReason denies and tells the model why (Answer.Reason).
	ChoiceDenyReason
)

// Answer is a person's answer: the choice and, for ChoiceDenyReason, the
// line they typed for the model.
type Answer struct {
	Choice Choice
	Reason string
}

// Prompter asks a person. hush's is a huh form on the terminal; it is nil
// when hush cannot prompt (no terminal, `hush run`, CI).
type Prompter interface {
	Confirm(ctx context.Context, req Request) (Answer, error)
}

// Rule is one configured gate rule; Gate and Subject are globs. A rule
// with a Command applies only to calls that run a command: an allow rule
// allows a command every simple command of which is covered by the allow
// rules that match (CommandAllowed), a deny or ask rule matches a command
// any part of which it covers (CommandTouches).
type Rule struct {
	Gate, Subject string
	Decision      Decision
	Command       *CommandRule
	// Flag: the rule came from --allow, not config.toml.
	Flag bool
}

func (r Rule) String() string {
	if r.Command != nil {
		return string(r.Decision) + " " + r.Command.String()
	}
	return string(r.Decision) + " " + r.Gate + " for " + r.Subject
}

func (r Rule) matches(req Request) bool {
	subj := r.Subject
	if subj == "" {
		subj = "*"
	}
	g, err1 := path.Match(r.Gate, req.GateID)
	s, err2 := path.Match(subj, req.Subject)
	if err1 != nil || err2 != nil || !g || !s {
		return false
	}
	if r.Command == nil {
		return true
	}
	if !req.HasCommand {
		return false
	}
	if r.Decision == Allow {
		return true // decided with the other allow rules, in Decide
	}
	return CommandTouches(req.Command, *r.Command)
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
	// SaveRules saves command rules "always in this project"
	// (ChoiceAllowProject): hush's own write of the user's config.toml,
	// never a tool's. Nil: the choice is not offered (Request.CanSave).
	SaveRules func([]CommandRule) error
	// AllowFlag names the flag that allows a command where nobody can be
	// asked ("--allow"), for the denial message; "" names config.toml only.
	AllowFlag string

	mu sync.Mutex
	// session holds choices made for this session, keyed by gate id,
	// subject and scope: "" for every call, else a path, or a directory
	// ending in a separator. commands holds the command rules chosen, by
	// gate id and subject.
	session  map[[3]string]bool
	commands map[[2]string][]CommandRule
}

// Decide implements Gate.
func (g *RuleGate) Decide(ctx context.Context, req Request) (Verdict, error) {
	var allow, ask *Rule
	var cmdRules []CommandRule
	var cmdFlag bool
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
			if r.Command != nil {
				cmdRules = append(cmdRules, *r.Command)
				cmdFlag = cmdFlag || r.Flag
				continue
			}
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
		src := "rule"
		if allow.Flag {
			src = "flag"
		}
		return Verdict{Decision: Allow, Source: src, Rule: allow.String()}, nil
	}
	if ask == nil && req.HasCommand && len(cmdRules) > 0 {
		if CommandAllowed(req.Command, cmdRules) {
			src := "rule"
			if cmdFlag {
				src = "flag"
			}
			return Verdict{Decision: Allow, Source: src, Rule: "allow " + RulesString(cmdRules)}, nil
		}
	}
	switch {
	case req.Default == Allow && ask == nil: // an ask rule still asks
		return Verdict{Decision: Allow, Source: "default", Rule: req.DefaultReason}, nil
	case req.Default == Deny:
		return Verdict{Decision: Deny, Source: "default", Message: req.DefaultReason + ". " + g.noRuleMessage(req)}, nil
	}
	if ask == nil && g.remembered(req, cmdRules) {
		return Verdict{Decision: Allow, Source: "session"}, nil
	}
	if g.AutoApproveTools && strings.HasPrefix(req.GateID, GateToolRun) {
		return Verdict{Decision: Allow, Source: "flag", Rule: "--yes"}, nil
	}
	if g.Prompter == nil {
		return Verdict{Decision: Deny, Source: "default", Message: g.noRuleMessage(req)}, nil
	}
	req.CanSave = g.SaveRules != nil && req.HasCommand && req.Path == "" && strings.HasPrefix(req.GateID, GateToolRun)
	ans, err := g.Prompter.Confirm(ctx, req)
	if err != nil {
		return Verdict{}, fmt.Errorf("ask about %s for %s: %w", req.GateID, req.Subject, err)
	}
	switch choice := ans.Choice; choice {
	case ChoiceAllowProject, ChoiceAllowSession, ChoiceAllowSessionDir:
		if req.HasCommand && req.Path == "" {
			crs := SuggestRules(req.Subject, req.Command)
			g.mu.Lock()
			if g.commands == nil {
				g.commands = map[[2]string][]CommandRule{}
			}
			k := [2]string{req.GateID, req.Subject}
			g.commands[k] = append(g.commands[k], crs...)
			g.mu.Unlock()
			if choice == ChoiceAllowProject && req.CanSave {
				if err := g.SaveRules(crs); err != nil {
					return Verdict{}, fmt.Errorf("save %s to config.toml: %w", RulesString(crs), err)
				}
				return Verdict{Decision: Allow, Source: "prompt", Rule: "allow in this project (saved): " + RulesString(crs)}, nil
			}
			return Verdict{Decision: Allow, Source: "prompt", Rule: "allow for this session: " + RulesString(crs)}, nil
		}
		scope := ""
		switch {
		case req.HTTP != nil:
			scope = "host:" + req.HTTP.Host
		case req.Path != "" && choice == ChoiceAllowSessionDir:
			scope = dirScope(req.Path)
		case req.Path != "":
			scope = req.Path
		}
		g.mu.Lock()
		if g.session == nil {
			g.session = map[[3]string]bool{}
		}
		g.session[[3]string{req.GateID, req.Subject, scope}] = true
		g.mu.Unlock()
		rule := "allow for this session"
		if scope != "" {
			rule += ": " + scope
		}
		return Verdict{Decision: Allow, Source: "prompt", Rule: rule}, nil
	case ChoiceAllowOnce:
		return Verdict{Decision: Allow, Source: "prompt", Rule: "allow once"}, nil
	case ChoiceStop:
		return Verdict{Decision: Deny, Source: "prompt", Stop: true, Message: StoppedMessage}, nil
	case ChoiceDenyReason:
		if r := strings.Join(strings.Fields(ans.Reason), " "); r != "" {
			return Verdict{Decision: Deny, Source: "prompt", Message: UserDeniedMessage(req) + ". The user's reason: " + r}, nil
		}
		return Verdict{Decision: Deny, Source: "prompt", Message: UserDeniedMessage(req)}, nil
	default:
		return Verdict{Decision: Deny, Source: "prompt", Message: UserDeniedMessage(req)}, nil
	}
}

// StoppedMessage is the result of a call the person stopped the turn at.
const StoppedMessage = "the user stopped the turn at this call's approval; it did not run"

// UserDeniedMessage is what the model is told when the person said no: one
// sentence, so the model neither retries blindly nor reads it as an error
// of its own.
func UserDeniedMessage(req Request) string {
	if name, ok := strings.CutPrefix(req.GateID, GateVaultRead); ok {
		return fmt.Sprintf("the user denied %s the secret %s; continue without it or ask the user", req.Subject, name)
	}
	return fmt.Sprintf("the user denied this %s call; do not run it again unchanged, ask the user or do something else", req.Subject)
}

// remembered reports whether a session choice covers req: one for every
// call of the tool, for req's exact path, or for a directory above it.
func (g *RuleGate) remembered(req Request, configured []CommandRule) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.session[[3]string{req.GateID, req.Subject, ""}] {
		return true
	}
	if req.HasCommand {
		// The session's rules together with the configured ones: a
		// pipeline one half of which was allowed today and the other
		// saved last week runs.
		crs := g.commands[[2]string{req.GateID, req.Subject}]
		return len(crs) > 0 && CommandAllowed(req.Command, append(slices.Clone(configured), crs...))
	}
	if req.HTTP != nil {
		return g.session[[3]string{req.GateID, req.Subject, "host:" + req.HTTP.Host}]
	}
	if req.Path == "" {
		return false
	}
	if g.session[[3]string{req.GateID, req.Subject, req.Path}] {
		return true
	}
	for d := filepath.Dir(req.Path); ; d = filepath.Dir(d) {
		if g.session[[3]string{req.GateID, req.Subject, strings.TrimSuffix(d, string(filepath.Separator)) + string(filepath.Separator)}] {
			return true
		}
		if d == filepath.Dir(d) {
			return false
		}
	}
}

// dirScope is the session scope for every path in p's directory.
func dirScope(p string) string {
	d := filepath.Dir(p)
	if !strings.HasSuffix(d, string(filepath.Separator)) {
		d += string(filepath.Separator)
	}
	return d
}

// DenialText is how a denial reaches the model and the transcript: one
// line, "denied: " and the gate's message with the rule to add written on
// that line ([[rules]] gate = … subject = … decision = …), so that the
// model reads one sentence and a person's display can still show the rule
// as a block (DenialParts).
func DenialText(message string) string {
	return "denied: " + strings.Join(strings.Fields(message), " ")
}

// denialRuleMark separates a denial's sentence from the rule to add.
const denialRuleMark = " To allow it, add to config.toml: "

// DenialParts splits a line made by DenialText into the sentence and the
// lines of the config.toml rule that would allow it (nil if it names none);
// ok is false for a line that is not a denial.
func DenialParts(line string) (sentence string, rule []string, ok bool) {
	rest, ok := strings.CutPrefix(line, "denied: ")
	if !ok {
		return "", nil, false
	}
	sentence, toml, found := strings.Cut(rest, denialRuleMark)
	if !found {
		return rest, nil, true
	}
	// "[[rules]] gate = "x" subject = "y" decision = "allow"" back into
	// lines, a blank line between two rules.
	toml = strings.ReplaceAll(toml, " [[rules]]", "\n\n[[rules]]")
	for _, key := range []string{" gate = ", " subject = ", " decision = ", " command = "} {
		toml = strings.ReplaceAll(toml, key, "\n"+strings.TrimPrefix(key, " "))
	}
	return sentence, strings.Split(toml, "\n"), true
}

// noRuleMessage is NoRuleMessage, for a command with the rules that
// would allow it: the --allow flag for each (when the gate has one) and
// the config.toml entries.
func (g *RuleGate) noRuleMessage(req Request) string {
	if !req.HasCommand || req.Path != "" || !strings.HasPrefix(req.GateID, GateToolRun) {
		return NoRuleMessage(req)
	}
	crs := SuggestRules(req.Subject, req.Command)
	var b strings.Builder
	fmt.Fprintf(&b, "%s for %s is denied: no rule allows this command and hush cannot ask here.", req.GateID, req.Subject)
	if g.AllowFlag != "" {
		b.WriteString(" To allow it for one run, pass")
		for _, cr := range crs {
			b.WriteString(" " + g.AllowFlag + " " + shellQuote(cr.String()))
		}
		b.WriteString(" (hush run).")
	}
	b.WriteString(" To allow it, add to config.toml:\n")
	for _, cr := range crs {
		fmt.Fprintf(&b, "\n[[rules]]\ngate = %q\nsubject = %q\ndecision = \"allow\"\ncommand = %q\n", req.GateID, req.Subject, cr.Pattern())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// shellQuote quotes s for a POSIX shell, for a flag shown to be pasted.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// NoRuleMessage is the non-interactive denial: it names the exact rule that
// would allow the request.
func NoRuleMessage(req Request) string {
	return fmt.Sprintf("%s for %s is denied: no rule allows it and hush cannot ask here. To allow it, add to config.toml:\n\n"+
		"[[rules]]\ngate = %q\nsubject = %q\ndecision = \"allow\"", req.GateID, req.Subject, req.GateID, req.Subject)
}
