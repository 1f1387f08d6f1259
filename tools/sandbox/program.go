package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// ReasonProgram is the reason of a program's own tree in its world.
const ReasonProgram = "the program this tool runs, as configured (an MCP server's command or script), read-only"

// programMarkers name the files that mark a program's own tree: the
// nearest directory above a program holding one of them is what it needs
// beside itself (its package, its module, its virtualenv's project).
var programMarkers = []string{"package.json", "go.mod", "pyproject.toml", "setup.py", "Cargo.toml", ".git"}

// ForProgram is c for one program the user configured (an MCP server:
// its command, its arguments, its working directory): each absolute path
// among them that the world leaves out brings its program's tree in,
// read-only — the nearest directory above it holding a package.json,
// go.mod, pyproject.toml, setup.py, Cargo.toml or .git (for a path inside
// node_modules, the directory holding node_modules), or else the file's
// own directory; never the home itself, never hush's dirs (the view hides
// those whatever is added). c itself is not changed; nil stays nil.
func (c *Config) ForProgram(paths ...string) *Config {
	if c == nil || c.Policy == nil {
		return c
	}
	view := c.Policy.view()
	var add []allowed
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		// The path as configured (a link, say) and where it leads.
		for _, q := range []string{filepath.Clean(p), resolvePath(filepath.Clean(p))} {
			if e, ok := Lookup(view, q); ok && (e.Mode == ReadOnly || e.Mode == ReadWrite) {
				continue // already in the world
			}
			if root := programRoot(q, c.Policy.opts.Home); root != "" {
				add = append(add, allowed{path: root, source: resolvePath(root), mode: ReadOnly, reason: ReasonProgram})
			}
		}
	}
	if len(add) == 0 {
		return c
	}
	p := &Policy{opts: c.Policy.opts, hush: c.Policy.hush, hide: c.Policy.hide}
	p.allow = append(append([]allowed(nil), c.Policy.allow...), add...)
	out := *c
	out.Policy = p
	return &out
}

// programRoot is the tree program src belongs to (ForProgram), "" when it
// would be the whole file system or the whole home.
func programRoot(src, home string) string {
	home = filepath.Clean(home)
	if i := strings.Index(src, "/node_modules/"); i > 0 {
		if d := src[:i]; d != home {
			return d
		}
		return src[:i] + "/node_modules"
	}
	dir := src
	if fi, err := os.Stat(src); err == nil && !fi.IsDir() {
		dir = filepath.Dir(src)
	}
	for d := dir; d != "/" && d != home; d = filepath.Dir(d) {
		for _, m := range programMarkers {
			if _, err := os.Lstat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
	}
	if dir == "/" || dir == home {
		return ""
	}
	return dir
}
