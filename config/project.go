package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hushcli/hush/config/atomicfile"
	"github.com/hushcli/hush/config/userfile"
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

// ProjectFile is the project config's path inside the project.
const ProjectFile = ".hush/config.toml"

// TrustFileName records trusted projects, in the config dir.
const TrustFileName = "trusted-projects.json"

// Project is a project's .hush/config.toml as found.
type Project struct {
	Dir    string // the project dir, symlinks resolved
	Path   string
	SHA256 string // of the file, hex
	Config Config
}

// RealDir is dir with symlinks resolved, the key trust is recorded under;
// dir itself when it cannot be resolved.
func RealDir(dir string) string {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// LoadProject reads the config of the project at dir; nil when there is none.
func LoadProject(dir string) (*Project, error) {
	dir = RealDir(dir)
	path := filepath.Join(dir, ProjectFile)
	// Inside the project only: a tool may have made it a symlink to the
	// vault, whose lines a parse error would quote.
	data, _, err := userfile.ReadIn(context.Background(), dir, path, userfile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	// The bytes hashed for trust are the bytes parsed.
	cfg, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	return &Project{Dir: dir, Path: path, SHA256: hex.EncodeToString(sum[:]), Config: cfg}, nil
}

// TrustRecord is trusted-projects.json: the trusted file of each project
// dir, by SHA-256.
type TrustRecord struct {
	Projects map[string]TrustEntry `json:"projects"`
}

// TrustEntry is one trusted project.
type TrustEntry struct {
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trusted_at"`
}

// TrustStore is trusted-projects.json in the config dir.
type TrustStore struct{ Path string }

// NewTrustStore is the store in configDir.
func NewTrustStore(configDir string) TrustStore {
	return TrustStore{Path: filepath.Join(configDir, TrustFileName)}
}

// Read returns the record; a missing file is an empty one.
func (s TrustStore) Read() (TrustRecord, error) {
	rec := TrustRecord{Projects: map[string]TrustEntry{}}
	data, err := userfile.Read(context.Background(), s.Path, userfile.ConfigLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, fmt.Errorf("read %s: %w", s.Path, err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s is damaged (delete it and trust your projects again): %w", s.Path, err)
	}
	if rec.Projects == nil {
		rec.Projects = map[string]TrustEntry{}
	}
	return rec, nil
}

// Write replaces the record, atomically.
func (s TrustStore) Write(rec TrustRecord) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("create config dir: %w", err)
	}
	if err := atomicfile.WriteFile(s.Path, append(data, '\n'), nil); err != nil {
		return fmt.Errorf("write %s: %w", s.Path, err)
	}
	return nil
}

// Trusted reports whether the user trusted exactly this file of this project.
func (s TrustStore) Trusted(p *Project) (bool, error) {
	rec, err := s.Read()
	if err != nil {
		return false, err
	}
	e, ok := rec.Projects[p.Dir]
	return ok && e.SHA256 == p.SHA256, nil
}

// WithProject merges the config of the project at dir into user's, as the
// trust store allows. note is one line saying what was left out ("" when
// nothing was, or there is no project config).
func WithProject(user Config, trust TrustStore, dir string) (merged Config, note string, err error) {
	p, err := LoadProject(dir)
	if err != nil || p == nil {
		return user, "", err
	}
	ok, err := trust.Trusted(p)
	if err != nil {
		return user, "", err
	}
	merged, notes := MergeProject(user, p.Config, ok)
	if len(notes) > 0 {
		what := "not trusted"
		if ok {
			what = "trusted"
		}
		note = fmt.Sprintf("%s is %s: %s", p.Path, what, strings.Join(notes, "; "))
	}
	return merged, note, nil
}

// MergeProject adds a project config to the user's. Untrusted, only deny
// and ask rules apply. Trusted, its rules are added, its MCP servers join
// the user's (the user's win a name clash), its [tools.NAME] replace the
// user's for that tool, its [network] allow is added, and its [turn]
// values override. Its [network] deny applies trusted or not. [model],
// [vault], [secrets] and [project] are never taken from a project. The notes say what was
// ignored.
func MergeProject(user, proj Config, trusted bool) (Config, []string) {
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
		{"[telemetry]", proj.Telemetry, "a project does not choose where your audit trail is sent"},
	} {
		if !reflect.ValueOf(s.v).IsZero() {
			notes = append(notes, fmt.Sprintf("its %s is ignored (%s)", s.name, s.why))
		}
	}
	// A project may hide more and require the sandbox; it never re-opens
	// what the sandbox hides.
	out.Sandbox.Hide = append(slices.Clone(user.Sandbox.Hide), proj.Sandbox.Hide...)
	out.Sandbox.Required = user.Sandbox.Required || proj.Sandbox.Required
	// The constructed world is the user's choice alone: a project never
	// falls back to the masks.
	out.Sandbox.Constructed = user.Sandbox.Constructed
	if c := proj.Sandbox.Constructed; c != nil && !*c {
		notes = append(notes, "its [sandbox] constructed = false is ignored (a project never narrows the sandbox back to masks)")
	}
	if len(proj.Sandbox.Allow) > 0 || proj.Sandbox.Docker {
		notes = append(notes, "its [sandbox] allow and docker are ignored (a project never re-opens what the sandbox hides)")
	}
	// A project may close hosts; it opens them only once trusted, and it
	// never says where your secrets may be sent.
	out.Network.Deny = append(slices.Clone(user.Network.Deny), proj.Network.Deny...)
	if len(proj.Secrets) > 0 {
		notes = append(notes, "its [secrets] are ignored (a project does not choose where your secrets may be sent)")
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
				if HasSecretRefs(s) {
					withRefs++
				}
			}
			ignored = append(ignored, fmt.Sprintf("%d MCP server(s) (%d with secret references)", n, withRefs))
		}
		if len(proj.Tools) > 0 {
			ignored = append(ignored, "its [tools] settings")
		}
		if len(proj.Network.Allow) > 0 {
			ignored = append(ignored, "its [network] allow")
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
	out.Network.Allow = append(slices.Clone(user.Network.Allow), proj.Network.Allow...)
	if len(proj.MCP) > 0 {
		out.MCP = make(map[string]MCPServer, len(user.MCP)+len(proj.MCP))
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
		out.Tools = make(map[string]ToolConfig, len(user.Tools)+len(proj.Tools))
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

// HasSecretRefs reports whether an MCP server's config refers to any
// secret (${NAME}) in its command, arguments, env or dir, or signs in
// with OAuth (whose tokens are in the vault).
func HasSecretRefs(s MCPServer) bool {
	if s.OAuth {
		return true // it reads its tokens from the vault
	}
	texts := append([]string{s.Command, s.Dir, s.URL}, s.Args...)
	for _, v := range s.Env {
		texts = append(texts, v)
	}
	for _, v := range s.Headers {
		texts = append(texts, v)
	}
	for _, t := range texts {
		if refs, err := References(t); err != nil || len(refs) > 0 {
			return true // a malformed reference counts: it is not plain text
		}
	}
	return false
}
