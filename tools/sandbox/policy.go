package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The policy: the world a host tool lives in, as a list of what is in it.
//
// A Policy (NewPolicy) is built from a session's inputs — the working
// directory, the home, hush's own dirs, [sandbox] allow and hide — and
// View computes, on each call, the ordered list of Entries a tool's root is
// made of: each a path inside the sandbox (the same path as on the host),
// the host path bound there, a Mode and the Reason it is there. Nothing
// that is not listed exists in the tool's world: that is the point of an
// allowlist, where a list of things to hide was always one socket short.
//
// Who reads it: the sandbox builds the tool's root from it (namespace
// mode); the Landlock fallback turns it into rules (read-only and
// read-write paths); the in-process file tools ask Lookup before touching
// a path; `hush sandbox show` prints it (RenderView). The list of entries
// and their fields are a stable API.
//
// Building a view reads no directory of the home: it stats a fixed list of
// candidate paths (toolchains, caches, git's config), the PATH entries and
// the directories above the working directory, so a home of any size costs
// the same (BenchmarkPolicyViewLargeHome).

// Mode is what a tool may do with an entry.
type Mode int

const (
	// ReadOnly: bound from the host, readable, not writable (a mount flag
	// the tool cannot clear).
	ReadOnly Mode = iota
	// ReadWrite: bound from the host as it is.
	ReadWrite
	// Private: made for the tool, not the host's: a fresh tmpfs (Source
	// empty) or a directory hush owns (Source) — the root itself, the home,
	// /tmp, /dev, /proc.
	Private
	// Hidden: not in the view, although a listed directory holds it (the
	// project's .env family, hush's dirs, [sandbox] hide).
	Hidden
)

func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	case Private:
		return "private"
	case Hidden:
		return "hidden"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Entry is one path of a tool's world.
type Entry struct {
	// Path is where the tool sees it: absolute and clean, the same path as
	// on the host, so that paths in the project, in error messages and in
	// configuration mean the same inside and out.
	Path string
	// Source is the host path bound at Path (symlinks resolved): for
	// ReadOnly and ReadWrite always; for Private a directory hush owns, or
	// "" for a fresh tmpfs; "" for Hidden.
	Source string
	Mode   Mode
	// Link, when set, makes Path a symbolic link to Link instead (a
	// system's /bin -> usr/bin): Source is then "".
	Link string
	// Names, for a Hidden entry, are base-name patterns hidden at any depth
	// below Path (the project's .env family) instead of Path itself.
	Names []string
	// Kernel names what the kernel provides at Path for a Private entry:
	// "dev" (a minimal /dev), "proc" (the PID namespace's own /proc),
	// "tmpfs"; "" otherwise.
	Kernel string
	Reason string
}

// Reasons of the view's entries, as `hush sandbox show` prints them.
const (
	ReasonRoot       = "a fresh root: nothing of the host exists here but what is listed"
	ReasonProject    = "the project: the git work tree holding the working directory"
	ReasonProjectDir = "the working directory (no git work tree holds it)"
	ReasonGitDir     = "the work tree's git directory (a worktree's own), so git works from any subdirectory"
	ReasonGitCommon  = "the repository's common git directory (shared by its worktrees)"
	ReasonSystem     = "the system"
	ReasonSystemLink = "the system's link, as on the host"
	ReasonResolv     = "DNS: /etc/resolv.conf leads here (systemd-resolved's stub); the rest of /run is not in the view"
	ReasonDev        = "a minimal /dev: null, zero, full, random, urandom, tty, a devpts and a /dev/shm of its own; no disk"
	ReasonProc       = "the PID namespace's own /proc: only the tool's processes"
	ReasonSys        = "the kernel's devices and settings, readable only"
	ReasonTmp        = "a private /tmp, one per session: a background process's files are there for the session's later calls; no other program's sockets (X11, ssh, dbus)"
	ReasonTmpCall    = "a private /tmp, empty for each call"
	ReasonHome       = "a private home at $HOME's path: empty but for what is listed below"
	ReasonPathDir    = "a PATH directory in your home (a tool cannot plant a command there for your next session)"
	ReasonToolchain  = "a toolchain install"
	ReasonCache      = "a build or package cache"
	ReasonGitConfig  = "git's configuration (your identity)"
	ReasonAllow      = "listed in [sandbox] allow"
	ReasonAllowSock  = "a socket named in [sandbox] allow"
	ReasonHushHidden = "hush's own config or data: never in a tool's world"
	ReasonEnvFamily  = "the project's .env family, at any depth: hush reads it as a legacy source of secrets"
)

