package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/vault"
	"github.com/urfave/cli/v2"
)

// A project may carry its own settings in .hush/config.toml (same format as
// config.toml). A cloned repository must not be able to hand itself your
// secrets, so until you trust the project — once, for that exact file —
// only the parts that narrow what tools may do apply: its deny and ask
// rules. Everything that widens (allow rules, MCP servers, tool settings,
// the turn's system prompt) waits for `hush trust`. A project never sets
// [model] (where your API key is sent) or [vault] (where secrets live).
//
// Trust is recorded in the user's config dir, keyed by the project's
// absolute path and the SHA-256 of its config file: a changed file is
// untrusted again until reviewed.

// projectConfigRel is the project config's path inside the project.
const projectConfigRel = ".hush/config.toml"

// trustFileName records trusted projects, in the config dir.
const trustFileName = "trusted-projects.json"

// projectConfig is a project's .hush/config.toml as found.
type projectConfig struct {
	dir  string // the project dir, symlinks resolved
	path string
	sum  string // sha256 of the file, hex
	cfg  config.Config
}

// loadProjectConfig reads the project config; nil when there is none.
func (a *app) loadProjectConfig() (*projectConfig, error) {
	dir, err := a.projectDir()
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	path := filepath.Join(dir, projectConfigRel)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &projectConfig{dir: dir, path: path, sum: hex.EncodeToString(sum[:]), cfg: cfg}, nil
}

// trustRecord is trusted-projects.json.
type trustRecord struct {
	Projects map[string]trustEntry `json:"projects"`
}

type trustEntry struct {
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trusted_at"`
}

func (a *app) trustPath() string { return filepath.Join(a.dirs.Config, trustFileName) }

func (a *app) readTrust() (trustRecord, error) {
	rec := trustRecord{Projects: map[string]trustEntry{}}
	data, err := os.ReadFile(a.trustPath())
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, fmt.Errorf("read %s: %w", a.trustPath(), err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s is damaged (delete it and trust your projects again): %w", a.trustPath(), err)
	}
	if rec.Projects == nil {
		rec.Projects = map[string]trustEntry{}
	}
	return rec, nil
}

