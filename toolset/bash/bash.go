// Package bash is the host shell tool: it runs a script with bash in the
// project directory, in a child environment built by the spawn layer from
// the tool's policy — the core allowlist by default, never hush's whole
// environment. Secrets reach the script only as ${NAME} references in its
// env argument (or the configured secrets), resolved through the gated vault
// and placed in the execve environment, never in the script or argv.
package bash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox"
)

// Name is the tool's name and gate subject.
const Name = "bash"

// DefaultTimeout bounds a script when neither the call nor config says.
const DefaultTimeout = 2 * time.Minute

// Tool is the bash tool.
type Tool struct {
	// Timeout is the configured default (tools.bash.timeout); zero means
	// DefaultTimeout. A call may ask for less or more, up to MaxTimeout.
	Timeout    time.Duration
	MaxTimeout time.Duration
	// UnsafeSecretsInArgv passes every granted value as a positional
	// argument, visible to any process in /proc/*/cmdline. It exists only so
	// `hush audit`'s tests can prove the argv checks see it ([unsafe]).
	UnsafeSecretsInArgv bool
	// Sandbox is the sandbox every script runs in (nil: none).
	Sandbox *sandbox.Config
}

// Params are the tool's arguments; the tags are its JSON schema.
type Params struct {
	Script         string            `json:"script"`
	Env            map[string]string `json:"env,omitempty"`
	Secrets        []string          `json:"secrets,omitempty"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
}

func (Tool) Name() string { return Name }

func (Tool) Description() string {
	return "Run a bash script in the project directory and return its combined stdout and stderr and exit code. " +
		"The script starts with a minimal environment (PATH, HOME, locale; no credentials). " +
		"To give it a secret, pass env entries whose values reference the vault, e.g. {\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"}; " +
		"the user is asked before any secret is read, and secret values are shown as [REDACTED:NAME] in the output. " +
		"Never put secret values in the script itself."
}

func (Tool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "script": {"type": "string", "description": "bash script to run"},
    "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "extra environment variables; values may reference secrets as ${NAME}"},
    "secrets": {"type": "array", "items": {"type": "string"}, "description": "secret names to export under their own names; [] for none"},
    "timeout_seconds": {"type": "integer", "minimum": 1, "description": "time limit (default 120)"}
  },
  "required": ["script"],
  "additionalProperties": false
}`)
}

// Run implements executor.Tool.
func (t Tool) Run(ctx context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Result, error) {
	var p Params
	if err := executor.DecodeArgs(raw, &p); err != nil {
		return executor.Result{}, err
	}
	if p.Script == "" {
		return executor.Result{}, errors.New("bad arguments: script is empty")
	}
	timeout := executor.CallTimeout(t.Timeout, DefaultTimeout, t.MaxTimeout, p.TimeoutSeconds)
	// A nil Secrets field keeps the configured scope; [] grants none.
	env, err := tc.BuildEnv(p.Secrets, p.Env)
	if err != nil {
		return executor.Result{}, err // spawn nothing
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	spec := tools.Spec{
		Path: "bash", Args: []string{"-c", tools.StopOnTerm + p.Script}, Dir: tc.Dir, Env: env,
		Stdout: tc.Output, Stderr: tc.Output, Secrets: tc.Secrets, KillGrace: 2 * time.Second,
		Sandbox: t.Sandbox, Egress: tc.Egress(), Local: tc.Local(),
	}
	if t.UnsafeSecretsInArgv {
		spec.Args = append(spec.Args, "bash")
		for _, v := range env {
			if v.Secret {
				spec.Args = append(spec.Args, v.Value)
			}
		}
		spec.Secrets = nil
	}
	cmd, err := tools.Command(runCtx, spec)
	if err != nil {
		return executor.Result{}, err
	}
	err = cmd.Run()
	switch {
	case runCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		return executor.Result{Status: fmt.Sprintf("timed out after %s; the process group was killed", timeout), IsError: true}, nil
	case ctx.Err() != nil:
		return executor.Result{Status: "cancelled", IsError: true}, nil
	}
	var limit *sandbox.LimitError
	if errors.As(err, &limit) {
		return executor.Result{Status: limit.Error(), IsError: true}, nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return executor.Exited(exit.ExitCode()), nil
	}
	if err != nil {
		return executor.Result{}, fmt.Errorf("run bash: %w", err)
	}
	return executor.Exited(0), nil
}
