package executor

import (
	"encoding/json"
	"path"
	"sort"
	"strings"

	"github.com/hushcli/hush/config"
	"mvdan.cc/sh/v3/syntax"
)

// CommandRule is what "allow for this session" or a saved rule records for
// a call that runs a command: the exact command, or a prefix of words that
// a simple command must start with — Claude Code's Bash(npm test:*). It is
// shown to the person deciding as Tool(command) or Tool(prefix:*), and
// written in config.toml as command = "prefix:*" or command = "command".
type CommandRule struct {
	Tool   string
	Text   string // the exact command, or the prefix words joined by one space
	Prefix bool
}

func (r CommandRule) String() string { return r.Tool + "(" + r.Pattern() + ")" }

// Pattern is the rule as config.toml's command key holds it: "go test:*"
// or an exact command.
func (r CommandRule) Pattern() string {
	if r.Prefix {
		return r.Text + ":*"
	}
	return r.Text
}

// ParseCommandPattern reads config.toml's command = "…" for tool: a
// pattern ending in ":*" is a prefix of words, anything else the exact
// command.
func ParseCommandPattern(tool, pattern string) CommandRule {
	pattern = strings.TrimSpace(pattern)
	if p, ok := strings.CutSuffix(pattern, ":*"); ok {
		return CommandRule{Tool: tool, Text: strings.Join(strings.Fields(p), " "), Prefix: true}
	}
	return CommandRule{Tool: tool, Text: pattern}
}

// ParseToolPattern reads the --allow flag's TOOL or TOOL(PATTERN), e.g.
// bash(npm test:*); ok is false for anything else.
func ParseToolPattern(s string) (tool string, rule *CommandRule, ok bool) {
	s = strings.TrimSpace(s)
	name, rest, paren := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if name == "" || strings.ContainsAny(name, " \t)") {
		return "", nil, false
	}
	if !paren {
		return name, nil, true
	}
	inner, ok := strings.CutSuffix(rest, ")")
	if !ok || strings.TrimSpace(inner) == "" || strings.TrimSpace(inner) == ":*" {
		return "", nil, false
	}
	r := ParseCommandPattern(name, inner)
	return name, &r, true
}

// simpleCmd is one simple command of a parsed command line: its words,
// and whether each is a literal (no expansion, no glob, no brace).
type simpleCmd struct {
	words   []string
	literal []bool
}

// parseShell parses cmd as bash, the shell hush's bash tool runs.
func parseShell(cmd string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false)).Parse(strings.NewReader(cmd), "")
}

// simpleCommands splits cmd into its simple commands (through pipelines,
// &&, ||, ;, newlines, subshells and { } groups). ok is false when cmd
// holds anything no prefix rule may cover: a parse error, a command,
// process or arithmetic substitution, a parameter expansion that can run
// code (${!x}, ${x@P}, ${a[i]}, slices), a redirection that writes outside
// the project, a function definition, a control structure, a background
// job, an assignment before a command, an eval / source / . / exec, or a
// command name that is not a literal word.
func simpleCommands(cmd string) (cmds []simpleCmd, ok bool) {
	f, err := parseShell(cmd)
	if err != nil {
		return nil, false
	}
	ok = true
	syntax.Walk(f, func(n syntax.Node) bool {
		if !ok || n == nil { // Walk ends each node's children with nil
			return ok
		}
		switch n := n.(type) {
		case *syntax.File, *syntax.Word, *syntax.Lit, *syntax.SglQuoted, *syntax.DblQuoted, *syntax.BraceExp:
		case *syntax.Stmt:
			if n.Background || n.Coprocess || n.Disown {
				ok = false
			}
			for _, r := range n.Redirs {
				if !redirectStaysInProject(r) {
					ok = false
				}
			}
		case *syntax.BinaryCmd:
			switch n.Op {
			case syntax.AndStmt, syntax.OrStmt, syntax.Pipe, syntax.PipeAll:
			default:
				ok = false
			}
		case *syntax.Subshell, *syntax.Block, *syntax.TimeClause, *syntax.Redirect:
		case *syntax.CallExpr:
			if len(n.Assigns) > 0 || len(n.Args) == 0 {
				ok = false
				return false
			}
			var sc simpleCmd
			for _, w := range n.Args {
				v, lit := wordValue(w)
				sc.words = append(sc.words, v)
				sc.literal = append(sc.literal, lit)
			}
			if !sc.literal[0] {
				ok = false
				return false
			}
			switch sc.words[0] {
			case "eval", "source", ".", "exec", "builtin", "command", "enable", "alias", "trap":
				ok = false
				return false
			}
			cmds = append(cmds, sc)
		case *syntax.ParamExp:
			if !harmlessParam(n) {
				ok = false
			}
		case *syntax.Comment:
		default:
			// Command, process and arithmetic substitution, extglobs,
			// declarations, functions, if/for/while/case, [[ ]], let,
			// coprocesses: not a simple command a prefix can describe.
			ok = false
		}
		return ok
	})
	if !ok || len(cmds) == 0 {
		return nil, false
	}
	return cmds, true
}

