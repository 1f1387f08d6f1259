package main

import (
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

// runEnv prints the environment a tool would start with (tools.EnvShow).
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
	return tools.EnvShow{Tool: tool, Ambient: a.ambient, Policy: policy, Extra: extra, Secrets: tools.NewSecretSet(all), Dropped: showDropped}.Render(a.stdout)
}
