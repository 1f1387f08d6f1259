package dockerbash

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hushcli/hush/tools/sandbox"
)

// defaultMasks are the project masks every tool shares; tools/sandbox/masks.go
// owns the list, and config's `mask` adds to it here.
func defaultMasks() []string { return sandbox.ProjectMaskPatterns() }

// mask is one path of the project hidden inside the container.
type mask struct {
	// Rel is the path relative to the project root, slash-separated.
	Rel string
	// Dir: hidden by an empty read-only tmpfs; otherwise an empty 0444
	// file is bound over it.
	Dir bool
}

// String is how tests and messages show a mask.
func (m mask) String() string {
	if m.Dir {
		return "tmpfs /app/" + m.Rel
	}
	return "empty /app/" + m.Rel
}

// matchMask is the shared rule (sandbox.MatchProjectMask).
func matchMask(patterns []string, rel string) bool { return sandbox.MatchProjectMask(patterns, rel) }

// ValidMasks reports a malformed mask pattern: it would match nothing and
// so hide nothing, which must not pass silently. The session checks config
// with it at start, and Run checks again.
func ValidMasks(patterns []string) error { return sandbox.ValidMaskPatterns(patterns) }

// planMasks walks the whole project under root (already free of symlinks)
// and lists what the container must not see: every path matching patterns
// (directories whole), the directories in hide that lie inside root (hush's
// data dir, should someone put it there), and every directory the walk
// cannot read — it cannot be checked for a .env, so it is hidden whole
// (the engine reads as root and would see inside it).
//
// A matching symlink is followed on the host: if it leads to a path inside
// the project, that path is hidden (in the container the link resolves to
// it through /app); if it leads outside, the container cannot follow it to
// the host file, so there is nothing to hide.
//
// The walk is recursive because a nested .env (a monorepo's
// services/api/.env) is as secret as the root one; it reads directory
// entries only, never a file.
func planMasks(root string, patterns, hide []string) ([]mask, error) {
	found := map[string]bool{} // rel → is dir
	hidden := map[string]bool{}
	for _, h := range hide {
		real, err := filepath.EvalSymlinks(h)
		if err != nil {
			continue // not there: nothing to hide
		}
		if rel, ok := within(root, real); ok && rel != "." {
			hidden[rel] = true
		}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			if d != nil && d.IsDir() {
				rel, _ := within(root, p)
				found[rel] = true
				return fs.SkipDir
			}
			return nil // vanished while walking
		}
		if p == root {
			return nil
		}
		rel, _ := within(root, p)
		if hidden[rel] {
			found[rel] = true
			return fs.SkipDir
		}
		if !matchMask(patterns, rel) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil // dangling: nothing to read through it
			}
			trel, ok := within(root, target)
			if !ok || trel == "." {
				return nil
			}
			fi, err := os.Stat(target)
			if err != nil {
				return nil
			}
			found[trel] = fi.IsDir()
			return nil
		}
		found[rel] = d.IsDir()
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rels := make([]string, 0, len(found))
	for rel := range found {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	// A path under a hidden directory is already gone; mounting over it
	// would make the engine create a mount point on a read-only tmpfs.
	var out []mask
	for _, rel := range rels {
		covered := false
		for _, m := range out {
			if m.Dir && strings.HasPrefix(rel, m.Rel+"/") {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, mask{Rel: rel, Dir: found[rel]})
		}
	}
	return out, nil
}

// within returns p relative to root, slash-separated, if p is root or
// below it.
func within(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// ensureEmptyFile returns the path of an empty, read-only regular file in
// dir (sandbox.EnsureEmptyFile).
func ensureEmptyFile(dir string) (string, error) { return sandbox.EnsureEmptyFile(dir) }
