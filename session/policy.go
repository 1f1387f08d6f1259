package session

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/background"
	"github.com/hushcli/hush/toolset/bash"
	"github.com/hushcli/hush/toolset/dockerbash"
	"github.com/hushcli/hush/toolset/mcp"
)

// Spawners are the tools with a spawn policy in config.toml's [tools.NAME].
func Spawners() []string { return []string{bash.Name, background.Name, dockerbash.Name} }

// EmptyNpmrc is where isolate_npm points npm's user and global config
// (NPM_CONFIG_USERCONFIG, NPM_CONFIG_GLOBALCONFIG): a file that reads empty
// and that nothing written to it can fill, so neither an .npmrc token of the
// user's nor one a tool writes reaches npm.
const EmptyNpmrc = "/dev/null"

// ToolPolicy maps config.toml's settings for a spawning tool (bash,
// background, dockerbash) or for an MCP server ("mcp:NAME") to its spawn
// policy. Every field of config.ToolConfig has a decision here — mapped into
// the policy, or named as the tool's own setting — and
// TestToolPolicyIsExhaustive fails when a field is added without one.
func ToolPolicy(cfg config.Config, tool string) (tools.Policy, error) {
	if _, ok := strings.CutPrefix(tool, "mcp:"); ok {
		return tools.Policy{Inherit: tools.InheritCore, Base: tools.MCPBaseNames, UnsafeNoCredentialFilter: cfg.Unsafe.NoCredentialFilter}, nil
	}
	known := false
	for _, t := range Spawners() {
		known = known || t == tool
	}
	if !known {
		return tools.Policy{}, fmt.Errorf("unknown tool %q (known: %s)", tool, strings.Join(Spawners(), ", "))
	}
	p := policyFromConfig(cfg.Tools[tool])
	if tool == dockerbash.Name {
		p = dockerbash.ContainerPolicy(p)
	}
	p.UnsafeNoCredentialFilter = cfg.Unsafe.NoCredentialFilter
	return p, nil
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
	if t.IsolateNpm {
		p.EmptyNpmrc = EmptyNpmrc
	}
	if t.Proxy != nil {
		p.Proxy = &tools.ProxyOption{URL: *t.Proxy}
	}
	return p
}

// policies is a session's spawn policy per tool, decided once at Open: a
// tool call looks its policy up here and never reads config.toml or
// mcp.json.
type policies map[string]tools.Policy

func builtinPolicies(cfg config.Config) (policies, error) {
	out := policies{}
	for _, t := range Spawners() {
		p, err := ToolPolicy(cfg, t)
		if err != nil {
			return nil, err
		}
		out[t] = p
	}
	return out, nil
}

// of is the policy of the named tool: a spawner's configured one, or none
// (in-process tools and MCP tools spawn nothing per call; an MCP server's
// environment was built when it started).
func (p policies) of(tool string) tools.Policy { return p[tool] }

// EnvPolicy is ToolPolicy for `hush env --tool NAME`, which also shows an
// MCP server's configured env: it reads mcp.json, to know the servers and
// to name them when tool is unknown.
func EnvPolicy(cfg config.Config, configDir, tool string) (tools.Policy, map[string]string, error) {
	if server, ok := strings.CutPrefix(tool, "mcp:"); ok {
		// Servers come from config.toml's [mcp.NAME] and from mcp.json.
		servers, err := MCPServers(cfg, configDir)
		if err != nil {
			return tools.Policy{}, nil, err
		}
		for _, s := range servers {
			if s.Name == server {
				p, err := ToolPolicy(cfg, mcp.Subject(s.Name))
				return p, s.Env, err
			}
		}
		return tools.Policy{}, nil, fmt.Errorf("no MCP server %q in %s or %s", server, config.FileName, config.MCPFileName)
	}
	p, err := ToolPolicy(cfg, tool)
	if err != nil {
		names := Spawners()
		if servers, serr := MCPServers(cfg, configDir); serr == nil {
			for _, s := range servers {
				names = append(names, mcp.Subject(s.Name))
			}
		}
		sort.Strings(names)
		return tools.Policy{}, nil, fmt.Errorf("unknown tool %q (known: %s)", tool, strings.Join(names, ", "))
	}
	return p, nil, nil
}
