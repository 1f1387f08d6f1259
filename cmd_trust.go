package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
)

// trustOptions is `hush trust`.
type trustOptions struct {
	Out     io.Writer
	Config  func() (loaded, error)
	Project func() (string, error)
	// Confirm asks the person at the controlling terminal; it fails with
	// config.ErrTrustNeedsTerminal without one.
	Confirm func(question string) (bool, error)
	Revoke  bool
}

func newTrustCmd(f *app, runF func(*trustOptions) error) *cli.Command {
	if runF == nil {
		runF = runTrust
	}
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
			return runF(&trustOptions{Out: f.Stdout, Config: f.loadConfig, Project: f.ProjectDir, Confirm: confirmOnTerminal, Revoke: c.Bool("revoke")})
		},
	}
}

// confirmOnTerminal asks question on the controlling terminal, not stdin:
// a tool, which runs without one, cannot answer it.
func confirmOnTerminal(question string) (bool, error) {
	tty, err := wizard.ControllingTerminal()
	if err != nil {
		return false, config.ErrTrustNeedsTerminal
	}
	defer tty.Close()
	return wizard.AskTTY(tty, question), nil
}

// isLiteralCredential says an env entry is a credential written literally:
// a credential-named variable or a credential-looking value.
func isLiteralCredential(name, value string) bool {
	return tools.IsCredentialName(name) || tools.IsCredentialValue(value)
}

// runTrust shows what the project's .hush/config.toml would add and
// records trust once Confirm says yes (projectTrust); Revoke forgets it.
func runTrust(opts *trustOptions) error {
	l, err := opts.Config()
	if err != nil {
		return err
	}
	dir, err := opts.Project()
	if err != nil {
		return err
	}
	t := projectTrust{Store: config.NewTrustStore(l.Dirs.Config), Dir: dir, Out: opts.Out, IsLiteralCredential: isLiteralCredential, Confirm: opts.Confirm}
	if opts.Revoke {
		return t.Revoke()
	}
	return t.Grant()
}

// projectTrust is `hush trust`'s body: what it does to the trust store for the project
// at Dir, printing to Out.
type projectTrust struct {
	Store config.TrustStore
	Dir   string
	Out   io.Writer
	// Confirm asks the person at the controlling terminal; it returns
	// config.ErrTrustNeedsTerminal when there is none. Only a person may trust: a
	// tool has no controlling terminal, so it cannot widen its own gate.
	Confirm func(question string) (bool, error)
	// IsLiteralCredential decides which env values of an MCP server are
	// hidden in the review (tools.IsCredentialName / IsCredentialValue).
	IsLiteralCredential func(name, value string) bool
}

// Revoke stops trusting the project.
func (t projectTrust) Revoke() error {
	p, err := config.LoadProject(t.Dir)
	if err != nil {
		return err
	}
	rec, err := t.Store.Read()
	if err != nil {
		return err
	}
	dir := config.RealDir(t.Dir)
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
func (t projectTrust) Grant() error {
	p, err := config.LoadProject(t.Dir)
	if err != nil {
		return err
	}
	rec, err := t.Store.Read()
	if err != nil {
		return err
	}
	if p == nil {
		fmt.Fprintf(t.Out, "no %s in %s; nothing to trust\n", config.ProjectFile, t.Dir)
		return nil
	}
	if e, ok := rec.Projects[p.Dir]; ok && e.SHA256 == p.SHA256 {
		fmt.Fprintf(t.Out, "%s is already trusted (sha256 %s)\n", p.Path, p.SHA256[:12])
		return nil
	}
	fmt.Fprintf(t.Out, "%s (sha256 %s) would add:\n", p.Path, p.SHA256[:12])
	for _, line := range config.DescribeProject(p.Config, t.IsLiteralCredential) {
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
	rec.Projects[p.Dir] = config.TrustEntry{SHA256: p.SHA256, TrustedAt: time.Now().UTC()}
	if err := t.Store.Write(rec); err != nil {
		return err
	}
	fmt.Fprintf(t.Out, "trusted %s; a changed file needs `hush trust` again\n", p.Path)
	return nil
}
