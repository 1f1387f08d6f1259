package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"golang.org/x/sys/unix"

	"github.com/hushcli/hush/config/userfile"
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
	rel  string // relative to the walk's root, with forward slashes (a suffix of path)
	// worker is the walk goroutine visiting it, 0 ≤ worker < walker.workers():
	// visit keeps per-worker state without a lock.
	worker int
	// dir and i name it in its directory's listing, open as dirfd; all
	// three are valid only during visit.
	dir   *dirReader
	i     int
	dirfd int
}

// modTime is the entry's modification time in Unix nanoseconds (the
// smallest int64 if it cannot be stat'ed: it sorts last), from its
// directory's open descriptor: one stat that does not walk the path again
// and, on Linux, asks for the mtime alone. glob sorts every match by it.
func (e entry) modTime() int64 {
	if mtime, err := e.dir.stat(e.dirfd, e.i); err == nil {
		return mtime
	}
	return math.MinInt64
}

// walker lists the regular files under a root in parallel, skipping what
// .gitignore excludes, .git itself, symlinks (as ripgrep does: a link is
// not followed, so a link to the vault is never read through a walk) and
// every directory the mask check refuses. visit must call allowed before
// it shows or reads a file.
type walker struct {
	check Check
	// visit is called from several goroutines at once (see entry.worker).
	visit func(e entry)
	// want, if set, says whether a file (by its directory's path relative
	// to the root and its name) is one the call could show; one it is not
	// is skipped before anything else is done for it.
	want func(dirRel, name string) bool
	// masked counts the paths the mask check refused.
	masked atomic.Int64
	stop   atomic.Bool
	// parallel, if set, is how many goroutines walk (see workers).
	parallel int

	// unreadable counts the directories that could not be listed;
	// firstUnreadable is the one first by path, for the note.
	unreadable atomic.Int64
	mu         sync.Mutex
	firstRel   string
	firstErr   error
	rootLen    int // len of the root and its separator: rel is path[rootLen:]
}

// workers is how many goroutines walk: parallel, or twice the processors
// so that one blocked on a cold directory read or stat leaves its
// processor to another (ripgrep too walks on every core).
func (w *walker) workers() int {
	if w.parallel > 0 {
		return w.parallel
	}
	return runtime.GOMAXPROCS(0) * 2
}

type dirTask struct {
	abs   string
	rel   string   // "" for the root; else abs[rootLen:]
	comps []string // rel's components below the repository root
	ps    []gitignore.Pattern
}

