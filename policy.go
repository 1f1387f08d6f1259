package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/dockerbash"
)

// knownTools are the tools with a spawn policy in config.toml's [tools.NAME].
var knownTools = []string{"bash", "background", "dockerbash"}

// policyFor turns config.toml's settings for a tool into its spawn policy.
// For an MCP server ("mcp:NAME") it returns the base set and the server's
// configured env as extras.
func (a *app) policyFor(tool string) (tools.Policy, map[string]string, error) {
	if err := a.init(); err != nil {
		return tools.Policy{}, nil, err
	}
	if server, ok := strings.CutPrefix(tool, "mcp:"); ok {
		// Servers come from config.toml's [mcp.NAME] and from mcp.json.
		servers, err := a.mcpServers()
		if err != nil {
			return tools.Policy{}, nil, err
		}
		for _, s := range servers {
			if s.Name == server {
				return tools.Policy{Inherit: tools.InheritCore, Base: tools.MCPBaseNames, UnsafeNoCredentialFilter: a.cfg.Unsafe.NoCredentialFilter}, s.Env, nil
			}
		}
		return tools.Policy{}, nil, fmt.Errorf("no MCP server %q in %s or %s", server, config.FileName, config.MCPFileName)
	}
	known := false
	for _, t := range knownTools {
		known = known || t == tool
	}
	if !known {
		names := append([]string(nil), knownTools...)
		if servers, err := a.mcpServers(); err == nil {
			for _, s := range servers {
				names = append(names, "mcp:"+s.Name)
			}
		}
		sort.Strings(names)
		return tools.Policy{}, nil, fmt.Errorf("unknown tool %q (known: %s)", tool, strings.Join(names, ", "))
	}
	p := policyFromConfig(a.cfg.Tools[tool])
	if tool == dockerbash.Name {
		p = dockerbash.ContainerPolicy(p)
	}
	p.UnsafeNoCredentialFilter = a.cfg.Unsafe.NoCredentialFilter
	return p, nil, nil
}

func policyFromConfig(t config.ToolConfig) tools.Policy {
	p := tools.Policy{
		Inherit: tools.Inherit(t.Inherit),
		Include: t.Include,
		Exclude: t.Exclude,
		Set:     t.Set,
		Secrets: t.Secrets,
		HomeDir: t.HomeDir,
	}
	if t.Proxy != nil {
		p.Proxy = &tools.ProxyOption{URL: *t.Proxy}
	}
	return p
}
