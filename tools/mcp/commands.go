package mcp

import (
	"errors"
	"fmt"
	"github.com/hushcli/hush/executor/outbuf"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
)

// What `hush mcp list`, `hush mcp tools` and `hush mcp import` do and
// print: package main parses the flags, starts the servers, and calls these.

// Configured is each server's status without starting it (`hush mcp list
// --no-start`): not started, or disabled.
func Configured(servers []Server) []Status {
	var st []Status
	for _, s := range servers {
		state := NotStarted
		if s.Disabled {
			state = Disabled
		}
		st = append(st, Status{Name: s.Name, Source: s.Source, State: state, Command: commandLine(s)})
	}
	return st
}

// RenderList prints `hush mcp list`: a table of st, then what went wrong
// with each server that is not running. configPath is config.toml, for the
// hint when nothing is configured.
func RenderList(w io.Writer, st []Status, configPath string) error {
	if len(st) == 0 {
		_, err := fmt.Fprintf(w, "no MCP servers configured: add [mcp.NAME] to %s, or import an mcpServers block with `hush mcp import FILE`\n", configPath)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tTOOLS\tSOURCE\tCOMMAND")
	for _, s := range st {
		state, count := string(s.State), "-"
		if s.State == Running {
			count = fmt.Sprint(s.Tools)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, state, count, s.Source, outbuf.VisibleLine(shorten(s.Command, 100)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range st {
		switch s.State {
		case Running, NotStarted, Disabled, Closed:
			continue
		}
		fmt.Fprintf(w, "\n%s: %s\n", s.Name, s.Describe())
	}
	return nil
}

// CheckKnown says, when no server of servers is called name, which are.
func CheckKnown(servers []Server, name string) error {
	var names []string
	for _, s := range servers {
		if s.Name == name {
			return nil
		}
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("no MCP server %q: none is configured", name)
	}
	return fmt.Errorf("no MCP server %q (configured: %s)", name, strings.Join(names, ", "))
}

// RenderTools prints `hush mcp tools SERVER`: each tool of server by the
// name the model calls it, with its description (and input schema).
func RenderTools(w io.Writer, server string, list []*Tool, schema bool) error {
	fmt.Fprintf(w, "%s: %d tools (the model calls them by the first name; rules match tool.run:<that name>)\n", server, len(list))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range list {
		desc := strings.TrimPrefix(t.Description(), fmt.Sprintf("[MCP server %s, tool %s] ", server, t.MCPName()))
		fmt.Fprintf(tw, "%s\t%s\n", t.Name(), outbuf.VisibleLine(shorten(strings.Join(strings.Fields(desc), " "), 110)))
		if schema {
			tw.Flush()
			fmt.Fprintf(w, "    %s\n", outbuf.VisibleLine(string(t.Schema())))
		}
	}
	return tw.Flush()
}

// ImportFile is `hush mcp import`: Data is the pasted JSON (from Source,
// a file name or "stdin"), added to the mcp.json at MCPJSON beside the
// config.toml at ConfigTOML (whose servers InConfigTOML are never
// replaced). Literal credentials go into Vault.
type ImportFile struct {
	Data                []byte
	Source              string
	MCPJSON, ConfigTOML string
	InConfigTOML        map[string]config.MCPServer
	Replace             bool
	Vault               *vault.Layered
	Ambient             map[string]string
}

// Run plans the import, stores the literal credentials, writes mcp.json,
// and prints what was done and the rules to add to w. No value is printed.
func (f ImportFile) Run(w io.Writer) error {
	servers, notes, err := config.ParseMCPServers(f.Data)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Source, err)
	}
	existing, err := config.LoadMCPJSON(f.MCPJSON)
	if err != nil {
		return err
	}
	all, err := f.Vault.All()
	if err != nil {
		return err
	}
	plan, err := PlanImport(ImportRequest{Servers: servers, InConfigTOML: f.InConfigTOML, InMCPJSON: existing, Replace: f.Replace,
		Held: tools.NewSecretSet(all), Ambient: f.Ambient, Store: func(server, name, value string) (string, error) {
			return StoreImportedSecret(f.Vault, server, name, value)
		}})
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	for _, r := range plan.Report {
		fmt.Fprintln(w, r)
	}
	if len(plan.Add) == 0 {
		return errors.New("nothing imported")
	}
	if err := config.AddMCPServers(f.MCPJSON, plan.Add); err != nil {
		return err
	}
	var added []string
	for n := range plan.Add {
		added = append(added, n)
	}
	slices.Sort(added)
	fmt.Fprintf(w, "added %s to %s\n", strings.Join(added, ", "), f.MCPJSON)
	if len(plan.Rules) > 0 {
		fmt.Fprintf(w, "\nEach server asks for its secrets when it starts. To allow them without asking, add to %s:\n\n%s\n",
			f.ConfigTOML, strings.Join(plan.Rules, "\n\n"))
	}
	for _, n := range added {
		if plan.Add[n].OAuth {
			fmt.Fprintf(w, "\n%s signs in with OAuth: %s.\n", n, LoginHint(n))
		}
	}
	fmt.Fprintln(w, "\nCheck with: hush mcp list")
	return nil
}
