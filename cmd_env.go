package main

import (
	"io"

	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
	"github.com/urfave/cli/v2"
)

// envOptions is `hush env`.
type envOptions struct {
	Out     io.Writer
	Ambient map[string]string
	Config  func() (loaded, error)
	Vault   func() (*vault.Layered, error)
	// Tool is the tool whose environment is shown; Dropped also lists what
	// its policy named but kept out.
	Tool    string
	Dropped bool
}

func newEnvCmd(f *app, runF func(*envOptions) error) *cli.Command {
	if runF == nil {
		runF = runEnv
	}
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
			return runF(&envOptions{Out: f.Stdout, Ambient: f.Ambient, Config: f.loadConfig, Vault: f.Vault, Tool: c.String("tool"), Dropped: c.Bool("dropped")})
		},
	}
}

// runEnv prints the environment opts.Tool would start with under its
// policy (tools.EnvShow), secrets masked.
func runEnv(opts *envOptions) error {
	v, err := opts.Vault()
	if err != nil {
		return err
	}
	all, err := v.All()
	if err != nil {
		return err
	}
	l, err := opts.Config()
	if err != nil {
		return err
	}
	policy, extra, err := session.EnvPolicy(*l.Config, l.Dirs.Config, opts.Tool)
	if err != nil {
		return err
	}
	return tools.EnvShow{Tool: opts.Tool, Ambient: opts.Ambient, Policy: policy, Extra: extra, Secrets: tools.NewSecretSet(all), Dropped: opts.Dropped}.Render(opts.Out)
}
