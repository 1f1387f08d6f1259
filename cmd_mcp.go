package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
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
	"github.com/hushcli/hush/vault"
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

// mcpImportRef matches VS Code's ${env:NAME} and ${input:NAME}.
var mcpImportRef = regexp.MustCompile(`\$\{(env|input):([A-Za-z_][A-Za-z0-9_]*)\}`)

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
	held := tools.NewSecretSet(all)
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	add := map[string]config.MCPServer{}
	var report []string
	var rules []string
	for _, orig := range names {
		s := servers[orig]
		name := mcpSafeName(orig)
		if name != orig {
			report = append(report, fmt.Sprintf("server %q: imported as %q (names are letters, digits, _ and -)", orig, name))
		}
		if _, ok := a.cfg.MCP[name]; ok {
			report = append(report, fmt.Sprintf("server %q: skipped: config.toml already has [mcp.%s]", name, name))
			continue
		}
		if _, ok := existing[name]; ok && !replace {
			report = append(report, fmt.Sprintf("server %q: skipped: mcp.json already has it (--replace to overwrite)", name))
			continue
		}
		if _, ok := add[name]; ok {
			report = append(report, fmt.Sprintf("server %q: skipped: two servers are named %q after renaming", orig, name))
			continue
		}
		if i := credentialArg(s.Args, held); i > 0 {
			report = append(report, fmt.Sprintf("server %q: not imported: argument %d holds a credential, and hush never puts a secret on a command line (any process can read it there); if the server can read it from an environment variable, paste it again with that variable in env", name, i))
			continue
		}
		env, lines, refs, err := a.mcpImportEnv(lv, held, name, s.Env)
		if err != nil {
			return fmt.Errorf("server %q: %w", name, err)
		}
		report = append(report, lines...)
		s.Env = env
		if len(s.Headers) > 0 {
			headers, lines, hrefs, err := a.mcpImportHeaders(lv, held, name, s.Headers)
			if err != nil {
				return fmt.Errorf("server %q: %w", name, err)
			}
			report = append(report, lines...)
			s.Headers = headers
			refs = append(refs, hrefs...)
		}
		add[name] = s
		for _, r := range refs {
			rules = append(rules, fmt.Sprintf("[[rules]]\ngate = \"vault.read:%s\"\nsubject = %q\ndecision = \"allow\"", r, mcp.Subject(name)))
		}
	}
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

// credentialArg returns the 1-based position of the first argument that
// holds a credential (a URL with a password, or a value the vault holds),
// or 0.
func credentialArg(args []string, held *tools.SecretSet) int {
	for i, arg := range args {
		if tools.IsCredentialValue(arg) || held.HasValue(arg) {
			return i + 1
		}
	}
	return 0
}

func importName(src string) string {
	if src == "-" {
		return "stdin"
	}
	return src
}

// mcpSafeName makes a pasted server name one hush can use.
func mcpSafeName(name string) string {
	out := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, name)
	out = strings.Trim(out, "-")
	if len(out) > 40 {
		out = out[:40]
	}
	if out == "" {
		out = "server"
	}
	return out
}

// mcpImportEnv turns a pasted env into one that holds no secret: literal
// credentials move into the vault and become ${NAME}; VS Code references
// become ${NAME}; other literal values stay, with "${" escaped. It returns
// the secret names the server will ask for.
func (a *app) mcpImportEnv(lv *vault.Layered, held *tools.SecretSet, server string, in map[string]string) (map[string]string, []string, []string, error) {
	out := map[string]string{}
	var lines, refs []string
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in[k]
		if mcpImportRef.MatchString(v) {
			v = mcpImportRef.ReplaceAllStringFunc(v, func(m string) string {
				sub := mcpImportRef.FindStringSubmatch(m)
				if sub[1] == "input" {
					lines = append(lines, fmt.Sprintf("server %q: %s was a VS Code prompt (${input:%s}); store its value with `hush vault set %s`", server, k, sub[2], sub[2]))
				}
				return "${" + sub[2] + "}"
			})
		}
		r, err := vault.References(v)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("env %s holds a reference hush cannot convert (%v); write it as ${NAME} for a secret NAME in the vault", k, err)
		}
		if len(r) > 0 {
			out[k] = v
			refs = append(refs, r...)
			continue
		}
		if v == "" || !(tools.IsCredentialName(k) || tools.IsCredentialValue(v) || held.HasValue(v)) {
			out[k] = strings.ReplaceAll(v, "${", "$${")
			continue
		}
		name, err := a.mcpStoreSecret(lv, server, k, v)
		if err != nil {
			return nil, nil, nil, err
		}
		out[k] = "${" + name + "}"
		refs = append(refs, name)
		lines = append(lines, fmt.Sprintf("server %q: %s: the value was moved into the vault as %s; mcp.json refers to it as ${%s}", server, k, name, name))
		if amb := a.ambient[name]; amb != "" && amb != v {
			lines = append(lines, fmt.Sprintf("server %q: note: your environment also sets %s, and a set environment variable wins over the vault; unset it to use the imported value", server, name))
		}
	}
	return out, lines, dedupe(refs), nil
}

// mcpImportHeaders is mcpImportEnv for a remote server's headers: a
// literal credential (Authorization: Bearer …) moves into the vault under
// the header's name in capitals (AUTHORIZATION, X_API_KEY).
func (a *app) mcpImportHeaders(lv *vault.Layered, held *tools.SecretSet, server string, in map[string]string) (map[string]string, []string, []string, error) {
	byName := map[string]string{}
	header := map[string]string{}
	for k, v := range in {
		n := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(k))
		byName[n], header[n] = v, k
	}
	conv, lines, refs, err := a.mcpImportEnv(lv, held, server, byName)
	if err != nil {
		return nil, nil, nil, err
	}
	out := map[string]string{}
	for n, v := range conv {
		out[header[n]] = v
	}
	return out, lines, refs, nil
}

// mcpStoreSecret stores value under name in the vault backend, or under
// SERVER_NAME when name already holds a different value.
func (a *app) mcpStoreSecret(lv *vault.Layered, server, name, value string) (string, error) {
	candidates := []string{name, strings.ToUpper(strings.ReplaceAll(server, "-", "_")) + "_" + name}
	for _, n := range candidates {
		if vault.CheckName(n) != nil {
			continue
		}
		cur, err := lv.Backend.Get(n)
		switch {
		case err == nil && cur == value:
			return n, nil
		case err == nil:
			continue // taken by another value
		case !errors.Is(err, vault.ErrNotFound):
			return "", fmt.Errorf("read the vault: %w", err)
		}
		if err := lv.Set(n, value); err != nil {
			return "", fmt.Errorf("store %s in the vault: %w", n, err)
		}
		return n, nil
	}
	return "", fmt.Errorf("cannot store %s: the vault already holds other values under %s; rename one with `hush vault`", name, strings.Join(candidates, " and "))
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// mcpTerminal is stdin when it is a terminal.
func (a *app) mcpTerminal() *os.File {
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return f
	}
	return nil
}
