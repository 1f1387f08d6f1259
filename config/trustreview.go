package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrTrustNeedsTerminal is what `hush trust` says when no person can confirm.
var ErrTrustNeedsTerminal = errors.New("trusting a project needs you at a terminal to confirm, and there is none here; nothing was changed")

// DescribeProject lists what a project config would add, for review. An
// MCP env value that is a literal credential (isLiteral) is not shown.
func DescribeProject(c Config, isLiteral func(name, value string) bool) []string {
	var out []string
	for _, r := range c.Rules {
		subj := r.Subject
		if subj == "" {
			subj = "*"
		}
		out = append(out, fmt.Sprintf("rule: %s %s for %s", r.Decision, r.Gate, subj))
	}
	for _, n := range slices.Sorted(maps.Keys(c.MCP)) {
		s := c.MCP[n]
		line := fmt.Sprintf("MCP server %s: %s %s", n, s.Command, strings.Join(s.Args, " "))
		if len(s.Env) > 0 {
			var env []string
			for k, v := range s.Env {
				if refs, _ := References(v); len(refs) == 0 && (isLiteral == nil || isLiteral(k, v)) {
					v = "<a literal credential, not shown>"
				}
				env = append(env, k+"="+v)
			}
			slices.Sort(env)
			line += " with env " + strings.Join(env, " ")
		}
		out = append(out, line)
	}
	for _, n := range slices.Sorted(maps.Keys(c.Tools)) {
		line := fmt.Sprintf("settings for the %s tool", n)
		if a := c.Tools[n].NetworkAllow; len(a) > 0 {
			line += ", letting it reach " + strings.Join(a, ", ")
		}
		out = append(out, line)
	}
	if len(c.Network.Allow) > 0 {
		out = append(out, "host tools may reach "+strings.Join(c.Network.Allow, ", ")+" (loopback and private addresses included where listed)")
	}
	if c.Turn.System != "" {
		out = append(out, "a system prompt for the model")
	}
	if c.Turn.MaxSteps != 0 {
		out = append(out, fmt.Sprintf("max %d steps per turn", c.Turn.MaxSteps))
	}
	if len(out) == 0 {
		out = append(out, "nothing beyond what already applies")
	}
	return out
}
