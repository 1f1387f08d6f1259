package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/urfave/cli/v2"
)

// rulesListOptions is `hush rules list`.
type rulesListOptions struct {
	Out io.Writer
	// ConfigPath is the user's config.toml; ProjectDir the project.
	ConfigPath func() (string, error)
	ProjectDir func() (string, error)
	All        bool
}

// rulesRmOptions is `hush rules rm`.
type rulesRmOptions struct {
	Out        io.Writer
	ConfigPath func() (string, error)
	ProjectDir func() (string, error)
	// Which is a number from `hush rules list` or a rule as it shows it
	// (bash(go test:*)) or its pattern (go test:*).
	Which string
}

func newRulesCmd(a *app) *cli.Command {
	return &cli.Command{
		Name:  "rules",
		Usage: "show and remove the rules saved \"always in this project\"",
		Description: "At an approval of a command, p allows it always in this project: hush saves a\n" +
			"[[projects.\"DIR\".rules]] entry with a command pattern (command = \"go test:*\") to your\n" +
			"config.toml. These commands list and remove them. Rules in config.toml's own [[rules]]\n" +
			"are edited there.",
		Subcommands: []*cli.Command{newRulesListCmd(a, nil), newRulesRmCmd(a, nil)},
	}
}

// userConfigPath is the user's config.toml (resolving the dirs once).
func (a *app) userConfigPath() (string, error) {
	if err := a.Load(); err != nil {
		return "", err
	}
	return filepath.Join(a.Dirs().Config, config.FileName), nil
}

func newRulesListCmd(f *app, runF func(*rulesListOptions) error) *cli.Command {
	if runF == nil {
		runF = runRulesList
	}
	return &cli.Command{
		Name:  "list",
		Usage: "list the rules saved for this project (--all: for every project)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "list the saved rules of every project"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &exitError{exitUsage, errors.New("usage: hush rules list [--all]")}
			}
			return runF(&rulesListOptions{Out: f.Stdout, ConfigPath: f.userConfigPath, ProjectDir: f.ProjectDir, All: c.Bool("all")})
		},
	}
}

func newRulesRmCmd(f *app, runF func(*rulesRmOptions) error) *cli.Command {
	if runF == nil {
		runF = runRulesRm
	}
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove a rule saved for this project",
		ArgsUsage: "N | 'bash(go test:*)' | 'go test:*'",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return &exitError{exitUsage, errors.New("usage: hush rules rm N (the number `hush rules list` shows) or hush rules rm 'bash(go test:*)'")}
			}
			return runF(&rulesRmOptions{Out: f.Stdout, ConfigPath: f.userConfigPath, ProjectDir: f.ProjectDir, Which: c.Args().First()})
		},
	}
}

// ruleLine is how a saved rule is listed: bash(go test:*), or the gate
// and subject of a rule without a command.
func ruleLine(r config.Rule) string {
	if r.Command != "" {
		return r.Decision + " " + executor.ParseCommandPattern(strings.TrimPrefix(r.Gate, executor.GateToolRun), r.Command).String()
	}
	return r.Decision + " " + r.Gate + " for " + r.Subject
}

func runRulesList(opts *rulesListOptions) error {
	path, err := opts.ConfigPath()
	if err != nil {
		return err
	}
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	var dirs []string
	if opts.All {
		for d := range cfg.Projects {
			dirs = append(dirs, d)
		}
		sort.Strings(dirs)
	} else {
		dir, err := opts.ProjectDir()
		if err != nil {
			return err
		}
		dirs = []string{config.RealDir(dir)}
	}
	shown := 0
	for _, d := range dirs {
		rules := cfg.Projects[d].Rules
		if len(rules) == 0 {
			continue
		}
		shown++
		fmt.Fprintf(opts.Out, "Saved for %s (in %s):\n", outbuf.VisibleLine(d), outbuf.VisibleLine(path))
		for i, r := range rules {
			fmt.Fprintf(opts.Out, "  %d  %s\n", i+1, outbuf.VisibleLine(ruleLine(r)))
		}
	}
	switch {
	case shown == 0 && opts.All:
		fmt.Fprintf(opts.Out, "No project has saved rules in %s. At a command's approval, p saves one (\"always in this project\").\n", outbuf.VisibleLine(path))
	case shown == 0:
		fmt.Fprintf(opts.Out, "No rules saved for %s. At a command's approval, p saves one (\"always in this project\").\n", outbuf.VisibleLine(dirs[0]))
	case !opts.All:
		fmt.Fprintln(opts.Out, "hush rules rm N removes one.")
	}
	return nil
}

func runRulesRm(opts *rulesRmOptions) error {
	path, err := opts.ConfigPath()
	if err != nil {
		return err
	}
	dir, err := opts.ProjectDir()
	if err != nil {
		return err
	}
	dir = config.RealDir(dir)
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	rules := cfg.Projects[dir].Rules
	i := -1
	if n, err := strconv.Atoi(opts.Which); err == nil {
		i = n - 1
	} else {
		want := strings.TrimSpace(opts.Which)
		for j, r := range rules {
			l := ruleLine(r)
			if want == l || "allow "+want == l || (r.Command != "" && strings.Join(strings.Fields(want), " ") == strings.Join(strings.Fields(r.Command), " ")) {
				i = j
				break
			}
		}
		if i < 0 {
			return &exitError{exitUsage, fmt.Errorf("no saved rule %q for %s; hush rules list shows them", outbuf.VisibleLine(opts.Which), outbuf.VisibleLine(dir))}
		}
	}
	if i < 0 || i >= len(rules) {
		return &exitError{exitUsage, fmt.Errorf("no rule %s for %s (it has %d; hush rules list shows them)", outbuf.VisibleLine(opts.Which), outbuf.VisibleLine(dir), len(rules))}
	}
	r, err := config.RemoveProjectRule(path, dir, i)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "Removed %s from %s.\n", outbuf.VisibleLine(ruleLine(r)), outbuf.VisibleLine(path))
	return nil
}
