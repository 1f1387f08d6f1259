package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/hushcli/hush/executor"
)

// GlobName is the glob tool's name and gate subject.
const GlobName = "glob"

// MaxGlobResults bounds the paths one glob returns.
const MaxGlobResults = 1000

// Glob is the glob tool: paths by pattern, newest first.
type Glob struct {
	Check Check
	// WalkCheck, if set, checks the files the walk finds (see Tools).
	WalkCheck Check
}

// GlobParams are glob's arguments; the tags are its JSON schema.
type GlobParams struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

func (Glob) Name() string { return GlobName }

func (Glob) Description() string {
	return "Find files by glob pattern (`**/*.go`, `src/**/*_test.ts`, `*.{yml,yaml}`), newest first, " +
		"skipping what .gitignore excludes, .git and symlinks. Prefer it to `find` or `ls -R` in bash. " +
		"`path` is the directory to search (default: the project directory); searching outside the project asks the user. " +
		fmt.Sprintf("At most %d paths are listed.", MaxGlobResults)
}

func (Glob) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "glob relative to path; ** matches any number of directories"},
    "path": {"type": "string", "description": "directory to search (default: the project directory)"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

func (g Glob) parse(tc *executor.ToolContext, raw json.RawMessage) (GlobParams, target, error) {
	var p GlobParams
	if err := executor.DecodeArgs(raw, &p); err != nil {
		return p, target{}, err
	}
	if p.Pattern == "" {
		return p, target{}, errors.New("bad arguments: pattern is empty")
	}
	p.Pattern = strings.TrimPrefix(p.Pattern, "./")
	if !doublestar.ValidatePattern(p.Pattern) {
		return p, target{}, fmt.Errorf("bad arguments: %q is not a valid glob pattern", p.Pattern)
	}
	t, err := searchRoot(g.Check, tc.Dir, p.Path)
	return p, t, err
}

// searchRoot resolves the directory glob and grep search.
func searchRoot(check Check, dir, path string) (target, error) {
	if path == "" {
		path = "."
	}
	t, err := resolve(check, dir, path)
	if err != nil {
		return t, err
	}
	if !t.Exists {
		return t, fmt.Errorf("%s does not exist", display(dir, t.Shown))
	}
	return t, nil
}

// Preview implements executor.Previewer.
func (g Glob) Preview(_ context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Preview, error) {
	_, t, err := g.parse(tc, raw)
	if err != nil {
		return executor.Preview{}, err
	}
	return readPreview("glob", t), nil
}

// Run implements executor.Tool.
func (g Glob) Run(ctx context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Result, error) {
	p, t, err := g.parse(tc, raw)
	if err != nil {
		return executor.Result{}, err
	}
	type hit struct {
		rel string
		mod time.Time
	}
	var (
		mu   sync.Mutex
		hits []hit
	)
	var w *walker
	w = &walker{check: walkCheckOf(g.Check, g.WalkCheck), want: globWant(p.Pattern), visit: func(e entry) {
		if !w.allowed(e.path) {
			return
		}
		mod := e.modTime()
		mu.Lock()
		hits = append(hits, hit{e.rel, mod})
		mu.Unlock()
	}}
	w.walk(ctx, t.Real)
	if ctx.Err() != nil {
		return executor.Result{}, ctx.Err()
	}
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mod.Equal(hits[j].mod) {
			return hits[i].mod.After(hits[j].mod)
		}
		return hits[i].rel < hits[j].rel
	})
	prefix := ""
	if rel := display(tc.Dir, t.Shown); rel != "." {
		prefix = strings.TrimSuffix(rel, "/") + "/"
	}
	var b strings.Builder
	for i, h := range hits {
		if i == MaxGlobResults {
			break
		}
		b.WriteString(prefix)
		b.WriteString(h.rel)
		b.WriteByte('\n')
	}
	if _, err := fmt.Fprint(tc.Output, b.String()); err != nil {
		return executor.Result{}, err
	}
	status := fmt.Sprintf("%d files match %s", len(hits), p.Pattern)
	switch {
	case len(hits) == 0:
		status = "no files match " + p.Pattern
	case len(hits) == 1:
		status = "1 file matches " + p.Pattern
	}
	if len(hits) > MaxGlobResults {
		status += fmt.Sprintf("; the newest %d are listed: narrow the pattern or path", MaxGlobResults)
	}
	if n := w.masked.Load(); n > 0 {
		status += fmt.Sprintf("; %d masked paths skipped", n)
	}
	return executor.Result{Status: status}, nil
}
