package files

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"golang.org/x/sys/unix"
)

// The walk honours .gitignore with go-git's matcher
// (plumbing/format/gitignore): go-git is the maintained Go implementation
// of git (v5 released monthly), and its matcher takes each .gitignore's
// patterns with the directory they came from, which is exactly how nested
// .gitignore files apply. sabhiram/go-gitignore, the other common choice,
// has had no release since 2021 and matches one file's patterns only.

// entry is one file the walk found.
type entry struct {
	path string // absolute
	rel  string // relative to the walk's root, with forward slashes
	d    fs.DirEntry
	// dirfd is the open directory holding it, valid only during visit.
	dirfd int
}

// modTime is the entry's modification time, from its directory's open
// descriptor (one fstatat that does not walk the path again: glob sorts
// every match by it).
func (e entry) modTime() time.Time {
	var st unix.Stat_t
	if err := unix.Fstatat(e.dirfd, e.d.Name(), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return time.Time{}
	}
	return time.Unix(st.Mtim.Unix())
}

// walker lists the regular files under a root in parallel, skipping what
// .gitignore excludes, .git itself, symlinks (as ripgrep does: a link is
// not followed, so a link to the vault is never read through a walk) and
// every directory the mask check refuses. visit must call allowed before
// it shows or reads a file.
type walker struct {
	check Check
	// visit is called from several goroutines at once.
	visit func(e entry)
	// want, if set, says whether a file (by its directory's path relative
	// to the root and its name) is one the call could show; one it is not
	// is skipped before anything else is done for it.
	want func(dirRel, name string) bool
	// masked counts the paths the mask check refused.
	masked atomic.Int64
	stop   atomic.Bool
}

type dirTask struct {
	abs   string
	rel   string   // "" for the root
	comps []string // rel's components below the repository root
	ps    []gitignore.Pattern
}

// globWant is a walker's want for a glob pattern: a pattern of the form
// **/NAME (NAME without a slash) matches the name alone, without building
// the file's path; any other is matched against the relative path.
func globWant(pattern string) func(dirRel, name string) bool {
	if base, ok := strings.CutPrefix(pattern, "**/"); ok && !strings.ContainsAny(base, "/{") && !strings.Contains(base, "**") {
		return func(_, name string) bool {
			ok, _ := path.Match(base, name)
			return ok
		}
	}
	return func(dirRel, name string) bool {
		rel := name
		if dirRel != "" {
			rel = dirRel + "/" + name
		}
		ok, _ := doublestar.Match(pattern, rel)
		return ok
	}
}

// walk lists root. base is root's path components below the repository
// root (the nearest ancestor with .git), ps the patterns of the .gitignore
// files between that repository root and root.
func (w *walker) walk(ctx context.Context, root string) {
	base, ps := repoPatterns(root)
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   = []dirTask{{abs: root, comps: base, ps: ps}}
		pending = 1
	)
	workers := runtime.GOMAXPROCS(0) * 2
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				for len(queue) == 0 && pending > 0 {
					cond.Wait()
				}
				if len(queue) == 0 {
					mu.Unlock()
					return
				}
				t := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				mu.Unlock()
				var subs []dirTask
				if ctx.Err() == nil && !w.stop.Load() {
					subs = w.dir(t)
				}
				mu.Lock()
				queue = append(queue, subs...)
				pending += len(subs) - 1
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// dir reads one directory, visits its files and returns its subdirectories.
func (w *walker) dir(t dirTask) []dirTask {
	d, err := os.Open(t.abs)
	if err != nil {
		return nil // unreadable: skipped, as git and ripgrep do
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil
	}
	dirfd := int(d.Fd())
	ps := t.ps
	for _, e := range ents {
		if e.Name() == ".gitignore" && e.Type().IsRegular() {
			ps = append(ps[:len(ps):len(ps)], readIgnore(filepath.Join(t.abs, ".gitignore"), t.comps)...)
			break
		}
	}
	var m gitignore.Matcher
	if len(ps) > 0 {
		m = gitignore.NewMatcher(ps)
	}
	var subs []dirTask
	// scratch holds a file's path components for the matcher, reused:
	// the matcher keeps nothing, and a walk passes 50,000 files.
	scratch := append(make([]string, 0, len(t.comps)+1), t.comps...)
	for _, e := range ents {
		name := e.Name()
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 || (!typ.IsDir() && !typ.IsRegular()) {
			continue
		}
		isDir := typ.IsDir()
		if isDir && name == ".git" {
			continue
		}
		// A file the call does not want costs no more than this test.
		if !isDir && w.want != nil && !w.want(t.rel, name) {
			continue
		}
		var comps []string
		if isDir {
			comps = append(t.comps[:len(t.comps):len(t.comps)], name)
		} else {
			comps = append(scratch[:len(t.comps)], name)
		}
		if m != nil && m.Match(comps, isDir) {
			continue
		}
		abs := t.abs + string(filepath.Separator) + name
		// A directory is checked before it is read; a file by visit, once
		// it is one the call would show (glob's pattern, grep's filter).
		if isDir && !w.allowed(abs) {
			continue
		}
		rel := name
		if t.rel != "" {
			rel = t.rel + "/" + name
		}
		if isDir {
			subs = append(subs, dirTask{abs: abs, rel: rel, comps: comps, ps: ps})
			continue
		}
		w.visit(entry{path: abs, rel: rel, d: e, dirfd: dirfd})
	}
	return subs
}

// allowed asks the mask check about path and counts a refusal.
func (w *walker) allowed(path string) bool {
	if _, masked := w.check(path); masked || procPath(path) {
		w.masked.Add(1)
		return false
	}
	return true
}

// repoPatterns finds the repository root above root (the nearest ancestor
// holding .git) and returns root's components below it and the patterns of
// the .gitignore files from the repository root down to root's parent.
// Outside a repository, root is its own base.
func repoPatterns(root string) ([]string, []gitignore.Pattern) {
	var chain []string
	repo := ""
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			repo = d
			break
		}
		chain = append(chain, d)
		if d == filepath.Dir(d) {
			return nil, nil
		}
	}
	if repo == root {
		return nil, nil
	}
	rel, err := filepath.Rel(repo, root)
	if err != nil {
		return nil, nil
	}
	base := strings.Split(filepath.ToSlash(rel), "/")
	var ps []gitignore.Pattern
	// From the repository root down to root's parent (root's own
	// .gitignore is read by the walk); chain holds root and its ancestors
	// below the repository root, nearest first.
	ordered := []string{repo}
	for i := len(chain) - 1; i >= 1; i-- {
		ordered = append(ordered, chain[i])
	}
	for _, d := range ordered {
		r, _ := filepath.Rel(repo, d)
		var domain []string
		if r != "." {
			domain = strings.Split(filepath.ToSlash(r), "/")
		}
		ps = append(ps, readIgnore(filepath.Join(d, ".gitignore"), domain)...)
	}
	return base, ps
}

// readIgnore parses one .gitignore whose directory is domain (components
// below the repository root). A missing or unreadable file has no patterns.
func readIgnore(path string, domain []string) []gitignore.Pattern {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}