// homeToolchains are the usual toolchain installs, relative to the home:
// read-only, so a tool runs them and cannot change what the user's own
// shell (or the next session's MCP server) will run.
var homeToolchains = []string{
	".local/bin", ".local/lib", "go/bin", ".cargo/bin", ".rustup", ".nvm", ".pyenv", ".sdkman",
	".volta", ".bun/bin", ".deno/bin", ".local/share/pnpm", ".local/share/mise", ".asdf", ".goenv", ".rbenv", ".jenv",
}

// homeCaches are the usual build and package caches, relative to the home:
// read-write, so builds are as fast as outside and offline installs work.
var homeCaches = []string{
	".cache/go-build", "go/pkg/mod", "go/pkg/sumdb", ".npm", ".cache/pip", ".cache/yarn", ".yarn/berry/cache",
	".cargo/registry", ".cargo/git", ".m2/repository", ".gradle/caches", ".gradle/wrapper", ".cache/pnpm", ".cache/uv",
}

// homeGitConfig is git's configuration, read-only: the user's identity.
var homeGitConfig = []string{".gitconfig", ".config/git"}

// systemDirs are the system's directories, read-only where they exist.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap"}

// PolicyOptions are the inputs of a Policy. Paths are absolute.
type PolicyOptions struct {
	// Dir is the working directory: the project is the git work tree
	// holding it, or Dir itself. Required.
	Dir string
	// Home is $HOME: the private home keeps its path. "" for none.
	Home string
	// PathEnv is the tools' PATH: its directories under Home are listed.
	PathEnv string
	// Tmp is a directory hush owns, bound at /tmp for every call of the
	// session (background processes share it); "" gives each call an
	// empty tmpfs.
	Tmp string
	// HushDirs are hush's config and data dirs, and any other profile's
	// (the XDG defaults when HUSH_* moved them): never in the view, even
	// below a listed path.
	HushDirs []string
	// SSHAuthSock, GnuPGHome, RuntimeDir and DockerHost, from hush's
	// start-up snapshot, say where the sockets [sandbox] allow names are.
	SSHAuthSock, GnuPGHome, RuntimeDir, DockerHost string
	// Executable is hush's own binary: read-only wherever it is in the view
	// (a project that holds it, say).
	Executable string
	// Docker adds the Docker socket ([sandbox] docker = true).
	Docker bool
	// Allow adds paths ([sandbox] allow): "~/x" or absolute, read-only;
	// "rw:" before it for read-write; or a socket by name: "ssh-agent",
	// "gpg-agent", "docker". Hide takes paths out ([sandbox] hide).
	Allow, Hide []string
}

// Policy is one session's world for its host tools. It is immutable and
// safe for concurrent use.
type Policy struct {
	once   sync.Once
	cached []Entry // view(): the view as the session's first tool found it
	opts   PolicyOptions
	hush   []string // HushDirs, resolved
	allow  []allowed
	hide   []string
}

type allowed struct {
	path, source string
	mode         Mode
	reason       string
}

// SessionTmp is where a session's tools find their /tmp on the host: a
// directory of hush's, 0700, below one per user in the system's temporary
// directory. Prepare makes it when a tool first needs it; the session
// removes it when it closes.
func SessionTmp(session string) string {
	return filepath.Join(os.TempDir(), "hush-"+strconv.Itoa(os.Geteuid()), session)
}