func (a *app) writeTrust(rec trustRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(a.dirs.Config, 0o700); err != nil {
		return fmt.Errorf("create config dir: %w", err)
	}
	f, err := os.CreateTemp(a.dirs.Config, "."+trustFileName+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", a.trustPath(), err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", a.trustPath(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", a.trustPath(), err)
	}
	if err := os.Rename(f.Name(), a.trustPath()); err != nil {
		return fmt.Errorf("write %s: %w", a.trustPath(), err)
	}
	return nil
}

// trusted reports whether the user trusted exactly this file of this project.
func (a *app) trusted(p *projectConfig) (bool, error) {
	rec, err := a.readTrust()
	if err != nil {
		return false, err
	}
	e, ok := rec.Projects[p.dir]
	return ok && e.SHA256 == p.sum, nil
}

// withProjectConfig merges the project's config into the user's, as trust
// allows, and prints one line saying what was left out.
func (a *app) withProjectConfig(user config.Config) (config.Config, error) {
	p, err := a.loadProjectConfig()
	if err != nil || p == nil {
		return user, err
	}
	ok, err := a.trusted(p)
	if err != nil {
		return user, err
	}
	merged, notes := mergeProject(user, p.cfg, ok)
	if len(notes) > 0 {
		what := "not trusted"
		if ok {
			what = "trusted"
		}
		fmt.Fprintf(a.stderr, "hush: %s is %s: %s\n", p.path, what, strings.Join(notes, "; "))
	}
	return merged, nil
}

// mergeProject adds a project config to the user's. Untrusted, only deny
// and ask rules apply. Trusted, its rules are added, its MCP servers join
// the user's (the user's win a name clash), its [tools.NAME] replace the
// user's for that tool, and its [turn] values override. [model], [vault]
// and [project] are never taken from a project. The notes say what was
// ignored.
func mergeProject(user, proj config.Config, trusted bool) (config.Config, []string) {
	out := user
	out.Rules = slices.Clone(user.Rules)
	var notes []string
	for _, s := range []struct {
		name string
		v    any
		why  string
	}{
		{"[model]", proj.Model, "a project does not choose where your API key is sent"},
		{"[vault]", proj.Vault, "a project does not choose where your secrets live"},
		{"[unsafe]", proj.Unsafe, "a project never switches protections off"},
	} {
		if !reflect.ValueOf(s.v).IsZero() {
			notes = append(notes, fmt.Sprintf("its %s is ignored (%s)", s.name, s.why))
		}
	}
	if !trusted {
		var allows int
		for _, r := range proj.Rules {
			if r.Decision == "allow" {
				allows++
				continue
			}
			out.Rules = append(out.Rules, r)
		}
		var ignored []string
		if allows > 0 {
			ignored = append(ignored, fmt.Sprintf("%d allow rule(s)", allows))
		}
		if n := len(proj.MCP); n > 0 {
			withRefs := 0
			for _, s := range proj.MCP {
				if mcpHasSecretRefs(s) {
					withRefs++
				}
			}
			ignored = append(ignored, fmt.Sprintf("%d MCP server(s) (%d with secret references)", n, withRefs))
		}
		if len(proj.Tools) > 0 {
			ignored = append(ignored, "its [tools] settings")
		}
		if !reflect.ValueOf(proj.Turn).IsZero() {
			ignored = append(ignored, "its [turn] settings")
		}
		if len(ignored) > 0 {
			notes = append(notes, "ignoring "+strings.Join(ignored, ", ")+" until you review it and run `hush trust` (its deny and ask rules apply)")
		}
		return out, notes
	}
	out.Rules = append(out.Rules, proj.Rules...)
	if len(proj.MCP) > 0 {
		out.MCP = make(map[string]config.MCPServer, len(user.MCP)+len(proj.MCP))
		for n, s := range user.MCP {
			out.MCP[n] = s
		}
		for n, s := range proj.MCP {
			if _, clash := user.MCP[n]; clash {
				notes = append(notes, fmt.Sprintf("its MCP server %q is ignored (yours has that name)", n))
				continue
			}
			out.MCP[n] = s
		}
	}
	if len(proj.Tools) > 0 {
		out.Tools = make(map[string]config.ToolConfig, len(user.Tools)+len(proj.Tools))
		for n, t := range user.Tools {
			out.Tools[n] = t
		}
		for n, t := range proj.Tools {
			out.Tools[n] = t
		}
	}
	if proj.Turn.MaxSteps != 0 {
		out.Turn.MaxSteps = proj.Turn.MaxSteps
	}
	if proj.Turn.System != "" {
		out.Turn.System = proj.Turn.System
	}
	return out, notes
}

// mcpHasSecretRefs reports whether an MCP server's config refers to any
// secret (${NAME}) in its command, arguments, env or dir.
func mcpHasSecretRefs(s config.MCPServer) bool {
	texts := append([]string{s.Command, s.Dir}, s.Args...)
	for _, v := range s.Env {
		texts = append(texts, v)
	}
	for _, t := range texts {
		if refs, err := vault.References(t); err != nil || len(refs) > 0 {
			return true // a malformed reference counts: it is not plain text
		}
	}
	return false
}

func (a *app) trustCommand() *cli.Command {
	return &cli.Command{
		Name:  "trust",
		Usage: "apply this project's .hush/config.toml in full, after you review it",
		Description: "A project's .hush/config.toml can add rules, MCP servers and tool settings. Until you\n" +
			"trust it, only its deny and ask rules apply. `hush trust` shows what the file would\n" +
			"add and, after you confirm at your terminal, records the project and the file's\n" +
			"SHA-256 in trusted-projects.json in the config dir. Changing the file untrusts it.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "revoke", Usage: "stop trusting this project"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &exitError{2, errors.New("usage: hush trust [--revoke] (uses the project directory: --dir or the current one)")}
			}
			return a.trustProject(c.Bool("revoke"))
		},
	}
}

