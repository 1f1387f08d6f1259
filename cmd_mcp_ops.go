package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/outbuf"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/mcp"
	"github.com/hushcli/hush/vault"
)

// renderMCPList prints `hush mcp list`: a table of st, then what went wrong
// with each server that is not running. configPath is config.toml, for the
// hint when nothing is configured.
func renderMCPList(w io.Writer, st []mcp.Status, configPath string) error {
	if len(st) == 0 {
		_, err := fmt.Fprintf(w, "no MCP servers configured: add [mcp.NAME] to %s, or import an mcpServers block with `hush mcp import FILE`\n", configPath)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tTOOLS\tSOURCE\tCOMMAND")
	for _, s := range st {
		state, count := string(s.State), "-"
		if s.State == mcp.Running {
			count = fmt.Sprint(s.Tools)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, state, count, s.Source, outbuf.VisibleLine(shortenMCP(s.Command, 100)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range st {
		switch s.State {
		case mcp.Running, mcp.NotStarted, mcp.Disabled, mcp.Closed:
			continue
		}
		fmt.Fprintf(w, "\n%s: %s\n", s.Name, s.Describe())
	}
	return nil
}

// renderMCPTools prints `hush mcp tools SERVER`: each tool of server by the
// name the model calls it, with its description (and input schema).
func renderMCPTools(w io.Writer, server string, list []*mcp.Tool, schema bool) error {
	fmt.Fprintf(w, "%s: %d tools (the model calls them by the first name; rules match tool.run:<that name>)\n", server, len(list))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range list {
		desc := strings.TrimPrefix(t.Description(), fmt.Sprintf("[MCP server %s, tool %s] ", server, t.MCPName()))
		fmt.Fprintf(tw, "%s\t%s\n", t.Name(), outbuf.VisibleLine(shortenMCP(strings.Join(strings.Fields(desc), " "), 110)))
		if schema {
			tw.Flush()
			fmt.Fprintf(w, "    %s\n", outbuf.VisibleLine(string(t.Schema())))
		}
	}
	return tw.Flush()
}

// mcpImportFile is `hush mcp import`: Data is the pasted JSON (from Source,
// a file name or "stdin"), added to the mcp.json at MCPJSON beside the
// config.toml at ConfigTOML (whose servers InConfigTOML are never
// replaced). Literal credentials go into Vault.
type mcpImportFile struct {
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
func (f mcpImportFile) Run(w io.Writer) error {
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
	plan, err := mcp.PlanImport(mcp.ImportRequest{Servers: servers, InConfigTOML: f.InConfigTOML, InMCPJSON: existing, Replace: f.Replace,
		Held: tools.NewSecretSet(all), Ambient: f.Ambient, Store: func(server, name, value string) (string, error) {
			return mcp.StoreImportedSecret(f.Vault, server, name, value)
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
			fmt.Fprintf(w, "\n%s signs in with OAuth: %s.\n", n, mcp.LoginHint(n))
		}
	}
	fmt.Fprintln(w, "\nCheck with: hush mcp list")
	return nil
}

// shortenMCP cuts s to n bytes and an ellipsis.
func shortenMCP(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
