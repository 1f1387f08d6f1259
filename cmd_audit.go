package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/hushcli/hush/executor/auditlog"
	"github.com/urfave/cli/v2"
)

func (a *app) auditLogCommand() *cli.Command {
	return &cli.Command{
		Name:  "log",
		Usage: "print the permission decisions: which tool asked for which secret, and what was decided",
		Description: "Reads audit.jsonl in the data dir. Every gate decision is there — tool runs and\n" +
			"secret reads, allowed or denied, and what decided (a rule, a prompt, the session).\n" +
			"No secret value is ever written to it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the entries as JSON lines"},
			&cli.IntFlag{Name: "last", Usage: "only the last `N` entries"},
		},
		Action: func(c *cli.Context) error { return a.auditLog(c.Bool("json"), c.Int("last")) },
	}
}

func (a *app) auditLog(asJSON bool, last int) error {
	if err := a.init(); err != nil {
		return err
	}
	path := filepath.Join(a.dirs.Data, auditlog.FileName)
	entries, damage, err := auditlog.Read(path)
	if err != nil {
		return err
	}
	if msg := damage.Describe(path); msg != "" {
		fmt.Fprintf(a.stderr, "hush: warning: %s\n", msg)
	}
	if last > 0 && len(entries) > last {
		entries = entries[len(entries)-last:]
	}
	if asJSON {
		enc := json.NewEncoder(a.stdout)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintf(a.stdout, "no decisions recorded yet (%s)\n", path)
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTURN\tTOOL\tGATE\tDECISION\tBY")
	for _, e := range entries {
		by := e.Source
		if e.Rule != "" {
			by += ": " + e.Rule
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", e.Time.Local().Format("2006-01-02 15:04:05"), e.Turn, e.Tool, e.Gate, e.Decision, by)
	}
	return tw.Flush()
}
