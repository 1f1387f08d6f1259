package selftest

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// ProbeCommand is one run of `hush __probe`, which the audit's tools start
// (never a person): serve the probe or spy MCP server, run the attack
// probes when any is asked for, or else report what a tool process can
// read.
type ProbeCommand struct {
	Probe  ProbeOptions
	Attack AttackOptions
	// MCP serves the probe MCP server; MCPSpy the spy (Attack.Mark).
	MCP, MCPSpy bool
	// Connect are KEY=SOCKET pairs for Attack.Connect; others are ignored.
	Connect []string
	// SquatPort and SquatFile run Squat (the network rows' port squatter).
	SquatPort int
	SquatFile string
}

// Run does what p asks and writes its lines to out.
func (p ProbeCommand) Run(ctx context.Context, out io.Writer) error {
	if p.MCPSpy {
		return ServeSpyMCP(ctx, p.Attack.Mark)
	}
	if p.MCP {
		return ServeProbeMCP(ctx, p.Probe)
	}
	if p.SquatPort > 0 {
		return Squat(p.SquatPort, p.SquatFile)
	}
	at := p.Attack
	at.Connect = map[string]string{}
	for _, kv := range p.Connect {
		if k, v, ok := strings.Cut(kv, "="); ok {
			at.Connect[k] = v
		}
	}
	if len(at.Connect) > 0 || at.MemPID > 0 || at.MemControl || at.Reveal != "" || at.SessionKey != "" || at.SSHAgents || at.KeySerial != 0 {
		for _, line := range RunAttack(ctx, at) {
			fmt.Fprintln(out, line)
		}
		return nil
	}
	fmt.Fprintln(out, RunProbe(p.Probe).Line())
	return nil
}