// harmlessParam accepts $NAME, ${NAME}, ${#NAME} and ${NAME:-word}: their
// value can only become words of the command they are in. Indirection,
// subscripts and slices (evaluated as arithmetic, which can run a
// substitution stored in a variable) and the other operators (${x@P}
// expands a prompt string) are refused.
func harmlessParam(p *syntax.ParamExp) bool {
	if p.Param == nil || p.Excl || p.Width || p.IsSet || p.Flags != nil || p.NestedParam != nil ||
		p.Index != nil || p.Slice != nil || p.Repl != nil || p.Names != 0 || len(p.Modifiers) > 0 {
		return false
	}
	if p.Exp == nil {
		return true
	}
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		return !p.Length
	}
	return false
}

// wordValue is w's text with quotes removed, and whether it is a literal:
// no expansion, no unquoted glob, brace or tilde, no backslash.
func wordValue(w *syntax.Word) (string, bool) {
	var b strings.Builder
	lit := true
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, `*?[]{}\`) || (i == 0 && strings.HasPrefix(p.Value, "~")) {
				lit = false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				lit = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				lit = false
			}
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok && !strings.Contains(l.Value, `\`) {
					b.WriteString(l.Value)
				} else {
					lit = false
				}
			}
		default:
			lit = false
		}
	}
	return b.String(), lit
}

// redirectStaysInProject accepts a redirection that reads or writes only
// inside the project or to a harmless device: descriptor copies (2>&1,
// >&2, <&0, 3>&-), /dev/null, /dev/stdout, /dev/stderr, here-documents and
// here-strings, and a literal relative path that does not climb out
// (build/log.txt, not ../x, /etc/x or ~/.bashrc).
func redirectStaysInProject(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true // their words are walked for substitutions
	case syntax.DplIn, syntax.DplOut:
		v, lit := wordValue(r.Word)
		if !lit || v == "" {
			return false
		}
		return v == "-" || strings.Trim(v, "0123456789") == ""
	}
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		return false // {varname}> allocates a descriptor into a variable
	}
	v, lit := wordValue(r.Word)
	if !lit || v == "" {
		return false
	}
	switch v {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	if path.IsAbs(v) || strings.HasPrefix(v, "~") {
		return false
	}
	c := path.Clean(v)
	return c != ".." && !strings.HasPrefix(c, "../")
}

// covers reports whether r covers the simple command sc: a prefix rule
// whose words are sc's first words, each a literal; an exact rule equal
// to sc's words joined by one space.
func (r CommandRule) covers(sc simpleCmd) bool {
	p := strings.Fields(r.Text)
	if !r.Prefix {
		if len(p) != len(sc.words) {
			return false
		}
	}
	if len(p) == 0 || len(sc.words) < len(p) {
		return false
	}
	for i := range p {
		if !sc.literal[i] || sc.words[i] != p[i] {
			return false
		}
	}
	return true
}

// CommandAllowed reports whether rules allow running cmd: an exact rule
// equal to the whole command (blanks at its ends ignored), or — for a
// command made of simple commands joined by pipes, &&, ||, ; or newlines,
// in subshells or groups — every simple command covered by one of rules.
// A command holding anything simpleCommands refuses (a $(…) substitution,
// a redirection out of the project, eval …) is allowed only by an exact
// rule.
func CommandAllowed(cmd string, rules []CommandRule) bool {
	cmd = strings.TrimSpace(cmd)
	for _, r := range rules {
		if !r.Prefix && r.Text == cmd {
			return true
		}
	}
	if len(rules) == 0 {
		return false
	}
	cmds, ok := simpleCommands(cmd)
	if !ok {
		return false
	}
	for _, sc := range cmds {
		covered := false
		for _, r := range rules {
			if r.covers(sc) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

// CommandTouches reports whether any simple command of cmd is covered by
// r (or cmd is r's exact command): what a deny or ask rule with a command
// matches. A command that does not parse into simple commands is matched
// on its words, so that hiding a denied command in a substitution does not
// get it past the rule.
func CommandTouches(cmd string, r CommandRule) bool {
	cmd = strings.TrimSpace(cmd)
	if !r.Prefix && r.Text == cmd {
		return true
	}
	if cmds, ok := simpleCommands(cmd); ok {
		for _, sc := range cmds {
			if r.covers(sc) {
				return true
			}
		}
		return false
	}
	p := strings.Fields(r.Text)
	w := strings.FieldsFunc(cmd, func(c rune) bool { return strings.ContainsRune(" \t\n;&|()`$<>'\"{}", c) })
	for i := 0; i+len(p) <= len(w) && len(p) > 0; i++ {
		match := true
		for j := range p {
			if w[i+j] != p[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// Allows reports whether the rule alone covers running cmd.
func (r CommandRule) Allows(cmd string) bool { return CommandAllowed(cmd, []CommandRule{r}) }

// textFilters are commands that only read and print: after a pipe their
// options vary with every call (tail -20, head -n 5, grep -c x), so the
// rule offered for them is the command's name alone.
var textFilters = map[string]bool{
	"head": true, "tail": true, "grep": true, "egrep": true, "fgrep": true, "rg": true, "wc": true,
	"sort": true, "uniq": true, "cut": true, "tr": true, "cat": true, "nl": true, "column": true,
}

// runners are commands whose arguments are another program (or its code):
// a rule for one of them by name alone would allow anything, so a rule is
// offered for them only with the words that say what they run.
var runners = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "env": true, "sudo": true, "xargs": true,
	"nohup": true, "timeout": true, "time": true, "nice": true, "ssh": true, "find": true, "awk": true,
	"sed": true, "perl": true, "ruby": true, "node": true, "python": true, "python3": true, "php": true,
	"watch": true, "parallel": true, "doas": true, "su": true, "chroot": true, "strace": true,
}

// suggestFor is the rule offered for one simple command: its first two
// words when the second is a subcommand-like word (npm test, go test,
// cargo build), "python3 -m unittest" for a module run, the name alone for
// a text filter or a one-word command that runs nothing else, and
// otherwise the exact words (ok false when they are not literal).
func suggestFor(tool string, sc simpleCmd) (CommandRule, bool) {
	w := sc.words
	for i := range w {
		if !sc.literal[i] && i < 3 {
			w = w[:i]
			break
		}
	}
	switch {
	case len(w) == 0:
		return CommandRule{}, false
	case len(w) >= 3 && strings.HasPrefix(w[0], "python") && w[1] == "-m" && subcommandLike(w[2]):
		return CommandRule{Tool: tool, Text: strings.Join(w[:3], " "), Prefix: true}, true
	case runners[w[0]]:
		return CommandRule{}, false // only the exact whole command
	case len(w) >= 2 && subcommandLike(w[1]):
		return CommandRule{Tool: tool, Text: w[0] + " " + w[1], Prefix: true}, true
	case textFilters[w[0]], len(sc.words) == 1:
		return CommandRule{Tool: tool, Text: w[0], Prefix: true}, true
	case len(w) == len(sc.words):
		return CommandRule{Tool: tool, Text: strings.Join(w, " ")}, true
	}
	return CommandRule{}, false
}

// subcommandLike: a word such as test, build, run-script — not an option,
// a path, an assignment or a pattern.
func subcommandLike(s string) bool {
	return s != "" && !strings.HasPrefix(s, "-") && !strings.ContainsAny(s, "/=.:@~*?[]{}$\\")
}

// SuggestRules returns the rules offered for running cmd with tool: one
// per distinct simple command (suggestFor), so that accepting them allows
// this command and its variations; for a command no prefix rule may cover
// (simpleCommands), the exact command alone.
func SuggestRules(tool, cmd string) []CommandRule {
	cmd = strings.TrimSpace(cmd)
	exact := []CommandRule{{Tool: tool, Text: cmd}}
	cmds, ok := simpleCommands(cmd)
	if !ok {
		return exact
	}
	var out []CommandRule
	seen := map[CommandRule]bool{}
	for _, sc := range cmds {
		r, ok := suggestFor(tool, sc)
		if !ok {
			return exact
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	if !CommandAllowed(cmd, out) {
		return exact
	}
	return out
}

// RulesString names rules for a person: "bash(go test:*) and bash(tail:*)".
func RulesString(rs []CommandRule) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// CallSummary is what the person deciding on a tool call is shown besides
// the tool's name: the command it runs, verbatim, and the secrets it would
// receive, by name.
type CallSummary struct {
	Command string
	// Secrets are the names the call asks for: its "secrets" argument (or
	// the tool's configured secrets when it has none) and every ${NAME} in
	// its "env" values, sorted. Each is still read through the gate.
	Secrets []string
	// HasCommand: the call runs a command (a "script" or "command"
	// argument), so a session choice is a CommandRule.
	HasCommand bool
}

// SummarizeCall reads the arguments the process tools share (script or
// command, env, secrets); configured is the tool's configured secrets.
func SummarizeCall(args json.RawMessage, configured []string) CallSummary {
	var p struct {
		Script  *string           `json:"script"`
		Command *string           `json:"command"`
		Env     map[string]string `json:"env"`
		Secrets *[]string         `json:"secrets"`
	}
	var s CallSummary
	if json.Unmarshal(args, &p) != nil {
		return s
	}
	switch {
	case p.Script != nil:
		s.Command, s.HasCommand = *p.Script, true
	case p.Command != nil:
		s.Command, s.HasCommand = *p.Command, true
	}
	names := map[string]bool{}
	if p.Secrets != nil {
		for _, n := range *p.Secrets {
			names[n] = true
		}
	} else if s.HasCommand {
		for _, n := range configured {
			names[n] = true
		}
	}
	for _, v := range p.Env {
		refs, _ := config.References(v)
		for _, n := range refs {
			names[n] = true
		}
	}
	for n := range names {
		s.Secrets = append(s.Secrets, n)
	}
	sort.Strings(s.Secrets)
	return s
}
