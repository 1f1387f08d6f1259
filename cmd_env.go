package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools"
	"github.com/urfave/cli/v2"
)

func (a *app) envCommand() *cli.Command {
	return &cli.Command{
		Name:  "env",
		Usage: "show the environment a tool would start with",
		Description: "Prints the variables a tool's child process would get under its policy in\n" +
			"config.toml. Values are shown for plain variables; secrets and credential-named\n" +
			"variables are masked, and nothing is read from the vault (a secret is read only\n" +
			"when a tool runs, through the permission gate).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tool", Value: "bash", Usage: "tool name: bash, background, dockerbash, or mcp:<server>"},
			&cli.BoolFlag{Name: "dropped", Usage: "also list ambient variables the policy named but kept out, and why"},
		},
		Action: func(c *cli.Context) error {
			return a.runEnv(c.String("tool"), c.Bool("dropped"))
		},
	}
}

// runEnv prints the environment a tool would start with.
func (a *app) runEnv(tool string, showDropped bool) error {
	v, err := a.openVault()
	if err != nil {
		return err
	}
	all, err := v.All()
	if err != nil {
		return err
	}
	policy, extra, err := session.EnvPolicy(a.cfg, a.dirs.Config, tool)
	if err != nil {
		return err
	}
	// A dry run: scoped names are shown as granted-on-use, never read.
	grant := func(name string) (string, error) { return "<granted at run time: vault.read:" + name + ">", nil }
	env, dropped, err := tools.BuildEnv(tools.EnvRequest{
		Ambient: a.ambient, Policy: policy, Secrets: tools.NewSecretSet(all), Grant: grant, Extra: extra,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "# environment for tool %s (%d variables)\n", tool, len(env))
	for _, e := range env {
		val := e.Value
		switch {
		case e.Secret:
			if strings.HasPrefix(val, "<granted") {
				break
			}
			val = "<secret>"
		case tools.IsCredentialName(e.Name) || tools.IsCredentialValue(val):
			val = "<masked>"
		}
		fmt.Fprintf(a.stdout, "%s=%s\n", e.Name, val)
	}
	if showDropped && len(dropped) > 0 {
		sort.Slice(dropped, func(i, j int) bool { return dropped[i].Name < dropped[j].Name })
		fmt.Fprintf(a.stdout, "# kept out:\n")
		for _, d := range dropped {
			fmt.Fprintf(a.stdout, "#   %s: %s\n", d.Name, d.Reason)
		}
	}
	return nil
}
