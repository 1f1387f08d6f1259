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
		s, ok := a.cfg.MCP[server]
		if !ok {
			return tools.Policy{}, nil, fmt.Errorf("no MCP server %q in %s", server, config.FileName)
		}
		return tools.Policy{Inherit: tools.InheritCore, Base: tools.MCPBaseNames, UnsafeNoCredentialFilter: a.cfg.Unsafe.NoCredentialFilter}, s.Env, nil
	}
	known := false
	for _, t := range knownTools {
		known = known || t == tool
	}
	if !known {
		names := append([]string(nil), knownTools...)
		for s := range a.cfg.MCP {
			names = append(names, "mcp:"+s)
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
