package background

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hushcli/hush/executor"
)

// Name is the tool's name and gate subject; its spawn policy is
// [tools.background] in config.toml.
const Name = "background"

// Tool is the background tool: one tool with an action argument, so it has
// one gate subject and one spawn policy, like bash.
type Tool struct {
	M *Manager
}

// Params are the tool's arguments; the schema below describes them.
type Params struct {
	Action   string            `json:"action"`
	Command  string            `json:"command,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Secrets  []string          `json:"secrets,omitempty"`
	Keep     bool              `json:"keep,omitempty"`
	ID       string            `json:"id,omitempty"`
	Offset   *int64            `json:"offset,omitempty"`
	Tail     int               `json:"tail,omitempty"`
	MaxBytes int               `json:"max_bytes,omitempty"`
}

// defaultTail is how many lines "output" shows when no offset is given.
const defaultTail = 50

func (Tool) Name() string { return Name }

func (Tool) Description() string {
	return "Run long-lived commands in the background (dev servers, watchers, long builds) and manage them. " +
		"action \"start\" runs command with bash in the project directory and returns an id at once; " +
		"\"list\" shows every background process and its state; " +
		"\"output\" reads a process's combined stdout and stderr: the last `tail` lines (default 50), or from byte `offset` " +
		"(each result gives the next offset, so polling with it returns only new output); " +
		"\"stop\" stops a process and everything it started. " +
		"Processes start with a minimal environment (no credentials); give one a secret with env entries like " +
		"{\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"} — the user is asked first, and secret values appear as [REDACTED:NAME]. " +
		"Processes are stopped when hush exits unless started with keep: true, which only the user should ask for."
}

func (Tool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["start", "list", "output", "stop"]},
    "command": {"type": "string", "description": "start: the bash command to run"},
    "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "start: extra environment variables; values may reference secrets as ${NAME}"},
    "secrets": {"type": "array", "items": {"type": "string"}, "description": "start: secret names to export under their own names; [] for none"},
    "keep": {"type": "boolean", "description": "start: keep running after hush exits (only when the user asked for it)"},
    "id": {"type": "string", "description": "output, stop: the process id returned by start, e.g. bg1"},
    "offset": {"type": "integer", "minimum": 0, "description": "output: read from this byte offset"},
    "tail": {"type": "integer", "minimum": 1, "description": "output: the last N lines (default 50; ignored with offset)"},
    "max_bytes": {"type": "integer", "minimum": 1, "description": "output: at most this many bytes (default 32768)"}
  },
  "required": ["action"],
  "additionalProperties": false
}`)
}

// Run implements executor.Tool.
func (t Tool) Run(ctx context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Result, error) {
	var p Params
	if err := executor.DecodeArgs(raw, &p); err != nil {
		return executor.Result{}, err
	}
	if err := p.check(); err != nil {
		return executor.Result{}, err
	}
	switch p.Action {
	case "start":
		return t.start(tc, p)
	case "list":
		return t.list(tc)
	case "output":
		return t.output(tc, p)
	default: // "stop"
		i, err := t.M.Stop(p.ID)
		if errors.Is(err, ErrNotRunning) || errors.Is(err, ErrUnknownID) {
			return executor.Result{Status: err.Error(), IsError: true}, nil
		}
		if err != nil {
			return executor.Result{}, err
		}
		return executor.Result{Status: fmt.Sprintf("%s %s", i.ID, i.Describe())}, nil
	}
}

