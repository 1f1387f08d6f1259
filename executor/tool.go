// Package executor owns the agent turn: the tool contract and registry, the
// PermissionGate, the gated vault view tools see, the audit log, and the
// loop that carries a conversation between the model and the tools.
//
// The executor wraps every tool call the same way — gate, audit, redact,
// tool — so no tool can forget a layer. It never hands a tool the raw vault,
// never writes the process environment, and never lets a byte of tool output
// reach the model, the screen, the transcript or a log unredacted.
package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/hushcli/hush/tools"
)

// Tool is one capability the model can call.
type Tool interface {
	Name() string
	// Description tells the model what the tool does.
	Description() string
	// Schema is the JSON Schema of the arguments object.
	Schema() json.RawMessage
	// Run performs the call. What the tool writes to tc.Output is its result
	// (already redacted on the way). A failed command is a Result with
	// IsError, which the model sees; an error means the tool could not run
	// at all, and is shown to the model too, redacted.
	Run(ctx context.Context, tc *ToolContext, args json.RawMessage) (Result, error)
}

// Result is the end of a tool call, after its output.
type Result struct {
	// Status is a short line appended to the output for the model, e.g.
	// "exit code 2" or "timed out after 2m0s".
	Status  string
	IsError bool
	// ExitCode is the process's exit status when the tool ran one to its
	// end (nil otherwise); the --json stream reports it.
	ExitCode *int
}

// Exited is the Result of a process that exited with code: "exit code N",
// an error unless N is 0.
func Exited(code int) Result {
	return Result{Status: fmt.Sprintf("exit code %d", code), IsError: code != 0, ExitCode: &code}
}

// SecretReader is the vault as a tool sees it: every Get passes the gate.
type SecretReader interface {
	Get(name string) (string, error)
}

// ToolContext is what the executor hands a tool for one call.
type ToolContext struct {
	// Subject is the tool's gate subject ("bash", "mcp:github").
	Subject string
	Turn    int
	// Dir is the project root, where tools run.
	Dir string
	// Ambient is hush's in-memory snapshot of its start-up environment,
	// as a view whose lookups never return a credential: a secret reaches
	// a tool only through Vault.
	Ambient tools.Ambient
	// Vault is the gated view: Get asks the PermissionGate for
	// vault.read:<NAME> with Subject, and records the decision.
	Vault SecretReader
	// Secrets classifies names and values for the env builder.
	Secrets *tools.SecretSet
	// Policy is the tool's configured spawn policy.
	Policy tools.Policy
	// Output receives the tool's output; it redacts as it goes.
	Output io.Writer
	// Preview is what the tool's Preview returned for this call and the
	// gate approved (Previewer tools only).
	Preview *Preview
	// Confirm asks the gate (audited, with Subject) about gateID for this
	// call, beyond its tool.run: the background tool asks tool.keep:
	// before a process may outlive hush. nil denies.
	Confirm func(gateID, detail string) (Verdict, error)
	// Network is the session's egress proxy (network.go); nil leaves host
	// tools the network their sandbox gives.
	Network Network

	held []string // the secrets BuildEnv read for this call, by name
}

// Ask is tc.Confirm, denying when there is none.
func (tc *ToolContext) Ask(gateID, detail string) (Verdict, error) {
	if tc.Confirm == nil {
		return Verdict{Decision: Deny, Source: "default", Message: gateID + " cannot be asked here"}, nil
	}
	return tc.Confirm(gateID, detail)
}

// NoVault is an optional capability: a tool whose NoVault returns true is
// handed a ToolContext with no Vault and no Secrets at all (http), so no
// ${NAME} it is given can be resolved, by mistake or by design.
type NoVault interface {
	NoVault() bool
}

// BuildEnv builds the tool's child environment from its policy, a declared
// scope (nil: the configured secrets) and the call's env entries, reading
// every secret through the gated vault.
func (tc *ToolContext) BuildEnv(scope []string, extra map[string]string) (tools.Env, error) {
	if tc.Vault == nil {
		return nil, errors.New("this tool has no vault: it cannot build an environment with secrets")
	}
	p := tc.Policy
	p.Scope = scope
	grant := func(name string) (string, error) {
		v, err := tc.Vault.Get(name)
		if err == nil && !slices.Contains(tc.held, name) {
			tc.held = append(tc.held, name)
		}
		return v, err
	}
	env, _, err := tc.Ambient.BuildEnv(tools.EnvRequest{Policy: p, Secrets: tc.Secrets, Grant: grant, Extra: extra})
	return env, err
}

// Registry holds the tools offered to the model.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
}

// NewRegistry returns a registry holding ts.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range ts {
		r.Add(t)
	}
	return r
}

// Add registers t, replacing a tool of the same name.
func (r *Registry) Add(t Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tools[t.Name()] = t
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// List returns the tools sorted by name.
func (r *Registry) List() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}
