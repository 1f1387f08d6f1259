package tools

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hushcli/hush/config"
)

// LiteralSecrets names every credential written literally where hush
// expects a ${NAME} reference: model.api_key in config.toml, and a
// server's env in config.toml or mcp.json (the format the README
// recommends). Each is one sentence, never the value.
func LiteralSecrets(c config.Config, mcpJSON map[string]config.MCPServer) []string {
	var out []string
	literal := func(name, v string) bool {
		if strings.Contains(v, "${") || v == "" {
			return false
		}
		return IsCredentialValue(v) || IsCredentialName(name) && LooksLikeSecret(v)
	}
	if literal("API_KEY", c.Model.APIKey) {
		out = append(out, "config.toml has a literal key in model.api_key: store it with `hush vault set OPENAI_API_KEY` (or ANTHROPIC_API_KEY) and write api_key = \"${OPENAI_API_KEY}\"")
	}
	for _, src := range []struct {
		file    string
		servers map[string]config.MCPServer
	}{{"config.toml", c.MCP}, {config.MCPFileName, mcpJSON}} {
		for _, name := range slices.Sorted(maps.Keys(src.servers)) {
			for _, k := range slices.Sorted(maps.Keys(src.servers[name].Env)) {
				if literal(k, src.servers[name].Env[k]) {
					out = append(out, fmt.Sprintf("MCP server %s has a literal value for %s in %s: store it with `hush vault set %s` and write \"${%s}\"",
						name, k, src.file, k, k))
				}
			}
		}
	}
	return out
}
