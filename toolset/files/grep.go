package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/hushcli/hush/executor"
)

// GrepName is the grep tool's name and gate subject.
const GrepName = "grep"

// Grep limits.
const (
	DefaultGrepMatches = 200
	MaxGrepMatches     = 2000
	MaxGrepContext     = 10
	// maxGrepLine cuts one matching line shown.
	maxGrepLine = 500
	// grepFileMax is read whole; larger files are read in blocks of it.
	grepBlock = 4 << 20
)

// Grep is the grep tool: a regular expression over the project's files.
type Grep struct {
	Check Check
	// WalkCheck, if set, checks the files the walk finds (see Tools).
	WalkCheck Check
}

// GrepParams are grep's arguments; the tags are its JSON schema.
type GrepParams struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path,omitempty"`
	Glob       string `json:"glob,omitempty"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	Context    int    `json:"context,omitempty"`
	MaxMatches int    `json:"max_matches,omitempty"`
}

func (Grep) Name() string { return GrepName }

func (Grep) Description() string {
	return "Search file contents with a regular expression (Go RE2 syntax) and list matching lines as path:line:text, " +
		"skipping what .gitignore excludes, .git, symlinks and binary files. Prefer it to grep or rg in bash. " +
		"`path` is a directory or file (default: the project directory; outside it asks the user), " +
		"`glob` filters files (`**/*.go`), `context` adds lines around each match (at most 10), " +
		fmt.Sprintf("`max_matches` caps the lines (default %d).", DefaultGrepMatches)
}

func (Grep) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "regular expression (RE2), matched per line"},
    "path": {"type": "string", "description": "directory or file to search (default: the project directory)"},
    "glob": {"type": "string", "description": "only files whose path relative to path matches this glob"},
    "ignore_case": {"type": "boolean"},
    "context": {"type": "integer", "minimum": 0, "maximum": 10, "description": "lines of context before and after each match"},
    "max_matches": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "most matching lines to list (default 200)"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

type grepCall struct {
	p      GrepParams
	t      target
	re     *regexp.Regexp
	lit    []byte // the whole pattern when it is a literal: bytes.Index is faster
	max    int
	isFile bool
}

func (g Grep) parse(tc *executor.ToolContext, raw json.RawMessage) (grepCall, error) {
	var c grepCall
	if err := executor.DecodeArgs(raw, &c.p); err != nil {
		return c, err
	}
	p := &c.p
	if p.Pattern == "" {
		return c, errors.New("bad arguments: pattern is empty")
	}
	if p.Context < 0 || p.Context > MaxGrepContext {
		return c, fmt.Errorf("bad arguments: context must be between 0 and %d", MaxGrepContext)
	}
	c.max = p.MaxMatches
	switch {
	case c.max == 0:
		c.max = DefaultGrepMatches
	case c.max < 0 || c.max > MaxGrepMatches:
		return c, fmt.Errorf("bad arguments: max_matches must be between 1 and %d", MaxGrepMatches)
	}
	if p.Glob != "" && !doublestar.ValidatePattern(p.Glob) {
		return c, fmt.Errorf("bad arguments: glob %q is not a valid glob pattern", p.Glob)
	}
	expr := "(?m)" + p.Pattern
	if p.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return c, fmt.Errorf("bad arguments: pattern %q is not a valid regular expression: %s", p.Pattern, se.Code)
		}
		return c, fmt.Errorf("bad arguments: pattern is not a valid regular expression: %v", err)
	}
	c.re = re
	if prefix, complete := re.LiteralPrefix(); complete && prefix != "" && !strings.Contains(prefix, "\n") {
		c.lit = []byte(prefix)
	}
	t, err := searchRoot(g.Check, tc.Dir, p.Path)
	if err != nil {
		return c, err
	}
	c.t = t
	if fi, err := os.Stat(t.Real); err == nil && fi.Mode().IsRegular() {
		c.isFile = true
	}
	return c, nil
}

// Preview implements executor.Previewer.
func (g Grep) Preview(_ context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Preview, error) {
	c, err := g.parse(tc, raw)
	if err != nil {
		return executor.Preview{}, err
	}
	return readPreview("grep", c.t), nil
}

// fileHits is what one file contributed.
type fileHits struct {
	rel   string
	lines []grepLine
	n     int  // matching lines
	more  bool // stopped at the cap with the file not searched to its end
}

// grepLine is one line shown: a match, a context line, or a "--" between
// groups of context.
type grepLine struct {
	no   int
	ctx  bool
	gap  bool
	text string
}

// Run implements executor.Tool.
func (g Grep) Run(ctx context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Result, error) {
	c, err := g.parse(tc, raw)
	if err != nil {
		return executor.Result{}, err
	}
	prefix := ""
	if rel := display(tc.Dir, c.t.Shown); rel != "." {
		prefix = strings.TrimSuffix(rel, "/") + "/"
	}
	var (
		mu      sync.Mutex
		results []fileHits
		total   atomic.Int64
		cut     atomic.Bool
	)
	var w *walker
	search := func(path, rel string) {
		if total.Load() >= int64(c.max) {
			cut.Store(true)
			w.stop.Store(true)
			return
		}
		fh, err := c.file(path, rel)
		if err != nil || fh.n == 0 {
			return
		}
		if total.Add(int64(fh.n)) > int64(c.max) || fh.more {
			cut.Store(true)
		}
		mu.Lock()
		results = append(results, fh)
		mu.Unlock()
	}
	if c.isFile {
		fh, err := c.file(c.t.Real, "")
		if err != nil {
			return executor.Result{}, err
		}
		if fh.n > 0 {
			results = append(results, fh)
			total.Store(int64(fh.n))
		}
		if fh.more {
			cut.Store(true)
		}
		prefix = strings.TrimSuffix(prefix, "/")
	} else {
		w = &walker{check: walkCheckOf(g.Check, g.WalkCheck), visit: func(e entry) {
			if w.allowed(e.path) {
				search(e.path, e.rel)
			}
		}}
		if c.p.Glob != "" {
			w.want = globWant(c.p.Glob)
		}
		w.walk(ctx, c.t.Real)
	}
	if ctx.Err() != nil {
		return executor.Result{}, ctx.Err()
	}
	sort.Slice(results, func(i, j int) bool { return results[i].rel < results[j].rel })
	var b bytes.Buffer
	shown := 0
	files := 0
	for _, fh := range results {
		if shown >= c.max {
			cut.Store(true)
			break
		}
		files++
		if b.Len() > 0 && c.p.Context > 0 {
			b.WriteString("--\n")
		}
		name := prefix + fh.rel
		for _, l := range fh.lines {
			if l.gap {
				b.WriteString("--\n")
				continue
			}
			sep := byte(':')
			if l.ctx {
				sep = '-'
			} else if shown >= c.max {
				break
			} else {
				shown++
			}
			if name != "" {
				b.WriteString(name)
				b.WriteByte(sep)
			}
			b.WriteString(strconv.Itoa(l.no))
			b.WriteByte(sep)
			b.WriteString(l.text)
			b.WriteByte('\n')
		}
	}
	if _, err := tc.Output.Write(b.Bytes()); err != nil {
		return executor.Result{}, err
	}
	var status string
	switch shown {
	case 0:
		status = "no matches for " + c.p.Pattern
	case 1:
		status = "1 matching line"
	default:
		status = fmt.Sprintf("%d matching lines in %d files", shown, files)
		if files == 1 {
			status = fmt.Sprintf("%d matching lines in 1 file", shown)
		}
	}
	if cut.Load() {
		status += fmt.Sprintf("; stopped at %d: narrow the pattern, path or glob, or raise max_matches", c.max)
	}
	if w != nil {
		if n := w.masked.Load(); n > 0 {
			status += fmt.Sprintf("; %d masked paths skipped", n)
		}
		status += w.unreadableNote(prefix)
	}
	return executor.Result{Status: status}, nil
}

// file searches one file. Binary files (a NUL in the first block) are
// skipped, as ripgrep does.
func (c *grepCall) file(path, rel string) (fileHits, error) {
	fh := fileHits{rel: rel}
	var f *os.File
	var err error
	if rel == "" { // the file the call named
		f, err = openChecked(path, path)
	} else {
		f, err = openWalked(path)
		if err != nil {
			err = fmt.Errorf("open %s: %w", rel, unwrapPathError(err))
		}
	}
	if err != nil {
		return fh, err
	}
	defer f.Close()
	if c.p.Context > 0 {
		return c.fileContext(f, fh)
	}
	bp := blockPool.Get().(*[]byte)
	defer blockPool.Put(bp)
	buf := *bp
	lineNo := 1 // number of the first line in data
	carry := 0  // bytes of a partial last line moved to buf's start
	for first := true; ; first = false {
		n, rerr := io.ReadFull(f, buf[carry:])
		data := buf[:carry+n]
		if first && bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			return fh, nil
		}
		eof := rerr != nil
		next := len(data)
		if !eof {
			// The last partial line waits for the next block (a block with
			// no newline at all is taken as one line).
			if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
				next = i + 1
			}
		}
		block := data[:next]
		pos, lineAt, cur := 0, 0, lineNo
		for pos < len(block) {
			var start int
			if c.lit != nil {
				i := bytes.Index(block[pos:], c.lit)
				if i < 0 {
					break
				}
				start = pos + i
			} else {
				loc := c.re.FindIndex(block[pos:])
				if loc == nil {
					break
				}
				start = pos + loc[0]
			}
			ls := bytes.LastIndexByte(block[:start], '\n') + 1
			le := len(block)
			if i := bytes.IndexByte(block[start:], '\n'); i >= 0 {
				le = start + i
			}
			line := block[ls:le]
			pos = le + 1
			// A match that runs across a newline is not a match of this line.
			if c.lit == nil && !c.re.Match(line) {
				continue
			}
			cur += bytes.Count(block[lineAt:ls], nl)
			lineAt = ls
			fh.lines = append(fh.lines, grepLine{no: cur, text: cutLine(line)})
			fh.n++
			if fh.n >= c.max {
				fh.more = true
				return fh, nil
			}
		}
		if eof {
			break
		}
		lineNo = cur + bytes.Count(block[lineAt:], nl)
		carry = copy(buf, data[next:])
		if carry == len(buf) {
			carry = 0 // one line longer than a block: its rest is not searched
		}
	}
	return fh, nil
}

var blockPool = sync.Pool{New: func() any { b := make([]byte, grepBlock); return &b }}

// fileContext searches f line by line, keeping context lines around each
// match and a "--" between groups that do not touch.
func (c *grepCall) fileContext(f *os.File, fh fileHits) (fileHits, error) {
	head := make([]byte, 8192)
	n, _ := io.ReadFull(f, head)
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return fh, nil
	}
	lr := newLineReader(io.MultiReader(bytes.NewReader(head[:n]), f))
	k := c.p.Context
	var before []grepLine
	after, lastShown := 0, 0
	for no := 1; ; no++ {
		text, err := lr.line()
		if text == nil && err != nil {
			break
		}
		l := grepLine{no: no, text: cutLine(text)}
		switch {
		case c.re.Match(text):
			if fh.n >= c.max {
				fh.more = true
				return fh, nil
			}
			if lastShown > 0 && len(before) > 0 && before[0].no > lastShown+1 || lastShown > 0 && len(before) == 0 && no > lastShown+1 {
				fh.lines = append(fh.lines, grepLine{gap: true})
			}
			fh.lines = append(fh.lines, before...)
			before = before[:0]
			fh.lines = append(fh.lines, l)
			fh.n++
			lastShown, after = no, k
		case after > 0:
			l.ctx = true
			fh.lines = append(fh.lines, l)
			lastShown = no
			after--
		default:
			l.ctx = true
			if len(before) == k {
				before = append(before[:0], before[1:]...)
			}
			before = append(before, l)
		}
		if err != nil {
			break
		}
	}
	return fh, nil
}

// cutLine is a line as shown: without a CR, cut when very long.
func cutLine(text []byte) string {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	if len(text) > maxGrepLine {
		return string(text[:maxGrepLine]) + "… [line cut]"
	}
	return string(text)
}
