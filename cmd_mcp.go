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
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/toolset/mcp"
	"github.com/hushcli/hush/vault"
	"github.com/urfave/cli/v2"
)

func newMCPCmd(a *app) *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "list MCP servers and their tools, sign in to remote ones (OAuth), and import servers from an mcpServers JSON block",
		Description: "MCP servers come from [mcp.NAME] in config.toml and from mcp.json beside it (the\n" +
			"mcpServers format of Claude Desktop, Cursor and VS Code). Each server starts with HOME,\n" +
			"LOGNAME, PATH, SHELL, TERM and USER plus exactly the env its config names; a ${NAME}\n" +
			"there is read from the vault through the permission gate, as subject mcp:<server>.\n" +
			"In a session, servers start before the first prompt and their tools are offered to the\n" +
			"model as mcp__<server>__<tool>; running one passes the gate as tool.run:mcp__<server>__<tool>.",
		Subcommands: []*cli.Command{newMCPListCmd(a, nil), newMCPToolsCmd(a, nil), newMCPLoginCmd(a, nil), newMCPImportCmd(a, nil)},
	}
}

// mcpServers is every configured MCP server, from config.toml and mcp.json.
func (a *app) mcpServers() ([]mcp.Server, error) {
	if err := a.Load(); err != nil {
		return nil, err
	}
	return session.MCPServers(*a.Config(), a.Dirs().Config)
}

// standalone is what starts MCP servers outside a chat session: in the
// sandbox a session gives them, with config.toml's rules and, on a
// terminal, a person to ask.
func (a *app) standalone(withSandbox bool) (session.Standalone, error) {
	lv, err := a.Vault()
	if err != nil {
		return session.Standalone{}, err
	}
	dir, err := a.ProjectDir()
	if err != nil {
		return session.Standalone{}, err
	}
	servers, err := a.mcpServers()
	if err != nil {
		return session.Standalone{}, err
	}
	s := session.Standalone{Config: *a.Config(), Servers: servers, Dir: dir, DataDir: a.Dirs().Data, Ambient: a.Ambient, Vault: lv, Scrub: a.Scrub(),
		Prompter: a.prompter(), Notice: a.Warn, Version: a.Version}
	if withSandbox {
		if s.Sandbox, err = a.hostSandbox("mcp", ""); err != nil {
			return session.Standalone{}, err
		}
	}
	return s, nil
}

// startMCP starts the named servers (all when none) outside a session.
func (a *app) startMCP(ctx context.Context, names ...string) (*mcp.Manager, error) {
	s, err := a.standalone(true)
	if err != nil {
		return nil, err
	}
	return s.Start(ctx, names...)
}

// mcpListOptions is `hush mcp list`.
type mcpListOptions struct {
	Out     io.Writer
	Config  func() (loaded, error)
	Servers func() ([]mcp.Server, error)
	Start   func(ctx context.Context, names ...string) (*mcp.Manager, error)
	// NoStart shows the configuration only.
	NoStart bool
}

func newMCPListCmd(f *app, runF func(*mcpListOptions) error) *cli.Command {
	if runF == nil {
		runF = runMCPList
	}
	return &cli.Command{
		Name:  "list",
		Usage: "start each server, show its state and tool count, and stop it again",
		Description: "A server whose env needs a secret asks the gate: on a terminal you are asked;\n" +
			"otherwise it is denied unless a rule allows it, and the rule to add is shown.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "no-start", Usage: "only show the configuration; start nothing"}},
		Action: func(c *cli.Context) error {
			if c.Args().Len() > 0 {
				return &exitError{exitUsage, errors.New("mcp list takes no arguments")}
			}
			return runF(&mcpListOptions{Out: f.Stdout, Config: f.loadConfig, Servers: f.mcpServers, Start: f.startMCP, NoStart: c.Bool("no-start")})
		},
	}
}

// runMCPList prints each server's state and tool count, started and
// stopped again, or with NoStart only as configured.
func runMCPList(opts *mcpListOptions) error {
	var st []mcp.Status
	if opts.NoStart {
		servers, err := opts.Servers()
		if err != nil {
			return err
		}
		st = mcp.Configured(servers)
	} else {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		mgr, err := opts.Start(ctx)
		if err != nil {
			return err
		}
		st = mgr.Status()
		mgr.Close()
	}
	l, err := opts.Config()
	if err != nil {
		return err
	}
	return renderMCPList(opts.Out, st, filepath.Join(l.Dirs.Config, config.FileName))
}

// mcpToolsOptions is `hush mcp tools SERVER`.
type mcpToolsOptions struct {
	Out     io.Writer
	Servers func() ([]mcp.Server, error)
	Start   func(ctx context.Context, names ...string) (*mcp.Manager, error)
	Name    string
	// Schema also prints each tool's input schema.
	Schema bool
}

