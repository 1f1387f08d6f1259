package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hushcli/hush/session"
	"github.com/urfave/cli/v2"
)

func (a *app) vaultCommand() *cli.Command {
	return &cli.Command{
		Name:  "vault",
		Usage: "manage the secrets hush keeps: set, list, rm, import, backend, reveal",
		Description: "Secrets live in the configured backend ([vault] backend in config.toml): envfile\n" +
			"(vault.env in the data dir) or keyring (the OS keyring). A tool gets one only through\n" +
			"a ${NAME} reference the permission gate allowed. Values are never taken from the\n" +
			"command line and never printed, except by `reveal` on your terminal.",
		Subcommands: []*cli.Command{
			{
				Name:      "set",
				Usage:     "store a secret: the value comes from stdin when piped, else from a hidden prompt",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault set NAME (the value is read from stdin or a hidden prompt, never from the command line, where ps and shell history would show it)")}
					}
					return a.VaultSet(c.Args().First())
				},
			},
			{
				Name:   "list",
				Usage:  "list secret names, where each comes from, and the backend (never values)",
				Action: func(c *cli.Context) error { return a.VaultList() },
			},
			{
				Name:      "rm",
				Usage:     "remove a secret from the vault",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault rm NAME")}
					}
					return a.VaultRm(c.Args().First())
				},
			},
			{
				Name:      "import",
				Usage:     "copy the secrets of a legacy file (.env, .env.local, sub/.env, .envrc …) into the vault",
				ArgsUsage: "PATH",
				Description: "Stores every entry of PATH in the vault and reads each back. Names the backend cannot\n" +
					"store are refused with the reason; a name the vault already holds with another value is\n" +
					"kept unless --overwrite. Afterwards hush offers to delete PATH or rename it to\n" +
					"PATH.imported (at a terminal), or does what --delete-source / --rename-source says.\n" +
					"PATH is deleted only when every entry is in the vault.",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "delete-source", Usage: "delete PATH once every entry is in the vault"},
					&cli.BoolFlag{Name: "rename-source", Usage: "rename PATH to PATH.imported afterwards"},
					&cli.BoolFlag{Name: "overwrite", Usage: "replace values the vault already holds under the same names"},
				},
				Action: func(c *cli.Context) error {
					args, late, err := trailingFlags(c, "delete-source", "rename-source", "overwrite")
					if err != nil || len(args) != 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault import [--delete-source|--rename-source] [--overwrite] PATH")}
					}
					opts := session.ImportOptions{DeleteSource: late["delete-source"], RenameSource: late["rename-source"], Overwrite: late["overwrite"]}
					if opts.DeleteSource && opts.RenameSource {
						return &exitError{exitUsage, errors.New("--delete-source and --rename-source exclude each other")}
					}
					return a.VaultImport(args[0], opts)
				},
			},
			{
				Name:      "backend",
				Usage:     "show the vault backend, or switch to another one, moving every secret across",
				ArgsUsage: "[NAME]",
				Description: "Without NAME: the backend in use and where it keeps secrets. With NAME: copies every\n" +
					"secret to NAME and reads each back, then switches config.toml, then deletes them from\n" +
					"the old backend. A failure before the switch leaves the old backend as it was and\n" +
					"removes what was copied. Moving secrets needs you at a terminal, so a tool cannot\n" +
					"move them somewhere it can read.",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask before moving (a terminal is still required)"}},
				Action: func(c *cli.Context) error {
					args, late, err := trailingFlags(c, "yes")
					if err != nil || len(args) > 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault backend [--yes] [NAME]")}
					}
					if len(args) == 0 {
						return a.VaultBackendShow()
					}
					return a.VaultBackendSwitch(args[0], late["yes"])
				},
			},
			{
				Name:      "reveal",
				Usage:     "show a secret's value on your terminal, after you confirm",
				ArgsUsage: "NAME",
				Description: "Works only with a controlling terminal: the question and the value go to the terminal\n" +
					"itself, not to stdout. Tools run without a terminal, so a tool cannot read the vault\n" +
					"through hush. Every reveal (and refusal) is recorded in the audit log.",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return &exitError{exitUsage, errors.New("usage: hush vault reveal NAME")}
					}
					return a.VaultReveal(c.Args().First())
				},
			},
		},
	}
}

// trailingFlags returns a command's arguments and its boolean flags, also
// when a flag follows the arguments (`hush vault import .env --delete-source`),
// which urfave/cli leaves among the arguments. An unknown flag is an error.
func trailingFlags(c *cli.Context, names ...string) ([]string, map[string]bool, error) {
	set := map[string]bool{}
	for _, n := range names {
		set[n] = c.Bool(n)
	}
	var args []string
	rest := c.Args().Slice()
	for i, arg := range rest {
		if arg == "--" {
			args = append(args, rest[i+1:]...)
			break
		}
		name, isFlag := strings.CutPrefix(arg, "--")
		if !isFlag && len(arg) == 2 && arg[0] == '-' {
			name, isFlag = map[string]string{"-y": "yes"}[arg], true
		}
		if !isFlag {
			args = append(args, arg)
			continue
		}
		if _, known := set[name]; !known {
			return nil, nil, fmt.Errorf("unknown flag %s", arg)
		}
		set[name] = true
	}
	return args, set, nil
}
