package files

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	hits, total, w := globWalk(ctx, walkCheckOf(g.Check, g.WalkCheck), p.Pattern, t.Real, 0)
	if ctx.Err() != nil {
		return executor.Result{}, ctx.Err()
	}
	prefix := ""
	if rel := display(tc.Dir, t.Shown); rel != "." {
		prefix = strings.TrimSuffix(rel, "/") + "/"
	}
	var b strings.Builder
	for _, h := range hits {
		b.WriteString(prefix)
		b.WriteString(h.rel)
		b.WriteByte('\n')
	}
	if _, err := fmt.Fprint(tc.Output, b.String()); err != nil {
		return executor.Result{}, err
	}
	status := fmt.Sprintf("%d files match %s", total, p.Pattern)
	switch {
	case total == 0:
		status = "no files match " + p.Pattern
	case total == 1:
		status = "1 file matches " + p.Pattern
	}
	if total > MaxGlobResults {
		status += fmt.Sprintf("; the newest %d are listed: narrow the pattern or path", MaxGlobResults)
	}
	if n := w.masked.Load(); n > 0 {
		status += fmt.Sprintf("; %d masked paths skipped", n)
	}
	status += w.unreadableNote(prefix)
	return executor.Result{Status: status}, nil
}

// globWalk lists the files under root that pattern matches, newest first,
// at most MaxGlobResults of them, and how many matched in all, walking
// with parallel goroutines (0: the walker's default).
func globWalk(ctx context.Context, check Check, pattern, root string, parallel int) ([]globHit, int, *walker) {
	w := &walker{check: check, want: globWant(pattern), parallel: parallel}
	// Each walk goroutine keeps its own matches, at most 2×MaxGlobResults:
	// past that it keeps the newest MaxGlobResults, so a huge tree costs
	// bounded memory and the listing is the same as sorting them all.
	found := make([]globHits, w.workers())
	w.visit = func(e entry) {
		if !w.allowed(e.path) {
			return
		}
		found[e.worker].add(globHit{e.rel, e.modTime()})
	}
	w.walk(ctx, root)
	var all globHits
	for _, f := range found {
		all.n += f.n
		all.hits = append(all.hits, f.hits...)
	}
	all.newest()
	return all.hits, all.n, w
}

// globHit is one match: its path relative to the walk's root and its
// mtime in Unix nanoseconds.
type globHit struct {
	rel string
	mod int64
}

// globHits holds the newest matches one walk goroutine found, and how
// many it found in all.
type globHits struct {
	hits []globHit
	n    int
}

func (g *globHits) add(h globHit) {
	g.n++
	g.hits = append(g.hits, h)
	if len(g.hits) >= 2*MaxGlobResults {
		g.newest()
	}
}

// newest sorts the hits newest first (ties by path, so the order is the
// same on every run) and keeps the first MaxGlobResults.
func (g *globHits) newest() {
	slices.SortFunc(g.hits, func(a, b globHit) int {
		if c := cmp.Compare(b.mod, a.mod); c != 0 {
			return c
		}
		return strings.Compare(a.rel, b.rel)
	})
	if len(g.hits) > MaxGlobResults {
		clear(g.hits[MaxGlobResults:])
		g.hits = g.hits[:MaxGlobResults]
	}
}