func newMCPToolsCmd(f *app, runF func(*mcpToolsOptions) error) *cli.Command {
	if runF == nil {
		runF = runMCPTools
	}
	return &cli.Command{
		Name:      "tools",
		Usage:     "start one server and list its tools as the model sees them",
		ArgsUsage: "SERVER",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "schema", Usage: "also print each tool's input schema"}},
		Action: func(c *cli.Context) error {
			if c.Args().Len() != 1 {
				return &exitError{exitUsage, errors.New("mcp tools needs one server name: hush mcp tools SERVER (see hush mcp list)")}
			}
			return runF(&mcpToolsOptions{Out: f.Stdout, Servers: f.mcpServers, Start: f.startMCP, Name: c.Args().First(), Schema: c.Bool("schema")})
		},
	}
}

// runMCPTools starts the one server and lists its tools as the model
// sees them.
func runMCPTools(opts *mcpToolsOptions) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	servers, err := opts.Servers()
	if err != nil {
		return err
	}
	if err := mcp.CheckKnown(servers, opts.Name); err != nil {
		return err
	}
	mgr, err := opts.Start(ctx, opts.Name)
	if err != nil {
		return err
	}
	defer mgr.Close()
	list, err := mgr.ServerTools(opts.Name)
	if err != nil {
		return err
	}
	return renderMCPTools(opts.Out, opts.Name, list, opts.Schema)
}

// mcpLoginOptions is `hush mcp login SERVER`.
type mcpLoginOptions struct {
	Err io.Writer
	// Terminal is stdin as a terminal, nil when it is not one.
	Terminal *os.File
	Servers  func() ([]mcp.Server, error)
	// Login signs in to server name, reading the person's answers from in.
	Login func(ctx context.Context, name string, in io.Reader, out io.Writer) error
	Name  string
}

func newMCPLoginCmd(f *app, runF func(*mcpLoginOptions) error) *cli.Command {
	if runF == nil {
		runF = runMCPLogin
	}
	return &cli.Command{
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
			return runF(&mcpLoginOptions{Err: f.Stderr, Terminal: f.Terminal(), Servers: f.mcpServers, Name: c.Args().First(),
				Login: func(ctx context.Context, name string, in io.Reader, out io.Writer) error {
					s, err := f.standalone(false)
					if err != nil {
						return err
					}
					return s.Login(ctx, name, in, out)
				}})
		},
	}
}

// runMCPLogin signs in to the OAuth server at a terminal and stores its
// tokens in the vault (Standalone.Login); Ctrl-C cancels it.
func runMCPLogin(opts *mcpLoginOptions) error {
	if opts.Terminal == nil {
		return errors.New("hush mcp login needs a terminal: the sign-in happens in your browser, and hush waits for it there")
	}
	servers, err := opts.Servers()
	if err != nil {
		return err
	}
	if err := mcp.CheckKnown(servers, opts.Name); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = opts.Login(ctx, opts.Name, opts.Terminal, opts.Err)
	if errors.Is(err, session.ErrInterrupted) {
		return &exitError{exitInterrupted, errors.New("sign-in cancelled")}
	}
	return err
}

// mcpImportOptions is `hush mcp import FILE|-`.
type mcpImportOptions struct {
	In  io.Reader
	Out io.Writer
	// Hint, when not nil, is where to say how to end a paste (a terminal).
	Hint    io.Writer
	Ambient map[string]string
	Config  func() (loaded, error)
	Vault   func() (*vault.Layered, error)
	Source  string
	// Replace replaces servers of the same name.
	Replace bool
}

func newMCPImportCmd(f *app, runF func(*mcpImportOptions) error) *cli.Command {
	if runF == nil {
		runF = runMCPImport
	}
	return &cli.Command{
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
			opts := &mcpImportOptions{In: f.Stdin, Out: f.Stdout, Ambient: f.Ambient, Config: f.loadConfig, Vault: f.Vault, Source: c.Args().First(), Replace: c.Bool("replace")}
			if f.Terminal() != nil {
				opts.Hint = f.Stderr
			}
			return runF(opts)
		},
	}
}

// runMCPImport adds the servers of an mcpServers block to mcp.json
// (mcpImportFile), moving literal credentials into the vault.
func runMCPImport(opts *mcpImportOptions) error {
	l, err := opts.Config()
	if err != nil {
		return err
	}
	data, name, err := mcp.ReadImportSource(context.Background(), opts.Source, opts.In, opts.Hint)
	if err != nil {
		return err
	}
	lv, err := opts.Vault()
	if err != nil {
		return err
	}
	return mcpImportFile{Data: data, Source: name, MCPJSON: filepath.Join(l.Dirs.Config, config.MCPFileName),
		ConfigTOML: filepath.Join(l.Dirs.Config, config.FileName), InConfigTOML: l.Config.MCP, Replace: opts.Replace,
		Vault: lv, Ambient: opts.Ambient}.Run(opts.Out)
}
