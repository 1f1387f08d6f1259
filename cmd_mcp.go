package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/config/userfile"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/mcp"
	"github.com/hushcli/hush/wizard"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

func (a *app) mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "list MCP servers and their tools, and import servers from an mcpServers JSON block",
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
	if err := a.init(); err != nil {
		return nil, err
	}
	lv, err := a.openVault()
	if err != nil {
		return nil, err
	}
	dir, err := a.projectDir()
	if err != nil {
		return nil, err
	}
	servers, err := a.mcpServers()
	if err != nil {
		return nil, err
	}
	// config.toml's rules, and the terminal when there is one.
	var prompter executor.Prompter
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		prompter = &wizard.Prompter{In: a.stdin, Out: a.stdout, Accessible: a.ambient["ACCESSIBLE"] != ""}
	}
	audit := auditlog.Open(filepath.Join(a.dirs.Data, auditlog.FileName))
	audit.Notice = a.warn
	return session.StartMCP(ctx, session.MCPOptions{Servers: servers, Dir: dir, Ambient: a.ambient, Vault: lv, Scrub: a.scrub,
		Gate: session.Gate(a.cfg, prompter, false), Audit: audit, Session: session.NewID("mcp"), Version: version,
		UnsafeNoCredentialFilter: a.cfg.Unsafe.NoCredentialFilter}, names...)
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
		for _, s := range servers {
			state := mcp.NotStarted
			if s.Disabled {
				state = mcp.Disabled
			}
			command := strings.Join(append([]string{s.Command}, s.Args...), " ")
			if s.URL != "" {
				command = mcp.DisplayEndpoint(s)
			}
			st = append(st, mcp.Status{Name: s.Name, Source: s.Source, State: state, Command: command})
		}
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
	if len(st) == 0 {
		fmt.Fprintf(a.stdout, "no MCP servers configured: add [mcp.NAME] to %s, or import an mcpServers block with `hush mcp import FILE`\n",
			filepath.Join(a.dirs.Config, config.FileName))
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tTOOLS\tSOURCE\tCOMMAND")
	for _, s := range st {
		state, tools := string(s.State), "-"
		if s.State == mcp.Running {
			tools = fmt.Sprint(s.Tools)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, state, tools, s.Source, mcpSanitize(shorten(s.Command, 100)))
	}
	tw.Flush()
	for _, s := range st {
		switch s.State {
		case mcp.Running, mcp.NotStarted, mcp.Disabled, mcp.Closed:
			continue
		}
		fmt.Fprintf(a.stdout, "\n%s: %s\n", s.Name, s.Describe())
	}
	return nil
}

func (a *app) mcpTools(name string, schema bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	servers, err := a.mcpServers()
	if err != nil {
		return err
	}
	known := false
	var names []string
	for _, s := range servers {
		known = known || s.Name == name
		names = append(names, s.Name)
	}
	if !known {
		if len(names) == 0 {
			return fmt.Errorf("no MCP server %q: none is configured", name)
		}
		return fmt.Errorf("no MCP server %q (configured: %s)", name, strings.Join(names, ", "))
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
	fmt.Fprintf(a.stdout, "%s: %d tools (the model calls them by the first name; rules match tool.run:<that name>)\n", name, len(list))
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	for _, t := range list {
		desc := strings.TrimPrefix(t.Description(), fmt.Sprintf("[MCP server %s, tool %s] ", name, t.MCPName()))
		fmt.Fprintf(tw, "%s\t%s\n", t.Name(), mcpSanitize(shorten(strings.Join(strings.Fields(desc), " "), 110)))
		if schema {
			tw.Flush()
			fmt.Fprintf(a.stdout, "    %s\n", mcpSanitize(string(t.Schema())))
		}
	}
	return tw.Flush()
}

// mcpSanitize keeps what a server wrote from steering the terminal.
func mcpSanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

func (a *app) mcpImport(src string, replace bool) error {
	if err := a.init(); err != nil {
		return err
	}
	var data []byte
	var err error
	if src == "-" {
		if f := a.mcpTerminal(); f != nil {
			fmt.Fprintln(a.stderr, "Paste the mcpServers JSON, then press Ctrl-D on an empty line.")
		}
		data, err = io.ReadAll(io.LimitReader(a.stdin, 1<<20))
	} else {
		data, err = userfile.Read(context.Background(), src, userfile.ConfigLimit)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	servers, notes, err := config.ParseMCPServers(data)
	if err != nil {
		return fmt.Errorf("%s: %w", importName(src), err)
	}
	path := filepath.Join(a.dirs.Config, config.MCPFileName)
	existing, err := config.LoadMCPJSON(path)
	if err != nil {
		return err
	}
	lv, err := a.openVault()
	if err != nil {
		return err
	}
	all, err := lv.All()
	if err != nil {
		return err
	}
	plan, err := mcp.PlanImport(mcp.ImportRequest{Servers: servers, InConfigTOML: a.cfg.MCP, InMCPJSON: existing, Replace: replace,
		Held: tools.NewSecretSet(all), Ambient: a.ambient, Store: func(server, name, value string) (string, error) {
			return mcp.StoreImportedSecret(lv, server, name, value)
		}})
	if err != nil {
		return err
	}
	add, report, rules := plan.Add, plan.Report, plan.Rules
	for _, n := range notes {
		fmt.Fprintln(a.stdout, n)
	}
	for _, r := range report {
		fmt.Fprintln(a.stdout, r)
	}
	if len(add) == 0 {
		return errors.New("nothing imported")
	}
	if err := config.AddMCPServers(path, add); err != nil {
		return err
	}
	var added []string
	for n := range add {
		added = append(added, n)
	}
	sort.Strings(added)
	fmt.Fprintf(a.stdout, "added %s to %s\n", strings.Join(added, ", "), path)
	if len(rules) > 0 {
		fmt.Fprintf(a.stdout, "\nEach server asks for its secrets when it starts. To allow them without asking, add to %s:\n\n%s\n",
			filepath.Join(a.dirs.Config, config.FileName), strings.Join(rules, "\n\n"))
	}
	fmt.Fprintln(a.stdout, "\nCheck with: hush mcp list")
	return nil
}

func importName(src string) string {
	if src == "-" {
		return "stdin"
	}
	return src
}

// mcpTerminal is stdin when it is a terminal.
func (a *app) mcpTerminal() *os.File {
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return f
	}
	return nil
}