// check refuses arguments that do not belong to the action, so a model
// that misreads the schema is told rather than silently ignored.
func (p Params) check() error {
	used := map[string]bool{
		"command": p.Command != "", "env": p.Env != nil, "secrets": p.Secrets != nil, "keep": p.Keep,
		"id": p.ID != "", "offset": p.Offset != nil, "tail": p.Tail != 0, "max_bytes": p.MaxBytes != 0,
	}
	allowed := map[string][]string{
		"start":  {"command", "env", "secrets", "keep"},
		"list":   {},
		"output": {"id", "offset", "tail", "max_bytes"},
		"stop":   {"id"},
	}
	ok, known := allowed[p.Action]
	if !known {
		return fmt.Errorf("bad arguments: action %q: want start, list, output or stop", p.Action)
	}
	for _, name := range []string{"command", "env", "secrets", "keep", "id", "offset", "tail", "max_bytes"} {
		if used[name] && !contains(ok, name) {
			return fmt.Errorf("bad arguments: %s is not used by action %s", name, p.Action)
		}
	}
	switch {
	case p.Action == "start" && strings.TrimSpace(p.Command) == "":
		return errors.New("bad arguments: start needs a command")
	case (p.Action == "output" || p.Action == "stop") && p.ID == "":
		return fmt.Errorf("bad arguments: %s needs the id start returned (see action list)", p.Action)
	case p.Offset != nil && p.Tail != 0:
		return errors.New("bad arguments: give offset or tail, not both")
	case p.Tail < 0 || p.MaxBytes < 0:
		return errors.New("bad arguments: tail and max_bytes must be positive")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (t Tool) start(tc *executor.ToolContext, p Params) (executor.Result, error) {
	if p.Keep {
		// A kept process outlives hush and its sandbox's lifetime: the
		// user decides, not --yes, which approves only tool.run.
		v, err := tc.Ask(executor.GateToolKeep+Name, "keep running after hush exits: "+p.Command)
		if err != nil {
			return executor.Result{}, err
		}
		if v.Decision != executor.Allow {
			return executor.Result{Status: "denied: keep: " + v.Message, IsError: true}, nil
		}
	}
	// As in bash: a nil Secrets keeps the configured scope; [] grants none.
	env, err := tc.BuildEnv(p.Secrets, p.Env)
	if err != nil {
		return executor.Result{}, err // start nothing
	}
	i, err := t.M.Start(Spec{Script: p.Command, Dir: tc.Dir, Env: env, Secrets: tc.Secrets, Keep: p.Keep, Egress: tc.Egress(), Local: tc.Local()})
	if err != nil {
		return executor.Result{}, err
	}
	note := "it is stopped when hush exits"
	if i.Keep {
		note = "it keeps running after hush exits; its output goes unscrubbed to " + i.LogPath
	}
	fmt.Fprintf(tc.Output, "started %s (pid %d); %s.\nRead its output with {\"action\": \"output\", \"id\": %q}.\n", i.ID, i.PID, note, i.ID)
	return executor.Result{Status: i.ID + " running"}, nil
}

func (t Tool) list(tc *executor.ToolContext) (executor.Result, error) {
	all := t.M.List()
	if len(all) == 0 {
		return executor.Result{Status: "no background processes"}, nil
	}
	now := time.Now()
	for _, i := range all {
		age := now.Sub(i.Started)
		if i.State != Running {
			age = i.Ended.Sub(i.Started)
		}
		keep := ""
		if i.Keep {
			keep = " [kept after exit]"
		}
		fmt.Fprintf(tc.Output, "%s  %s  %s  %d bytes of output%s  $ %s\n", i.ID, i.Describe(),
			age.Round(time.Second), i.Size, keep, oneLine(i.Command, 120))
	}
	return executor.Result{Status: fmt.Sprintf("%d background process(es)", len(all))}, nil
}

func (t Tool) output(tc *executor.ToolContext, p Params) (executor.Result, error) {
	q := Query{Offset: p.Offset, Tail: p.Tail, Max: p.MaxBytes}
	if q.Offset == nil && q.Tail == 0 {
		q.Tail = defaultTail
	}
	c, err := t.M.Output(p.ID, q)
	if errors.Is(err, ErrUnknownID) {
		return executor.Result{Status: err.Error(), IsError: true}, nil
	}
	if err != nil {
		return executor.Result{}, err
	}
	_, _ = tc.Output.Write(c.Data)
	var notes []string
	if p.Offset != nil && c.Start > *p.Offset {
		notes = append(notes, fmt.Sprintf("bytes %d–%d were rotated out of the log", *p.Offset, c.Start))
	}
	status := fmt.Sprintf("%s %s; bytes %d–%d of %d; next offset %d", c.Info.ID, c.Info.Describe(), c.Start, c.End, c.Size, c.End)
	if len(notes) > 0 {
		status += "; " + strings.Join(notes, "; ")
	}
	return executor.Result{Status: status}, nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