// ensureTmp makes the session's /tmp (and the directory above it) if
// missing, and checks that both are directories of this user's that no one
// else may enter: another user who made /tmp/hush-<uid> first, or a link
// there, must not become a tool's /tmp.
func ensureTmp(dir string) error {
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("sandbox: make the session's /tmp: %w", err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(d, &st); err != nil {
			return fmt.Errorf("sandbox: the session's /tmp: %w", err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o077 != 0 {
			return fmt.Errorf("sandbox: %s is not a directory of yours that only you may enter; remove it", d)
		}
	}
	return nil
}

// SocketNames are the sockets [sandbox] allow may name.
var SocketNames = []string{"ssh-agent", "gpg-agent", "docker"}

// NewPolicy checks opts. It reads no directory.
func NewPolicy(opts PolicyOptions) (*Policy, error) {
	if !filepath.IsAbs(opts.Dir) {
		return nil, fmt.Errorf("sandbox policy: the working directory %q is not absolute", opts.Dir)
	}
	p := &Policy{opts: opts}
	for _, h := range opts.HushDirs {
		if h != "" {
			p.hush = append(p.hush, resolvePath(filepath.Clean(h)))
		}
	}
	expand := func(s string) (string, error) {
		switch {
		case s == "~" || strings.HasPrefix(s, "~/"):
			if opts.Home == "" {
				return "", fmt.Errorf("%q: no home directory to expand ~ in", s)
			}
			s = filepath.Join(opts.Home, s[1:])
		case strings.HasPrefix(s, "~"):
			return "", fmt.Errorf("%q: only ~/ (your own home) is expanded", s)
		case !filepath.IsAbs(s):
			s = filepath.Join(opts.Dir, s)
		}
		return filepath.Clean(s), nil
	}
	for _, a := range opts.Allow {
		a = strings.TrimSpace(a)
		if a == "" {
			return nil, errors.New("[sandbox] allow: an entry is empty")
		}
		if isSocketName(a) {
			for _, s := range p.namedSockets(a) {
				p.allow = append(p.allow, allowed{path: s, source: resolvePath(s), mode: ReadWrite, reason: ReasonAllowSock + " (" + a + ")"})
			}
			continue
		}
		mode := ReadOnly
		if rest, ok := strings.CutPrefix(a, "rw:"); ok {
			a, mode = rest, ReadWrite
		}
		path, err := expand(a)
		if err != nil {
			return nil, fmt.Errorf("[sandbox] allow: %w", err)
		}
		src := resolvePath(path)
		for _, h := range p.hush {
			if within(src, h) || within(path, h) {
				return nil, fmt.Errorf("[sandbox] allow %q: %w", a, ErrAllowHushDir)
			}
		}
		if src == "/" {
			return nil, fmt.Errorf("[sandbox] allow %q: the whole file system cannot be allowed", a)
		}
		p.allow = append(p.allow, allowed{path: path, source: src, mode: mode, reason: ReasonAllow})
	}
	if opts.Docker {
		for _, s := range p.namedSockets("docker") {
			p.allow = append(p.allow, allowed{path: s, source: resolvePath(s), mode: ReadWrite, reason: "the Docker socket ([sandbox] docker = true)"})
		}
	}
	for _, h := range opts.Hide {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, errors.New("[sandbox] hide: an entry is empty")
		}
		path, err := expand(h)
		if err != nil {
			return nil, fmt.Errorf("[sandbox] hide: %w", err)
		}
		if path == "/" || within(opts.Dir, path) {
			return nil, fmt.Errorf("[sandbox] hide %q would hide the working directory itself", h)
		}
		p.hide = append(p.hide, path)
	}
	return p, nil
}

func isSocketName(s string) bool {
	for _, n := range SocketNames {
		if s == n {
			return true
		}
	}
	return false
}

// namedSockets are the sockets of one name that exist now.
func (p *Policy) namedSockets(name string) []string {
	o := p.opts
	var cands []string
	switch name {
	case "ssh-agent":
		cands = append(cands, o.SSHAuthSock)
		if o.Home != "" {
			cands = append(cands, filepath.Join(o.Home, ".ssh", "agent.sock"))
		}
		for _, rt := range runtimeDirs(o.RuntimeDir) {
			for _, n := range sshAgentSockets {
				cands = append(cands, filepath.Join(rt, n))
			}
		}
	case "gpg-agent":
		for _, rt := range runtimeDirs(o.RuntimeDir) {
			cands = append(cands, filepath.Join(rt, "gnupg", "S.gpg-agent"))
		}
		for _, g := range []string{o.GnuPGHome, filepath.Join(o.Home, ".gnupg")} {
			if o.Home != "" || g == o.GnuPGHome {
				cands = append(cands, filepath.Join(g, "S.gpg-agent"))
			}
		}
	case "docker":
		cands = dockerSockets(o.DockerHost, o.RuntimeDir)
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range cands {
		if !filepath.IsAbs(c) || seen[c] {
			continue
		}
		seen[c] = true
		if fi, err := os.Stat(c); err == nil && fi.Mode()&os.ModeSocket != 0 {
			out = append(out, filepath.Clean(c))
		}
	}
	return out
}

// Project returns the project root for the working directory, the git
// directories it needs, and the reason for the root.
func (p *Policy) Project() (root string, gitDirs []Entry, reason string) {
	dir := filepath.Clean(p.opts.Dir)
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(filepath.Join(d, ".git"))
		if err == nil && p.projectRootOK(d) {
			root = d
			if fi.Mode().IsRegular() {
				gitDirs = worktreeGitDirs(d)
			}
			return root, gitDirs, ReasonProject
		}
		if d == "/" || d == filepath.Dir(d) {
			break
		}
	}
	return dir, nil, ReasonProjectDir
}

// projectRootOK: a work tree at /, at the home or above it (a dotfiles
// repository) would put the whole home in the view; the working directory
// alone is the project then.
func (p *Policy) projectRootOK(d string) bool {
	if d == "/" {
		return false
	}
	if p.opts.Home != "" && within(filepath.Clean(p.opts.Home), d) {
		return false
	}
	return true
}

// worktreeGitDirs reads a worktree's .git file ("gitdir: X") and X's
// commondir: the directories git writes for this work tree.
func worktreeGitDirs(root string) []Entry {
	b, err := readSmall(filepath.Join(root, ".git"))
	if err != nil {
		return nil
	}
	line := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	gd, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok || gd == "" {
		return nil
	}
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(root, gd)
	}
	gd = filepath.Clean(gd)
	out := []Entry{{Path: gd, Source: resolvePath(gd), Mode: ReadWrite, Reason: ReasonGitDir}}
	if c, err := readSmall(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		cd = filepath.Clean(cd)
		out = append(out, Entry{Path: cd, Source: resolvePath(cd), Mode: ReadWrite, Reason: ReasonGitCommon})
	}
	return out
}