// globWant is a walker's want for a glob pattern: a pattern of the form
// **/NAME (NAME without a slash) matches the name alone, without building
// the file's path; any other is matched against the relative path.
func globWant(pattern string) func(dirRel, name string) bool {
	if base, ok := strings.CutPrefix(pattern, "**/"); ok && !strings.ContainsAny(base, "/{") && !strings.Contains(base, "**") {
		// *.go, the usual one, is a suffix test (path.Match was a tenth
		// of glob's time outside the system calls over 50,000 names).
		if suffix, ok := strings.CutPrefix(base, "*"); ok && !strings.ContainsAny(suffix, `*?[\`) {
			return func(_, name string) bool { return strings.HasSuffix(name, suffix) }
		}
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

// walk lists root (absolute, clean, symlinks resolved). base is root's
// path components below the repository root (the nearest ancestor with
// .git), ps the patterns of the .gitignore files between that repository
// root and root.
func (w *walker) walk(ctx context.Context, root string) {
	base, ps := repoPatterns(root)
	w.rootLen = len(root) + 1
	if strings.HasSuffix(root, "/") {
		w.rootLen = len(root)
	}
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   = []dirTask{{abs: root, comps: base, ps: ps}}
		pending = 1
	)
	var wg sync.WaitGroup
	for i := 0; i < w.workers(); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &dirReader{}
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
					subs = w.dir(ctx, i, r, t)
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

// dir reads one directory with the worker's reader, visits its files and
// returns its subdirectories.
func (w *walker) dir(ctx context.Context, worker int, r *dirReader, t dirTask) []dirTask {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NONBLOCK
	if t.rel != "" {
		// A directory the walk listed is opened without following a
		// symlink put in its place since.
		flags |= unix.O_NOFOLLOW
	}
	fd, err := openDir(t.abs, flags)
	if err == nil {
		defer unix.Close(fd)
		err = r.read(fd, t.abs)
	}
	if err != nil {
		w.unreadableDir(t.rel, err)
		return nil
	}
	ps := t.ps
	for i := range r.ents {
		if r.ents[i].name == ".gitignore" && r.typ(fd, i) == typeFile {
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
	for i := range r.ents {
		if i%256 == 255 && (ctx.Err() != nil || w.stop.Load()) {
			break // a huge directory stops when the call does
		}
		typ := r.typ(fd, i)
		if typ != typeDir && typ != typeFile {
			continue // symlinks, devices, FIFOs, sockets
		}
		name := r.ents[i].name
		isDir := typ == typeDir
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
		abs := t.abs + "/" + name
		if strings.HasSuffix(t.abs, "/") {
			abs = t.abs + name
		}
		// A directory is checked before it is read; a file by visit, once
		// it is one the call would show (glob's pattern, grep's filter).
		if isDir && !w.allowed(abs) {
			continue
		}
		rel := abs[w.rootLen:]
		if isDir {
			subs = append(subs, dirTask{abs: abs, rel: rel, comps: comps, ps: ps})
			continue
		}
		w.visit(entry{path: abs, rel: rel, worker: worker, dir: r, i: i, dirfd: fd})
	}
	return subs
}

// openDir opens a directory to list, retrying an interrupted open.
func openDir(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// unreadableDir notes a directory the walk could not list (permission
// denied, an I/O error). One that vanished, or became a file or a symlink,
// since its parent was listed is not a loss: it is skipped silently.
func (w *walker) unreadableDir(rel string, err error) {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return
	}
	w.unreadable.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.firstErr == nil || rel < w.firstRel {
		w.firstRel, w.firstErr = rel, err
	}
}

// unreadableNote is the status's note on the directories the walk could
// not list, "" if none; prefix is the root's path as the model sees it.
func (w *walker) unreadableNote(prefix string) string {
	n := w.unreadable.Load()
	if n == 0 {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	where := strings.TrimSuffix(prefix+w.firstRel, "/")
	if where == "" {
		where = "."
	}
	if n == 1 {
		return fmt.Sprintf("; could not list %s (%v): it was skipped", where, w.firstErr)
	}
	return fmt.Sprintf("; could not list %d directories (%s: %v, and %d more): they were skipped", n, where, w.firstErr, n-1)
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
// below the repository root). A missing or unreadable file has no patterns,
// and so has one that is not a regular file in its own directory (a named
// pipe there would block the walk; a link to /dev/zero would never end).
func readIgnore(path string, domain []string) []gitignore.Pattern {
	data, _, err := userfile.ReadIn(context.Background(), filepath.Dir(path), path, userfile.ConfigLimit)
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

// A directory's listing, read by one walk goroutine and reused for the
// next directory (its buffer grows to the largest one): the names are
// substrings of one string per directory, not one allocation each, and a
// file's type comes from the listing (d_type) without a stat.
type dirReader struct {
	buf  []byte
	ents []dent
}

// dent is one name in a listing.
type dent struct {
	name string
	typ  uint8 // typeUnknown when the file system did not say
	off  int   // Linux: where name starts in buf, NUL-terminated there
	// statted, mtime and err cache the one stat an entry may need (its
	// type on a file system without d_type, its mtime for glob).
	statted bool
	mtime   int64
	err     error
}

const (
	typeUnknown uint8 = iota
	typeFile
	typeDir
	typeOther // a symlink, device, FIFO or socket: never walked
)

// typ is entry i's type, stat'ed (without following a link) only when the
// listing did not say.
func (r *dirReader) typ(fd, i int) uint8 {
	if r.ents[i].typ == typeUnknown {
		_, _ = r.stat(fd, i)
	}
	return r.ents[i].typ
}

// stat stats entry i relative to its open directory, once; an entry the
// listing gave no type gets its type from it (typeOther where the stat
// failed: lstat then gives mode 0).
func (r *dirReader) stat(fd, i int) (mtime int64, err error) {
	d := &r.ents[i]
	if !d.statted {
		var mode uint32
		mode, d.mtime, d.err = r.lstat(fd, i)
		d.statted = true
		if d.typ == typeUnknown {
			d.typ = modeType(mode)
		}
	}
	return d.mtime, d.err
}

func modeType(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return typeFile
	case unix.S_IFDIR:
		return typeDir
	}
	return typeOther
}
