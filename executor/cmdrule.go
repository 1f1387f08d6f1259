package executor

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/hushcli/hush/config"
)

// CommandRule is what "allow for this session" records for a call that
// runs a command: the exact command, or a prefix of words that later
// simple commands must start with — Claude Code's Bash(npm test:*). It is
// shown to the person deciding as Tool(command) or Tool(prefix:*).
type CommandRule struct {
	Tool   string
	Text   string // the exact command, or the prefix words joined by one space
	Prefix bool
}

func (r CommandRule) String() string {
	if r.Prefix {
		return r.Tool + "(" + r.Text + ":*)"
	}
	return r.Tool + "(" + r.Text + ")"
}

// shellSpecial marks a command that is not one simple command: anything
// that chains, pipes, substitutes, redirects, backgrounds, globs or spans
// lines. Such a command is only ever allowed exactly as it was shown.
const shellSpecial = ";&|<>`$()\n\r\\'\"*?[]{}#~!"

// simpleWords returns the words of a simple command (no shell syntax but
// blanks between words), or nil.
func simpleWords(cmd string) []string {
	if strings.ContainsAny(cmd, shellSpecial) {
		return nil
	}
	return strings.Fields(cmd)
}

// SuggestRule returns the session rule offered for running cmd with tool:
// for a simple command, its first two words ("npm test", "go test") or
// its one word, unless the second is a path or option the rule would be
// too narrow or too wide to read (then the exact command); for anything
// else the exact command.
func SuggestRule(tool, cmd string) CommandRule {
	cmd = strings.TrimSpace(cmd)
	w := simpleWords(cmd)
	switch {
	case len(w) == 0:
		return CommandRule{Tool: tool, Text: cmd}
	case len(w) == 1:
		return CommandRule{Tool: tool, Text: w[0], Prefix: true}
	case strings.HasPrefix(w[1], "-") || strings.ContainsAny(w[1], "/="):
		return CommandRule{Tool: tool, Text: strings.Join(w, " ")}
	}
	return CommandRule{Tool: tool, Text: w[0] + " " + w[1], Prefix: true}
}

// Allows reports whether the rule covers running cmd: the same command
// (blanks at the ends ignored), or a simple command whose words start with
// the prefix's words. "npm test; rm -rf ~" is not a simple command, so no
// prefix rule covers it.
func (r CommandRule) Allows(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	if !r.Prefix {
		return cmd == r.Text
	}
	w := simpleWords(cmd)
	p := strings.Fields(r.Text)
	if len(w) < len(p) {
		return false
	}
	for i := range p {
		if w[i] != p[i] {
			return false
		}
	}
	return true
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
