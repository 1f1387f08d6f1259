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
	if showDropped {
		dropped, others := keptOut(a.ambient, env, dropped, tools.NewSecretSet(all))
		sort.Slice(dropped, func(i, j int) bool { return dropped[i].Name < dropped[j].Name })
		if len(dropped) > 0 || others > 0 {
			fmt.Fprintf(a.stdout, "# kept out:\n")
		}
		for _, d := range dropped {
			fmt.Fprintf(a.stdout, "#   %s: %s\n", d.Name, d.Reason)
		}
		if others > 0 {
			fmt.Fprintf(a.stdout, "#   and %d other variable(s) the policy does not name (add them to include to pass them)\n", others)
		}
	}
	return nil
}

// keptOut adds to what BuildEnv refused the ambient variables the policy
// never named but a person should know are kept out — credential-named,
// loader, secret-valued — each with its true reason, and counts the rest.
func keptOut(ambient map[string]string, env tools.Env, dropped []tools.Dropped, secrets *tools.SecretSet) ([]tools.Dropped, int) {
	seen := map[string]bool{}
	for _, e := range env {
		seen[e.Name] = true
	}
	for _, d := range dropped {
		seen[d.Name] = true
	}
	others := 0
	for n, v := range ambient {
		if seen[n] || v == "" {
			continue
		}
		why := ""
		switch {
		case tools.IsLoaderName(n):
			why = "loader injection variable"
		case tools.IsCredentialName(n):
			why = "credential-named; grant it as a secret instead"
		case tools.IsCredentialValue(v):
			why = "value is a URL with a password"
		case secrets.HasName(n):
			why = "a secret of this name is in the vault or a project .env file; grant it as a secret instead"
		case secrets.HasValue(v):
			why = "value equals the value of a secret"
		default:
			others++
			continue
		}
		dropped = append(dropped, tools.Dropped{Name: n, Reason: why})
	}
	return dropped, others
}
