package executor

import (
	"context"
)

// DeniedError is every refusal of a gated vault read: the gate's message,
// which names the rule that would allow it. It wraps ErrDenied.
type DeniedError struct{ Message string }

func (e *DeniedError) Error() string { return "permission denied: " + e.Message }
func (e *DeniedError) Unwrap() error { return ErrDenied }

// GatedReader is the vault as one subject sees it in one turn.
type GatedReader struct {
	ctx     context.Context
	gate    Gate
	vault   SecretReader
	subject string
	turn    int
	detail  string
}

// GatedVault returns vault as subject ("bash", "mcp:<server>") sees it in
// turn: each Get asks gate for vault.read:<NAME> first, and reads the value
// only when the answer is allow. It is the one place that puts the gate in
// front of the vault; with gate = Audited(...) every read is also recorded
// before the value is read. The agent's tool calls and MCP server start-up
// both use it.
func GatedVault(ctx context.Context, gate Gate, subject string, turn int, vault SecretReader) GatedReader {
	return GatedReader{ctx: ctx, gate: gate, vault: vault, subject: subject, turn: turn}
}

// WithDetail returns g asking with detail shown to the person deciding
// ("starting MCP server github"). detail is never a secret value.
func (g GatedReader) WithDetail(detail string) GatedReader {
	g.detail = detail
	return g
}

// Get returns the value of name if the gate allows subject to read it; a
// refusal is a *DeniedError.
func (g GatedReader) Get(name string) (string, error) {
	req := Request{GateID: GateVaultRead + name, Subject: g.subject, Turn: g.turn, Detail: g.detail}
	v, err := g.gate.Decide(g.ctx, req)
	if err != nil {
		return "", err
	}
	if v.Decision != Allow {
		return "", &DeniedError{Message: v.Message}
	}
	return g.vault.Get(name)
}
