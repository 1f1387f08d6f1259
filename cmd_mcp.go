package main

import (
	"errors"

	"github.com/hushcli/hush/session"

	"github.com/urfave/cli/v2"
)

func (a *app) mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "list MCP servers and their tools, sign in to remote ones (OAuth), and import servers from an mcpServers JSON block",
		Description: "MCP servers come from [mcp.NAME] in config.toml and from mcp.json beside it (the\n" +
			"mcpServers format of Claude Desktop, Cursor and VS Code). Each server starts with HOME,\n" +
			"LOGNAME, PATH, SHELL, TERM and USER plus exactly the env its config names; a ${NAME}\n" +
			"there is read from the vault through the permission gate, as subject mcp:<server>.\n" +
			"In a session, servers start before the first prompt and their tools are offered to the\n" +
			"model as mcp__<server>__<tool>; running one passes the gate as tool.run:mcp__<server>__<tool>.",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "start each server, show its state and tool count, and stop it again",
				Description: "A server whose env needs a secret asks the gate: on a terminal you are asked;\n" +
					"otherwise it is denied unless a rule allows it, and the rule to add is shown.",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "no-start", Usage: "only show the configuration; start nothing"}},
				Action: func(c *cli.Context) error {
					if c.Args().Len() > 0 {
						return &exitError{exitUsage, errors.New("mcp list takes no arguments")}
					}
					return a.MCPList(c.Bool("no-start"))
				},
			},
			{
				Name:      "tools",
				Usage:     "start one server and list its tools as the model sees them",
				ArgsUsage: "SERVER",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "schema", Usage: "also print each tool's input schema"}},
				Action: func(c *cli.Context) error {
					if c.Args().Len() != 1 {
						return &exitError{exitUsage, errors.New("mcp tools needs one server name: hush mcp tools SERVER (see hush mcp list)")}
					}
					return a.MCPTools(c.Args().First(), c.Bool("schema"))
				},
			},
			{
				Name:      "login",
				Usage:     "sign in to a remote MCP server with OAuth and keep its tokens in the vault",
				ArgsUsage: "SERVER",
				Description: "For a server with oauth = true (mcp.json: \"oauth\": {...}). Shows the authorization URL,\n" +
					"waits for your browser to come back to a one-off listener on 127.0.0.1, and stores the\n" +
					"tokens in the vault as HUSH_MCP_OAUTH_<SERVER>. Sessions read them through the gate\n" +
					"(vault.read:HUSH_MCP_OAUTH_<SERVER>, subject mcp:<server>) and store refreshed ones.\n" +
					"Signs in afresh even when a sign-in is stored. Sign out with hush vault rm NAME.",
				Action: func(c *cli.Context) error {
					if c.Args().Len() != 1 {
						return &exitError{exitUsage, errors.New("mcp login needs one server name: hush mcp login SERVER (see hush mcp list)")}
					}
					err := a.MCPLogin(c.Args().First())
					if errors.Is(err, session.ErrInterrupted) {
						return &exitError{exitInterrupted, errors.New("sign-in cancelled")}
					}
					return err
				},
			},
			{
				Name:      "import",
				Usage:     "add servers from an mcpServers JSON block (a file, or - to paste on stdin) to mcp.json",
				ArgsUsage: "FILE|-",
				Description: "Reads Claude Desktop's claude_desktop_config.json, a Cursor or VS Code mcp.json, or\n" +
					"just the \"mcpServers\": {...} block, and adds its stdio servers to mcp.json in hush's\n" +
					"config dir. A credential written literally in a server's env (a name like *TOKEN* or\n" +
					"*KEY*, or a URL with a password) is moved into the vault, and mcp.json refers to it as\n" +
					"${NAME}; VS Code's ${env:NAME} and ${input:NAME} become ${NAME}. Nothing secret is\n" +
					"written to mcp.json or printed.",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "replace", Usage: "replace servers of the same name already in mcp.json"}},
				Action: func(c *cli.Context) error {
					if c.Args().Len() != 1 {
						return &exitError{exitUsage, errors.New("mcp import needs a file, or - to read stdin (paste the JSON, then Ctrl-D)")}
					}
					return a.MCPImport(c.Args().First(), c.Bool("replace"))
				},
			},
		},
	}
}
