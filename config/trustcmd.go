package config

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// ErrTrustNeedsTerminal is what `hush trust` says when no person can confirm.
var ErrTrustNeedsTerminal = errors.New("trusting a project needs you at a terminal to confirm, and there is none here; nothing was changed")

// Trust is `hush trust`: what it does to the trust store for the project
// at Dir, printing to Out.
type Trust struct {
	Store TrustStore
	Dir   string
	Out   io.Writer
	// Confirm asks the person at the controlling terminal; it returns
	// ErrTrustNeedsTerminal when there is none. Only a person may trust: a
	// tool has no controlling terminal, so it cannot widen its own gate.
	Confirm func(question string) (bool, error)
	// IsLiteralCredential decides which env values of an MCP server are
	// hidden in the review (tools.IsCredentialName / IsCredentialValue).
	IsLiteralCredential func(name, value string) bool
}

// Revoke stops trusting the project.
func (t Trust) Revoke() error {
	p, err := LoadProject(t.Dir)
	if err != nil {
		return err
	}
	rec, err := t.Store.Read()
	if err != nil {
		return err
	}
	dir := RealDir(t.Dir)
	if p != nil {
		dir = p.Dir
	}
	if _, ok := rec.Projects[dir]; !ok {
		fmt.Fprintf(t.Out, "%s was not trusted\n", dir)
		return nil
	}
	delete(rec.Projects, dir)
	if err := t.Store.Write(rec); err != nil {
		return err
	}
	fmt.Fprintf(t.Out, "no longer trusting %s\n", dir)
	return nil
}

// Grant shows what the project's .hush/config.toml would add and, once
// confirmed, records the file's SHA-256 for the project.
func (t Trust) Grant() error {
	p, err := LoadProject(t.Dir)
	if err != nil {
		return err
	}
	rec, err := t.Store.Read()
	if err != nil {
		return err
	}
	if p == nil {
		fmt.Fprintf(t.Out, "no %s in %s; nothing to trust\n", ProjectFile, t.Dir)
		return nil
	}
	if e, ok := rec.Projects[p.Dir]; ok && e.SHA256 == p.SHA256 {
		fmt.Fprintf(t.Out, "%s is already trusted (sha256 %s)\n", p.Path, p.SHA256[:12])
		return nil
	}
	fmt.Fprintf(t.Out, "%s (sha256 %s) would add:\n", p.Path, p.SHA256[:12])
	for _, line := range DescribeProject(p.Config, t.IsLiteralCredential) {
		fmt.Fprintf(t.Out, "  %s\n", line)
	}
	ok, err := t.Confirm("Trust this file for this project? [y/N] ")
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(t.Out, "not trusted; nothing was changed")
		return nil
	}
	rec.Projects[p.Dir] = TrustEntry{SHA256: p.SHA256, TrustedAt: time.Now().UTC()}
	if err := t.Store.Write(rec); err != nil {
		return err
	}
	fmt.Fprintf(t.Out, "trusted %s; a changed file needs `hush trust` again\n", p.Path)
	return nil
}

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
