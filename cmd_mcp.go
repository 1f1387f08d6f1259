package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools/mcp"
	"github.com/hushcli/hush/wizard"
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
					return a.mcpList(c.Bool("no-start"))
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
					return a.mcpTools(c.Args().First(), c.Bool("schema"))
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
					return a.mcpLogin(c.Args().First())
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
					return a.mcpImport(c.Args().First(), c.Bool("replace"))
				},
			},
		},
	}
}

// mcpStandalone starts the named servers (all when none) outside a chat
// session, with config.toml's rules and, on a terminal, a person to ask.
func (a *app) mcpStandalone(ctx context.Context, names ...string) (*mcp.Manager, error) {
	s, err := a.mcpOutsideSession()
	if err != nil {
		return nil, err
	}
	return s.Start(ctx, names...)
}

// mcpLogin is hush mcp login SERVER.
func (a *app) mcpLogin(name string) error {
	if a.stdinTerminal() == nil {
		return errors.New("hush mcp login needs a terminal: the sign-in happens in your browser, and hush waits for it there")
	}
	servers, err := a.mcpServers()
	if err != nil {
		return err
	}
	if err := mcp.CheckKnown(servers, name); err != nil {
		return err
	}
	s, err := a.mcpOutsideSession()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := s.Login(ctx, name, a.stdinTerminal(), a.stderr); errors.Is(err, session.ErrInterrupted) {
		return &exitError{exitInterrupted, errors.New("sign-in cancelled")}
	} else if err != nil {
		return err
	}
	return nil
}

// mcpOutsideSession is what starts MCP servers outside a chat session.
func (a *app) mcpOutsideSession() (session.Standalone, error) {
	if err := a.init(); err != nil {
		return session.Standalone{}, err
	}
	lv, err := a.openVault()
	if err != nil {
		return session.Standalone{}, err
	}
	dir, err := a.projectDir()
	if err != nil {
		return session.Standalone{}, err
	}
	servers, err := a.mcpServers()
	if err != nil {
		return session.Standalone{}, err
	}
	// config.toml's rules, and the terminal when there is one.
	var prompter executor.Prompter
	if a.stdinTerminal() != nil {
		prompter = &wizard.Prompter{In: a.stdin, Out: a.stdout, Accessible: a.ambient["ACCESSIBLE"] != ""}
	}
	return session.Standalone{Config: a.cfg, Servers: servers, Dir: dir, DataDir: a.dirs.Data, Ambient: a.ambient, Vault: lv, Scrub: a.scrub,
		Prompter: prompter, Notice: a.warn, Version: version}, nil
}

// mcpServers is every configured MCP server, from config.toml and mcp.json.
func (a *app) mcpServers() ([]mcp.Server, error) {
	if err := a.init(); err != nil {
		return nil, err
	}
	return session.MCPServers(a.cfg, a.dirs.Config)
}

func (a *app) mcpList(noStart bool) error {
	var st []mcp.Status
	if noStart {
		servers, err := a.mcpServers()
		if err != nil {
			return err
		}
		st = mcp.Configured(servers)
	} else {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		mgr, err := a.mcpStandalone(ctx)
		if err != nil {
			return err
		}
		st = mgr.Status()
		mgr.Close()
	}
	return mcp.RenderList(a.stdout, st, filepath.Join(a.dirs.Config, config.FileName))
}

func (a *app) mcpTools(name string, schema bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	servers, err := a.mcpServers()
	if err != nil {
		return err
	}
	if err := mcp.CheckKnown(servers, name); err != nil {
		return err
	}
	mgr, err := a.mcpStandalone(ctx, name)
	if err != nil {
		return err
	}
	defer mgr.Close()
	list, err := mgr.ServerTools(name)
	if err != nil {
		return err
	}
	return mcp.RenderTools(a.stdout, name, list, schema)
}

func (a *app) mcpImport(src string, replace bool) error {
	if err := a.init(); err != nil {
		return err
	}
	var hint io.Writer
	if a.stdinTerminal() != nil {
		hint = a.stderr
	}
	data, name, err := mcp.ReadImportSource(context.Background(), src, a.stdin, hint)
	if err != nil {
		return err
	}
	lv, err := a.openVault()
	if err != nil {
		return err
	}
	return mcp.ImportFile{Data: data, Source: name, MCPJSON: filepath.Join(a.dirs.Config, config.MCPFileName),
		ConfigTOML: filepath.Join(a.dirs.Config, config.FileName), InConfigTOML: a.cfg.MCP, Replace: replace,
		Vault: lv, Ambient: a.ambient}.Run(a.stdout)
}
