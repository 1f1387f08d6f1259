package main

import (
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
			return a.ShowEnv(c.String("tool"), c.Bool("dropped"))
		},
	}
}