// readSmall reads a small regular file (a .git file, a commondir) without
// following it into a FIFO or a device.
func readSmall(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return nil, fmt.Errorf("%s: not a small regular file", path)
	}
	return os.ReadFile(path)
}

// view is the view computed once, for every tool of the session: a
// toolchain installed during the session is in the next session's world.
func (p *Policy) view() []Entry {
	p.once.Do(func() { p.cached = p.View() })
	return p.cached
}

// View computes the tool's world now: the entries, parents before what
// they hold. Paths that do not exist on the host are left out.
func (p *Policy) View() []Entry {
	var out []Entry
	add := func(e Entry) { out = append(out, e) }
	exists := func(path string) bool { _, err := os.Lstat(path); return err == nil }
	add(Entry{Path: "/", Mode: Private, Kernel: "tmpfs", Reason: ReasonRoot})
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(d); err == nil {
				add(Entry{Path: d, Mode: ReadOnly, Link: t, Reason: ReasonSystemLink})
			}
		case fi.IsDir():
			add(Entry{Path: d, Source: d, Mode: ReadOnly, Reason: ReasonSystem})
		}
	}
	if t, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && within(t, "/run") {
		d := filepath.Dir(t)
		add(Entry{Path: d, Source: d, Mode: ReadOnly, Reason: ReasonResolv})
	}
	add(Entry{Path: "/dev", Mode: Private, Kernel: "dev", Reason: ReasonDev})
	add(Entry{Path: "/proc", Mode: Private, Kernel: "proc", Reason: ReasonProc})
	if exists("/sys") {
		add(Entry{Path: "/sys", Source: "/sys", Mode: ReadOnly, Reason: ReasonSys})
	}
	if p.opts.Tmp != "" {
		add(Entry{Path: "/tmp", Source: p.opts.Tmp, Mode: Private, Reason: ReasonTmp})
	} else {
		add(Entry{Path: "/tmp", Mode: Private, Kernel: "tmpfs", Reason: ReasonTmpCall})
	}
	home := ""
	if h := filepath.Clean(p.opts.Home); p.opts.Home != "" && filepath.IsAbs(h) && h != "/" {
		home = h
		add(Entry{Path: home, Mode: Private, Kernel: "tmpfs", Reason: ReasonHome})
		bind := func(rel string, mode Mode, reason string) {
			path := filepath.Join(home, rel)
			if exists(path) {
				add(Entry{Path: path, Source: resolvePath(path), Mode: mode, Reason: reason})
			}
		}
		for _, d := range filepath.SplitList(p.opts.PathEnv) {
			if d = filepath.Clean(d); filepath.IsAbs(d) && d != home && within(d, home) {
				if rel, ok := below(d, home); ok {
					bind(rel, ReadOnly, ReasonPathDir)
				}
			}
		}
		for _, rel := range homeToolchains {
			bind(rel, ReadOnly, ReasonToolchain)
		}
		for _, rel := range homeCaches {
			bind(rel, ReadWrite, ReasonCache)
		}
		for _, rel := range homeGitConfig {
			bind(rel, ReadOnly, ReasonGitConfig)
		}
	}
	root, gitDirs, reason := p.Project()
	add(Entry{Path: root, Source: resolvePath(root), Mode: ReadWrite, Reason: reason})
	for _, g := range gitDirs {
		if !within(g.Path, root) {
			add(g)
		}
	}
	for _, a := range p.allow {
		if exists(a.path) {
			add(Entry{Path: a.path, Source: a.source, Mode: a.mode, Reason: a.reason})
		}
	}
	// hush's own executable, read-only wherever it is: hush's probes and
	// the `hush` a tool runs (which finds no vault in this world) need it;
	// a tool that rewrote it would be the user's next hush.
	if exe := p.opts.Executable; exe != "" {
		if src := resolvePath(exe); filepath.IsAbs(src) {
			add(Entry{Path: src, Source: src, Mode: ReadOnly, Reason: ReasonHushExe})
		}
	}
	// Later entries for the same path win (an allow of a cache read-only,
	// a PATH dir that is also a toolchain): one entry per path.
	out = dedupe(out)
	for _, h := range p.hide {
		out = hideIn(out, h, ReasonHide)
	}
	for _, h := range p.hush {
		out = hideIn(out, h, ReasonHushHidden)
	}
	add = func(e Entry) { out = append(out, e) }
	add(Entry{Path: root, Mode: Hidden, Names: ProjectMaskPatterns(), Reason: ReasonEnvFamily})
	sortEntries(out)
	return nested(out)
}

