package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
	"github.com/urfave/cli/v2"
)

func (a *app) trustCommand() *cli.Command {
	return &cli.Command{
		Name:  "trust",
		Usage: "apply this project's .hush/config.toml in full, after you review it",
		Description: "A project's .hush/config.toml can add rules, MCP servers and tool settings. Until you\n" +
			"trust it, only its deny and ask rules apply. `hush trust` shows what the file would\n" +
			"add and, after you confirm at your terminal, records the project and the file's\n" +
			"SHA-256 in trusted-projects.json in the config dir. Changing the file untrusts it.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "revoke", Usage: "stop trusting this project"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &exitError{exitUsage, errors.New("usage: hush trust [--revoke] (uses the project directory: --dir or the current one)")}
			}
			return a.trustProject(c.Bool("revoke"))
		},
	}
}

func (a *app) trustProject(revoke bool) error {
	if err := a.init(); err != nil {
		return err
	}
	dir, err := a.projectDir()
	if err != nil {
		return err
	}
	p, err := config.LoadProject(dir)
	if err != nil {
		return err
	}
	store := config.NewTrustStore(a.dirs.Config)
	rec, err := store.Read()
	if err != nil {
		return err
	}
	if revoke {
		dir := config.RealDir(dir)
		if p != nil {
			dir = p.Dir
		}
		if _, ok := rec.Projects[dir]; !ok {
			fmt.Fprintf(a.stdout, "%s was not trusted\n", dir)
			return nil
		}
		delete(rec.Projects, dir)
		if err := store.Write(rec); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "no longer trusting %s\n", dir)
		return nil
	}
	if p == nil {
		fmt.Fprintf(a.stdout, "no %s in %s; nothing to trust\n", config.ProjectFile, dir)
		return nil
	}
	if e, ok := rec.Projects[p.Dir]; ok && e.SHA256 == p.SHA256 {
		fmt.Fprintf(a.stdout, "%s is already trusted (sha256 %s)\n", p.Path, p.SHA256[:12])
		return nil
	}
	fmt.Fprintf(a.stdout, "%s (sha256 %s) would add:\n", p.Path, p.SHA256[:12])
	for _, line := range describeProject(p.Config) {
		fmt.Fprintf(a.stdout, "  %s\n", line)
	}
	// Only a person may trust: a tool has no controlling terminal, so it
	// cannot run `hush trust` to widen its own gate.
	tty, err := controllingTerminal()
	if err != nil {
		return &exitError{exitFailure, errors.New("trusting a project needs you at a terminal to confirm, and there is none here; nothing was changed")}
	}
	defer tty.Close()
	if !askTTY(tty, "Trust this file for this project? [y/N] ") {
		fmt.Fprintln(a.stdout, "not trusted; nothing was changed")
		return nil
	}
	rec.Projects[p.Dir] = config.TrustEntry{SHA256: p.SHA256, TrustedAt: time.Now().UTC()}
	if err := store.Write(rec); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "trusted %s; a changed file needs `hush trust` again\n", p.Path)
	return nil
}

// describeProject lists what a project config would add, for review.
func describeProject(c config.Config) []string {
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
				if refs, _ := vault.References(v); len(refs) == 0 && (tools.IsCredentialName(k) || tools.IsCredentialValue(v)) {
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
		out = append(out, fmt.Sprintf("settings for the %s tool", n))
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
