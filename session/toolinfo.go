package session

import (
	"strings"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/toolset/dockerbash"
)

// SandboxWord is what the status line says about how host tools run:
// "on" when the kernel gave the sandbox its namespaces, else "off".
func SandboxWord() string {
	if sandbox.Status().Namespaces {
		return "on"
	}
	return "off"
}

// ToolSummary is one offered tool as chat's /tools shows it.
type ToolSummary struct {
	Name, Description string
	// Sandbox says how the tool runs.
	Sandbox string
	// Secrets are the names the tool is configured to receive.
	Secrets []string
}

// Tools summarizes agent's tools under cfg's policies (configDir holds mcp.json).
func Tools(cfg config.Config, configDir string, agent *executor.Agent) []ToolSummary {
	var out []ToolSummary
	for _, t := range agent.Tools.List() {
		name := t.Name()
		info := ToolSummary{Name: name, Description: t.Description(), Sandbox: "runs on this machine, sandbox " + SandboxWord()}
		subject := name
		if server, _, ok := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__"); ok && strings.HasPrefix(name, "mcp__") {
			subject = "mcp:" + server
		}
		switch name {
		case dockerbash.Name:
			info.Sandbox = "runs in a container"
		case "read", "write", "edit", "glob", "grep":
			info.Sandbox = "runs inside hush, no sandbox: refuses the masked paths itself"
		case "http":
			info.Sandbox = "runs inside hush with no vault; no private addresses unless allowed"
		}
		if p, env, err := EnvPolicy(cfg, configDir, subject); err == nil {
			info.Secrets = append(info.Secrets, p.Secrets...)
			for k, v := range env {
				if strings.Contains(v, "${") {
					info.Secrets = append(info.Secrets, k)
				}
			}
		}
		out = append(out, info)
	}
	return out
}