// nested drops an entry that its enclosing bound entry already gives as
// it is: the same mode, the same host path (a PATH directory inside a
// read-only toolchain, a worktree's git dir inside the common one).
func nested(es []Entry) []Entry {
	var out []Entry
	for _, e := range es {
		redundant := false
		if e.Source != "" && (e.Mode == ReadOnly || e.Mode == ReadWrite) {
			for i := len(out) - 1; i >= 0; i-- {
				o := out[i]
				if o.Mode == Hidden || o.Link != "" || !within(e.Path, o.Path) || e.Path == o.Path {
					continue
				}
				rel, _ := below(e.Path, o.Path)
				redundant = o.Source != "" && o.Mode == e.Mode && filepath.Join(o.Source, rel) == e.Source
				break
			}
		}
		if !redundant {
			out = append(out, e)
		}
	}
	return out
}

// dedupe keeps the last entry of each path, in the order of the first.
func dedupe(es []Entry) []Entry {
	last := map[string]int{}
	for i, e := range es {
		last[e.Path] = i
	}
	var out []Entry
	for i, e := range es {
		if last[e.Path] == i {
			out = append(out, e)
		}
	}
	return out
}

// hideIn takes path out of the view: an entry at or below it goes, and if
// a listed directory holds it, a Hidden entry covers it.
func hideIn(es []Entry, path, reason string) []Entry {
	var out []Entry
	covered := false
	for _, e := range es {
		if within(e.Path, path) || (e.Source != "" && within(e.Source, path)) {
			continue
		}
		if e.Mode != Hidden && e.Link == "" && e.Kernel == "" && within(path, e.Path) && e.Source != "" {
			covered = true
		}
		if e.Mode == Private && e.Source != "" && within(path, e.Path) {
			covered = true
		}
		out = append(out, e)
	}
	if covered {
		out = append(out, Entry{Path: path, Mode: Hidden, Reason: reason})
	}
	return out
}