func (a *app) trustProject(revoke bool) error {
	if err := a.init(); err != nil {
		return err
	}
	p, err := a.loadProjectConfig()
	if err != nil {
		return err
	}
	rec, err := a.readTrust()
	if err != nil {
		return err
	}
	if revoke {
		dir, err := a.projectDir()
		if err != nil {
			return err
		}
		if p != nil {
			dir = p.dir
		} else if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if _, ok := rec.Projects[dir]; !ok {
			fmt.Fprintf(a.stdout, "%s was not trusted\n", dir)
			return nil
		}
		delete(rec.Projects, dir)
		if err := a.writeTrust(rec); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "no longer trusting %s\n", dir)
		return nil
	}
	if p == nil {
		dir, _ := a.projectDir()
		fmt.Fprintf(a.stdout, "no %s in %s; nothing to trust\n", projectConfigRel, dir)
		return nil
	}
	if e, ok := rec.Projects[p.dir]; ok && e.SHA256 == p.sum {
		fmt.Fprintf(a.stdout, "%s is already trusted (sha256 %s)\n", p.path, p.sum[:12])
		return nil
	}
	fmt.Fprintf(a.stdout, "%s (sha256 %s) would add:\n", p.path, p.sum[:12])
	for _, line := range describeProject(p.cfg) {
		fmt.Fprintf(a.stdout, "  %s\n", line)
	}
	// Only a person may trust: a tool has no controlling terminal, so it
	// cannot run `hush trust` to widen its own gate.
	tty, err := controllingTerminal()
	if err != nil {
		return &exitError{1, errors.New("trusting a project needs you at a terminal to confirm, and there is none here; nothing was changed")}
	}
	defer tty.Close()
	if !askTTY(tty, "Trust this file for this project? [y/N] ") {
		fmt.Fprintln(a.stdout, "not trusted; nothing was changed")
		return nil
	}
	rec.Projects[p.dir] = trustEntry{SHA256: p.sum, TrustedAt: time.Now().UTC()}
	if err := a.writeTrust(rec); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "trusted %s; a changed file needs `hush trust` again\n", p.path)
	return nil
}

// describeProject lists what a project config would add, for review.
func describeProject(c config.Config) []string {
	var out []string
	for _, r := range c.Rules {
		subj := r.Subject
		if subj == "" {
			subj = "*"
		}
		out = append(out, fmt.Sprintf("rule: %s %s for %s", r.Decision, r.Gate, subj))
	}
	for _, n := range slices.Sorted(maps.Keys(c.MCP)) {
		s := c.MCP[n]
		line := fmt.Sprintf("MCP server %s: %s %s", n, s.Command, strings.Join(s.Args, " "))
		if len(s.Env) > 0 {
			var env []string
			for k, v := range s.Env {
				if refs, _ := vault.References(v); len(refs) == 0 && (tools.IsCredentialName(k) || tools.IsCredentialValue(v)) {
					v = "<a literal credential, not shown>"
				}
				env = append(env, k+"="+v)
			}
			slices.Sort(env)
			line += " with env " + strings.Join(env, " ")
		}
		out = append(out, line)
	}
	for _, n := range slices.Sorted(maps.Keys(c.Tools)) {
		out = append(out, fmt.Sprintf("settings for the %s tool", n))
	}
	if c.Turn.System != "" {
		out = append(out, "a system prompt for the model")
	}
	if c.Turn.MaxSteps != 0 {
		out = append(out, fmt.Sprintf("max %d steps per turn", c.Turn.MaxSteps))
	}
	if len(out) == 0 {
		out = append(out, "nothing beyond what already applies")
	}
	return out
}