// sortEntries orders parents before what they hold; among the entries of
// one path, Hidden last.
func sortEntries(es []Entry) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Path != b.Path {
			return pathLess(a.Path, b.Path)
		}
		return a.Mode != Hidden && b.Mode == Hidden
	})
}

// pathLess orders paths component by component, so /a/b comes right after
// /a, before /a-b.
func pathLess(a, b string) bool {
	return strings.ReplaceAll(a, "/", "\x00") < strings.ReplaceAll(b, "/", "\x00")
}

// Lookup returns the entry of the view through which the host path abs
// (absolute, clean, symlinks resolved by the caller) reaches a tool: the
// deepest entry whose Source holds it, unless a Hidden entry covers it
// (then that one). ok is false when no entry gives abs to a tool: a fresh
// tmpfs (the root, the private home) holds nothing of the host's. The
// in-process file tools ask it before touching a path: read when the
// entry is ReadOnly or ReadWrite, write only when ReadWrite.
func Lookup(view []Entry, abs string) (e Entry, ok bool) {
	best := -1
	for i, x := range view {
		if x.Mode == Hidden || x.Link != "" || x.Source == "" || !within(abs, x.Source) {
			continue
		}
		if best < 0 || len(x.Source) >= len(view[best].Source) {
			best = i
		}
	}
	if best < 0 {
		return Entry{}, false
	}
	e = view[best]
	// Where the tool sees abs, for the Hidden entries, which are by Path.
	inside := e.Path
	if rel, ok := below(abs, e.Source); ok {
		inside = filepath.Join(e.Path, rel)
	}
	for _, x := range view {
		if x.Mode != Hidden || !within(inside, x.Path) {
			continue
		}
		if len(x.Names) == 0 {
			return x, true
		}
		if rel, ok := below(inside, x.Path); ok && MatchProjectMask(x.Names, rel) {
			return x, true
		}
	}
	return e, true
}

// RenderView prints the view as a tree, each entry with its mode and why.
func RenderView(w io.Writer, view []Entry) {
	var stack []string
	for _, e := range view {
		for len(stack) > 0 && !within(e.Path, stack[len(stack)-1]) {
			stack = stack[:len(stack)-1]
		}
		indent := strings.Repeat("  ", len(stack))
		name := e.Path
		if len(stack) > 0 && stack[len(stack)-1] != "/" {
			if rel, ok := below(e.Path, stack[len(stack)-1]); ok {
				name = rel
			}
		}
		switch {
		case e.Link != "":
			name += " -> " + e.Link
		case len(e.Names) > 0:
			name = strings.Join(e.Names, ", ") + " (at any depth)"
		case e.Source != "" && e.Source != e.Path:
			name += "  (from " + e.Source + ")"
		}
		mode := e.Mode.String()
		if e.Link != "" {
			mode = "link"
		}
		fmt.Fprintf(w, "%s%s  [%s]\n%s    %s\n", indent, name, mode, indent, e.Reason)
		if e.Mode != Hidden && e.Link == "" {
			stack = append(stack, e.Path)
		}
	}
}
