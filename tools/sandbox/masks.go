package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file owns THE mask list: every path a tool must not see, and the
// few it may read but never change (Mask.ReadOnly: hush's executable,
// ~/.ssh). Three readers use it: the host sandbox (sandbox_linux.go mounts
// an empty file or an empty tmpfs over each Mask, or binds a read-only one
// onto itself read-only), docker-bash (the project's .env family,
// hidden inside /app, through ProjectMaskPatterns and PlanProjectMasks), and
// the in-process file tools, which run inside hush where no mount protects
// them and so ask MaskSet.Masked before touching a path (WriteMasked
// before changing one). `hush sandbox show`
// prints the list with each mask's Reason.

// ProjectMaskPatterns are hidden in every project, at any depth: the legacy
// .env and its variants (.env.local, .env.production, .env.example — an
// example file is hidden too, since what people put in it is not ours to
// judge), and direnv's .envrc, which holds the same exports in shell syntax.
// This is the only copy of the list; docker-bash's `mask` adds to it.
func ProjectMaskPatterns() []string { return []string{".env", ".env.*", ".envrc"} }

// Reasons, as `hush sandbox show` prints them.
const (
	ReasonDataDir      = "hush's data dir: the vault, the audit log, transcripts, background logs"
	ReasonConfigDir    = "hush's config dir: config.toml, mcp.json, the trusted-projects file"
	ReasonOtherHushDir = "hush's config or data dir at its default place (HUSH_CONFIG_DIR or HUSH_DATA_DIR moved this session's)"
	ReasonBus          = "the session bus socket: the keyring (Secret Service) answers on it"
	ReasonKeyring      = "the keyring daemon's sockets"
	ReasonDocker       = "the Docker socket: whoever reaches it can inspect a container's secrets and start a privileged one; `[sandbox] docker = true` re-opens it"
	ReasonRootDaemon   = "a root daemon's control socket (the system bus, systemd, containerd, podman): a root tool that reaches it has the daemon run anything as the host's root, outside the sandbox"
	ReasonMultiplexer  = "a terminal multiplexer's server sockets (tmux, screen): the server runs any command a client sends it, outside the sandbox"
	ReasonUserManager  = "a server of yours that runs what a client asks, outside the sandbox: systemd's user manager (systemd-run --user), the Emacs server"
	ReasonDotEnv       = "a .env-family file of the project: it holds secrets hush reads as a legacy source"
	ReasonCredential   = "a credential store in the home directory; `[sandbox] allow` re-opens it"
	ReasonSSHKey       = "a private key in ~/.ssh; `[sandbox] allow = [\"~/.ssh\"]` re-opens it"
	ReasonSSHAgent     = "an ssh agent's socket: a tool that reaches it signs with your keys (logs in to your servers, pushes as you); `[sandbox] allow = [\"~/.ssh\"]` re-opens it"
	ReasonGPGAgent     = "gpg-agent's sockets: a tool that reaches them decrypts and signs with your keys while the passphrase is cached (`pass show` prints your passwords); `[sandbox] allow = [\"~/.gnupg\"]` re-opens them"
	ReasonGPGKey       = "your GnuPG private keys; `[sandbox] allow = [\"~/.gnupg\"]` re-opens them"
	ReasonHide         = "listed in [sandbox] hide"
	ReasonUnreadable   = "a project directory hush cannot list, so it cannot check it for .env files"
	// Read-only masks: the tool reads them, and cannot change, replace,
	// rename or remove them.
	ReasonHushExe  = "hush's own executable, read-only: a tool that rewrote or replaced it would run as your next hush, outside the sandbox, with the vault"
	ReasonHushLink = "a link in your PATH to hush's executable, which cannot be replaced: a tool that pointed it elsewhere would run as your next hush, outside the sandbox"
	ReasonSSHLogin = "~/.ssh, read-only: a key added to authorized_keys (or an rc or environment file there) would let a tool log in over ssh, outside the sandbox; the private keys in it stay hidden"
)

// homeCredentialStores are hidden by default, relative to the home
// directory. A name ending in '*' is a prefix in its directory.
var homeCredentialStores = []string{
	".aws", ".config/gh", ".netrc", ".git-credentials", ".docker/config.json", ".kube",
	".config/gcloud", ".azure", ".npmrc", ".pypirc", ".cargo/credentials*",
	".vault-token", ".pgpass", ".my.cnf", ".terraform.d/credentials.tfrc.json", ".config/hub",
	".gem/credentials",
}

// gpgAgentSockets are gpg-agent's socket names, in ~/.gnupg (GnuPG before
// 2.1.13, or without a runtime dir) — the whole $XDG_RUNTIME_DIR/gnupg is
// hidden, since it holds nothing but sockets (and, for another GNUPGHOME,
// a d.<hash> directory of them).
var gpgAgentSockets = []string{"S.gpg-agent", "S.gpg-agent.ssh", "S.gpg-agent.extra", "S.gpg-agent.browser"}

// sshAgentSockets are where an ssh agent listens without being told
// (relative to $XDG_RUNTIME_DIR): systemd's ssh-agent.service, OpenSSH's
// own unit, and gcr's (GNOME's). OpenSSH's default, /tmp/ssh-*/agent.<pid>,
// is found by the /tmp watch (tmpBuses).
var sshAgentSockets = []string{"ssh-agent.socket", "openssh_agent", "gcr/ssh"}

// Mask is one path a sandboxed tool does not see.
type Mask struct {
	// Path is absolute, with symlinks resolved.
	Path string
	// Dir: an empty read-only tmpfs covers it; otherwise an empty
	// read-only file is bound over it (a socket too: connecting to it
	// then fails).
	Dir bool
	// ReadOnly: not hidden but bound onto itself read-only — the tool
	// reads it as it is, and cannot write, truncate, replace, rename or
	// remove it (a mount point refuses rename and unlink). [sandbox]
	// allow does not lift it: it re-opens reading.
	ReadOnly bool
	// Link (with ReadOnly): Path is a symlink that leads to a read-only
	// file (a PATH entry's hush); the file is mounted over the link
	// itself, so the link cannot be replaced or removed.
	Link   bool
	Reason string
	// AllowedBy is the path whose `[sandbox] allow` also re-opens this
	// mask, besides its own: an agent's socket follows the directory of
	// the keys it holds (~/.ssh, ~/.gnupg), wherever it listens.
	AllowedBy string
}

// MaskOptions are the inputs to the mask list. Paths are absolute; every
// field may be empty, and what it names is then not masked.
type MaskOptions struct {
	Home      string
	ConfigDir string // hush's config dir
	DataDir   string // hush's data dir
	// OtherHushDirs are hush's dirs at their default places when
	// HUSH_CONFIG_DIR or HUSH_DATA_DIR moved this session's elsewhere:
	// another vault may live there.
	OtherHushDirs []string
	// RuntimeDir is $XDG_RUNTIME_DIR; BusAddress $DBUS_SESSION_BUS_ADDRESS;
	// DockerHost $DOCKER_HOST — all from hush's start-up snapshot.
	RuntimeDir string
	BusAddress string
	DockerHost string
	// SSHAuthSock is $SSH_AUTH_SOCK from the same snapshot: the agent hush
	// was started with, hidden like the ones at their default places.
	SSHAuthSock string
	// GnuPGHome is $GNUPGHOME: a GnuPG home of its own, masked as
	// ~/.gnupg is (agent sockets, private keys).
	GnuPGHome string
	// Tmux is $TMUX, TmuxTmpDir $TMUX_TMPDIR, ScreenDir $SCREENDIR: where
	// the terminal multiplexers' servers listen (multiplexerSockets).
	Tmux, TmuxTmpDir, ScreenDir string
	// Executable is hush's own binary (os.Executable): read-only to
	// tools, wherever it lives — the project directory too. PathEnv is
	// $PATH: the symlinks there that lead to it cannot be replaced.
	Executable, PathEnv string
	// Project is the project root, walked for the .env family.
	Project string
	// Docker leaves the Docker socket reachable ([sandbox] docker = true).
	Docker bool
	// Allow re-opens masks at or below these paths ([sandbox] allow);
	// Hide adds paths ([sandbox] hide). "~/" is the home directory; a
	// relative path is relative to the project.
	Allow, Hide []string
}

// MaskSet is one session's mask list. It is safe for concurrent use.
type MaskSet struct {
	opts    MaskOptions
	fixed   []Mask // candidates outside the project, checked for existence on each plan
	allow   []string
	project string // resolved project root, or ""
	// sshAllow and gpgAllow are ~/.ssh and ~/.gnupg resolved: an allow of
	// them re-opens the agents too (Mask.AllowedBy). "" without a home.
	sshAllow, gpgAllow string
	// home, sshDir and homeGlobs are the home directory resolved and the
	// credential-store patterns joined to it, once: Masked runs for every
	// file a walk passes.
	home, sshDir string
	homeGlobs    []string

	mu      sync.Mutex
	dirs    map[string]dirStamp // project directories walked, for revalidation
	planned []Mask              // the project's masks from the last walk
	// reopened are the masks [sandbox] allow removed, for `hush sandbox show`.
	reopened []Mask

	plans plans // the sandbox's plan files (sandbox_linux.go)
}

// ErrAllowHushDir refuses an allow entry that would re-open hush's own files.
var ErrAllowHushDir = errors.New("hush's own config and data dirs cannot be re-opened")

// NewMaskSet checks opts and builds the list. It reads nothing but
// directory entries and file types.
func NewMaskSet(opts MaskOptions) (*MaskSet, error) {
	s := &MaskSet{opts: opts}
	expand := func(p string) (string, error) {
		switch {
		case p == "~" || strings.HasPrefix(p, "~/"):
			if opts.Home == "" {
				return "", fmt.Errorf("%q: no home directory to expand ~ in", p)
			}
			p = filepath.Join(opts.Home, p[1:])
		case strings.HasPrefix(p, "~"):
			return "", fmt.Errorf("%q: only ~/ (your own home) is expanded", p)
		case !filepath.IsAbs(p):
			if opts.Project == "" {
				return "", fmt.Errorf("%q: a relative path needs a project", p)
			}
			p = filepath.Join(opts.Project, p)
		}
		return resolvePath(filepath.Clean(p)), nil
	}
	hushDirs := []string{}
	for _, d := range append([]string{opts.DataDir, opts.ConfigDir}, opts.OtherHushDirs...) {
		if d != "" {
			hushDirs = append(hushDirs, resolvePath(d))
		}
	}
	for _, a := range opts.Allow {
		if strings.TrimSpace(a) == "" {
			return nil, errors.New("[sandbox] allow: an entry is empty")
		}
		p, err := expand(a)
		if err != nil {
			return nil, fmt.Errorf("[sandbox] allow: %w", err)
		}
		for _, h := range hushDirs {
			if within(p, h) || within(h, p) {
				return nil, fmt.Errorf("[sandbox] allow %q: %w", a, ErrAllowHushDir)
			}
		}
		s.allow = append(s.allow, p)
	}
	// A fixed mask's Dir is decided when it is planned (Masks), from what
	// is there then.
	add := func(p string, reason string) {
		if p == "" {
			return
		}
		s.fixed = append(s.fixed, Mask{Path: resolvePath(filepath.Clean(p)), Reason: reason})
	}
	readOnly := func(p, reason string) {
		if filepath.IsAbs(p) {
			s.fixed = append(s.fixed, Mask{Path: resolvePath(filepath.Clean(p)), ReadOnly: true, Reason: reason})
		}
	}
	readOnly(opts.Executable, ReasonHushExe)
	for _, l := range executableLinks(opts.Executable, opts.PathEnv) {
		s.fixed = append(s.fixed, Mask{Path: l, ReadOnly: true, Link: true, Reason: ReasonHushLink})
	}
	if opts.Home != "" {
		// The whole directory, not its files one by one: sshd reads
		// authorized_keys2, rc and environment too, and a tool that may
		// create one it does not find is as good as one that appends.
		readOnly(filepath.Join(opts.Home, ".ssh"), ReasonSSHLogin)
	}
	add(opts.DataDir, ReasonDataDir)
	add(opts.ConfigDir, ReasonConfigDir)
	for _, d := range opts.OtherHushDirs {
		add(d, ReasonOtherHushDir)
	}
	for _, p := range busSockets(opts.BusAddress, opts.RuntimeDir) {
		add(p, ReasonBus)
	}
	if opts.RuntimeDir != "" {
		add(filepath.Join(opts.RuntimeDir, "keyring"), ReasonKeyring)
	}
	if opts.Home != "" {
		s.sshAllow = resolvePath(filepath.Join(opts.Home, ".ssh"))
		s.gpgAllow = resolvePath(filepath.Join(opts.Home, ".gnupg"))
	}
	agent := func(p string, reason, allowedBy string) {
		if filepath.IsAbs(p) {
			s.fixed = append(s.fixed, Mask{Path: resolvePath(filepath.Clean(p)), Reason: reason, AllowedBy: allowedBy})
		}
	}
	agent(opts.SSHAuthSock, ReasonSSHAgent, s.sshAllow)
	for _, rt := range runtimeDirs(opts.RuntimeDir) {
		for _, n := range sshAgentSockets {
			agent(filepath.Join(rt, n), ReasonSSHAgent, s.sshAllow)
		}
		agent(filepath.Join(rt, "gnupg"), ReasonGPGAgent, s.gpgAllow)
	}
	for _, g := range []string{filepath.Join(opts.Home, ".gnupg"), opts.GnuPGHome} {
		if !filepath.IsAbs(g) {
			continue
		}
		// GNUPGHOME's are re-opened by allowing it, or ~/.gnupg.
		for _, n := range gpgAgentSockets {
			agent(filepath.Join(g, n), ReasonGPGAgent, s.gpgAllow)
		}
		agent(filepath.Join(g, "private-keys-v1.d"), ReasonGPGKey, s.gpgAllow)
		agent(filepath.Join(g, "secring.gpg"), ReasonGPGKey, s.gpgAllow)
	}
	if !opts.Docker {
		for _, p := range dockerSockets(opts.DockerHost, opts.RuntimeDir) {
			add(p, ReasonDocker)
		}
	}
	dirs, socks := multiplexerSockets(opts)
	for _, d := range dirs {
		add(d, ReasonMultiplexer)
	}
	for _, p := range socks {
		add(p, ReasonMultiplexer)
	}
	for _, rt := range runtimeDirs(opts.RuntimeDir) {
		add(filepath.Join(rt, "systemd", "private"), ReasonUserManager)
		add(filepath.Join(rt, "emacs"), ReasonUserManager)
	}
	add(filepath.Join(os.TempDir(), "emacs"+strconv.Itoa(os.Geteuid())), ReasonUserManager)
	if os.Geteuid() == 0 {
		for _, p := range rootDaemonSockets {
			add(p, ReasonRootDaemon)
		}
	}
	if opts.Home != "" {
		for _, rel := range homeCredentialStores {
			if strings.HasSuffix(rel, "*") {
				matches, _ := filepath.Glob(filepath.Join(opts.Home, rel))
				for _, m := range matches {
					add(m, ReasonCredential)
				}
				continue
			}
			add(filepath.Join(opts.Home, rel), ReasonCredential)
		}
		ents, _ := os.ReadDir(filepath.Join(opts.Home, ".ssh"))
		for _, e := range ents {
			if e.Type().IsRegular() && isSSHPrivateKeyName(e.Name()) {
				add(filepath.Join(opts.Home, ".ssh", e.Name()), ReasonSSHKey)
			}
		}
	}
	for _, h := range opts.Hide {
		if strings.TrimSpace(h) == "" {
			return nil, errors.New("[sandbox] hide: an entry is empty")
		}
		p, err := expand(h)
		if err != nil {
			return nil, fmt.Errorf("[sandbox] hide: %w", err)
		}
		if p == "/" || (opts.Project != "" && within(resolvePath(opts.Project), p)) {
			return nil, fmt.Errorf("[sandbox] hide %q would hide the project itself", h)
		}
		add(p, ReasonHide)
	}
	if opts.Project != "" {
		s.project = resolvePath(filepath.Clean(opts.Project))
	}
	if opts.Home != "" {
		s.home = resolvePath(opts.Home)
		s.sshDir = filepath.Join(s.home, ".ssh")
		for _, rel := range homeCredentialStores {
			s.homeGlobs = append(s.homeGlobs, filepath.Join(s.home, rel))
		}
	}
	return s, nil
}

// Masks is the mount plan for one spawn: the masks that exist now, with
// [sandbox] allow applied, parents before what they cover removed. The
// project is re-walked only where a directory changed since the last plan.
func (s *MaskSet) Masks() ([]Mask, error) {
	if s == nil {
		return nil, nil
	}
	var all []Mask
	for _, p := range strayBuses() {
		if strings.HasPrefix(p, "/tmp/ssh-") {
			all = append(all, Mask{Path: p, Dir: true, Reason: ReasonSSHAgent, AllowedBy: s.sshAllow})
			continue
		}
		all = append(all, Mask{Path: p, Reason: ReasonBus})
	}
	for _, m := range s.fixed {
		fi, err := os.Stat(m.Path)
		if err != nil {
			continue // not there: nothing to hide (Masked still refuses it)
		}
		m.Dir = fi.IsDir()
		all = append(all, m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.project != "" {
		if err := s.walkProject(); err != nil {
			return nil, err
		}
		all = append(all, s.planned...)
	}
	s.reopened = s.reopened[:0]
	return s.plan(all, &s.reopened), nil
}

// projectMasks is Masks without the masks outside the project: what the
// project walk finds (its .env family, unreadable directories), with
// [sandbox] allow applied. A constructed world (planWorld, planEnvLayer)
// reads no other mask — its view leaves out everything they name — and
// the stat of each of those (about fifty: home credential stores, agent
// and bus sockets) on every call was most of what preparing a
// sandboxed call cost hush.
func (s *MaskSet) projectMasks() ([]Mask, error) {
	if s == nil || s.project == "" {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.walkProject(); err != nil {
		return nil, err
	}
	return s.plan(append([]Mask(nil), s.planned...), nil), nil
}

// plan sorts all and drops what [sandbox] allow re-opens (appended to
// *reopened, when given), duplicates, and what a hidden directory above
// already covers. s.mu is held.
func (s *MaskSet) plan(all []Mask, reopened *[]Mask) []Mask {
	// By path, parents first; on one path, hiding before read-only.
	sort.Slice(all, func(i, j int) bool {
		if all[i].Path != all[j].Path {
			return all[i].Path < all[j].Path
		}
		return !all[i].ReadOnly && all[j].ReadOnly
	})
	var out []Mask
	for _, m := range all {
		if !m.ReadOnly && s.reopens(m) {
			if reopened != nil {
				*reopened = append(*reopened, m)
			}
			continue
		}
		if n := len(out); n > 0 && out[n-1].Path == m.Path {
			continue
		}
		covered := false
		for _, o := range out {
			// A read-only directory still has its hidden files inside
			// (~/.ssh's private keys): only a hidden one covers them.
			if o.Dir && !o.ReadOnly && strings.HasPrefix(m.Path, o.Path+"/") {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, m)
		}
	}
	return out
}

// Reopened is what [sandbox] allow removed from the last Masks plan.
func (s *MaskSet) Reopened() []Mask {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mask(nil), s.reopened...)
}

// Masked reports whether a tool must not read (nor write) absPath, and
// why. It resolves symlinks first (a path that does not exist yet is resolved as far
// as it exists), so a link into a masked directory is masked, and a .env
// name is masked by its name as well, whether or not it existed when the
// project was walked. The in-process file tools call it before every access.
func (s *MaskSet) Masked(absPath string) (reason string, masked bool) {
	if s == nil || absPath == "" {
		return "", false
	}
	return s.maskedAny(lookups(absPath))
}

// lookups are the paths a check of absPath covers: the path as written
// and with its symlinks resolved.
func lookups(absPath string) []string {
	lit := filepath.Clean(absPath)
	return []string{lit, resolvePath(lit)}
}

func (s *MaskSet) maskedAny(paths []string) (string, bool) {
	for _, p := range paths {
		if r, ok := s.maskedPath(p); ok {
			return r, true
		}
	}
	return "", false
}

// WriteMasked reports whether a tool must not write, create, replace or
// remove absPath, and why: what Masked refuses, and what lies in a
// read-only mask (hush's executable, ~/.ssh), existing yet or not. The
// in-process write and edit tools call it.
func (s *MaskSet) WriteMasked(absPath string) (reason string, masked bool) {
	if s == nil || absPath == "" {
		return "", false
	}
	paths := lookups(absPath) // resolved once for both checks
	if r, ok := s.maskedAny(paths); ok {
		return r, true
	}
	for _, p := range paths {
		for _, m := range s.fixed {
			if m.ReadOnly && within(p, m.Path) {
				return m.Reason, true
			}
		}
	}
	return "", false
}

// MaskedResolved is Masked for a path that holds no symlink (a walk that
// does not follow links, from a resolved root, as the file tools' glob and
// grep do): it skips the resolution, which is most of Masked's cost when a
// walk asks about every one of 50,000 files.
func (s *MaskSet) MaskedResolved(absPath string) (reason string, masked bool) {
	if s == nil || absPath == "" {
		return "", false
	}
	return s.maskedPath(filepath.Clean(absPath))
}

func (s *MaskSet) maskedPath(p string) (string, bool) {
	for _, m := range s.fixed {
		if m.Reason == ReasonDataDir || m.Reason == ReasonConfigDir || m.Reason == ReasonOtherHushDir {
			if within(p, m.Path) {
				return m.Reason, true
			}
		}
	}
	if s.allowed(p) {
		return "", false
	}
	for _, m := range s.fixed {
		if !m.ReadOnly && within(p, m.Path) && !(m.AllowedBy != "" && s.allowed(m.AllowedBy)) {
			return m.Reason, true
		}
	}
	if s.home != "" && within(p, s.home) {
		if filepath.Dir(p) == s.sshDir && isSSHPrivateKeyName(filepath.Base(p)) {
			return ReasonSSHKey, true
		}
		for _, g := range s.homeGlobs {
			if ok, _ := filepath.Match(g, p); ok {
				return ReasonCredential, true
			}
		}
	}
	if s.project != "" {
		if rel, ok := below(p, s.project); ok {
			// Any component: a file inside a directory named .env.d is
			// masked with its directory.
			// (Each prefix is a slice of rel, not a join of its parts: this
			// runs for every file a walk passes.)
			pats := ProjectMaskPatterns()
			for i := 0; i <= len(rel); i++ {
				if (i == len(rel) || rel[i] == '/') && MatchProjectMask(pats, rel[:i]) {
					return ReasonDotEnv, true
				}
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, m := range s.planned {
			if within(p, m.Path) {
				return m.Reason, true
			}
		}
	}
	return "", false
}

// hiddenWhole reports whether p lies in a directory mask outside the
// project walk (hush's dirs, a credential store), so walking it finds
// nothing more to hide.
func (s *MaskSet) hiddenWhole(p string) bool {
	for _, m := range s.fixed {
		if !m.ReadOnly && within(p, m.Path) && isDir(m.Path) && !s.reopens(m) {
			return true
		}
	}
	return false
}

// reopens reports whether [sandbox] allow lifts mask m: an entry at or
// above its path, or at or above its AllowedBy.
func (s *MaskSet) reopens(m Mask) bool {
	return s.allowed(m.Path) || m.AllowedBy != "" && s.allowed(m.AllowedBy)
}

func (s *MaskSet) allowed(p string) bool {
	for _, a := range s.allow {
		if within(p, a) {
			return true
		}
	}
	return false
}

// dirStamp is what a project directory looked like when it was listed: an
// entry added, removed or renamed changes its mtime.
type dirStamp struct {
	mtime int64
	masks []Mask // found directly in it
	subs  []string
}

// walkProject brings s.planned up to date: a directory whose mtime has not
// changed since it was listed is not listed again, only stat'ed, so a plan
// on every call costs one stat per directory of the project.
func (s *MaskSet) walkProject() error {
	if s.dirs == nil {
		s.dirs = map[string]dirStamp{}
	}
	seen := map[string]bool{}
	var planned []Mask
	var visit func(dir string, top bool) error
	visit = func(dir string, top bool) error {
		seen[dir] = true
		fi, err := os.Stat(dir)
		if err != nil {
			if top {
				return fmt.Errorf("project directory %s: %w", dir, err)
			}
			return nil // vanished
		}
		mt := fi.ModTime().UnixNano()
		st, ok := s.dirs[dir]
		if !ok || st.mtime != mt {
			st, err = listDir(s.project, dir, mt, s.hiddenWhole)
			if err != nil {
				if top {
					return fmt.Errorf("project directory %s: %w", dir, err)
				}
				// It cannot be checked for a .env: hidden whole.
				st = dirStamp{mtime: mt}
				planned = append(planned, Mask{Path: dir, Dir: true, Reason: ReasonUnreadable})
				s.dirs[dir] = st
				return nil
			}
			s.dirs[dir] = st
		}
		planned = append(planned, st.masks...)
		for _, sub := range st.subs {
			if err := visit(sub, false); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(s.project, true); err != nil {
		return err
	}
	for d := range s.dirs {
		if !seen[d] {
			delete(s.dirs, d)
		}
	}
	s.planned = planned
	return nil
}

// listDir lists one project directory: masks for its .env-family entries
// (a matching symlink masks its target when that lies in the project: the
// mount follows the link), and its other subdirectories to visit.
func listDir(root, dir string, mtime int64, hiddenWhole func(string) bool) (dirStamp, error) {
	st := dirStamp{mtime: mtime}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return st, err
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if !matchBase(ProjectMaskPatterns(), e.Name()) {
			// Not walked: git's own directory (objects, not files named
			// .env) and what is hidden whole anyway (hush's data dir,
			// a credential store) — a project at $HOME holds both.
			if e.IsDir() && e.Name() != ".git" && !hiddenWhole(p) {
				st.subs = append(st.subs, p)
			}
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue // dangling: nothing to read through it
			}
			fi, err := os.Stat(target)
			if err != nil {
				continue
			}
			st.masks = append(st.masks, Mask{Path: target, Dir: fi.IsDir(), Reason: ReasonDotEnv})
			continue
		}
		if !e.IsDir() && !e.Type().IsRegular() {
			continue // a socket or fifo named .env holds no file to read
		}
		st.masks = append(st.masks, Mask{Path: p, Dir: e.IsDir(), Reason: ReasonDotEnv})
	}
	return st, nil
}

func matchBase(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// MatchProjectMask reports whether rel (slash-separated, relative to the
// project root) is hidden by patterns. A pattern without a slash matches a
// base name at any depth, as in .gitignore; a pattern with one matches the
// whole relative path (a leading slash is allowed).
func MatchProjectMask(patterns []string, rel string) bool {
	base := path.Base(rel)
	for _, p := range patterns {
		p = strings.TrimSuffix(p, "/")
		target := base
		if strings.Contains(p, "/") {
			p = strings.TrimPrefix(p, "/")
			target = rel
		}
		if ok, err := path.Match(p, target); err == nil && ok {
			return true
		}
	}
	return false
}

// ValidMaskPatterns reports a malformed mask pattern: it would match nothing
// and so hide nothing, which must not pass silently.
func ValidMaskPatterns(patterns []string) error {
	for _, p := range patterns {
		if p == "" || strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/") == "" {
			return fmt.Errorf("mask pattern %q is empty", p)
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("mask pattern %q is not a valid glob", p)
		}
	}
	return nil
}

// isSSHPrivateKeyName: everything in ~/.ssh but the files ssh reads that hold
// no secret (public keys, known hosts, its config, authorized keys) is
// treated as a private key — people name their keys freely.
func isSSHPrivateKeyName(name string) bool {
	switch {
	case strings.HasSuffix(name, ".pub"), strings.HasPrefix(name, "known_hosts"),
		name == "config", strings.HasPrefix(name, "authorized_keys"):
		return false
	}
	return true
}

// busSockets returns the unix paths of the session bus: every unix:path= of
// the address, and $XDG_RUNTIME_DIR/bus, where sd-bus and libdbus look
// when the address is unset. (An abstract address has no path to mask; the
// sandbox status says so.)
func busSockets(addr, runtimeDir string) []string {
	var out []string
	for _, a := range strings.Split(addr, ";") {
		rest, ok := strings.CutPrefix(a, "unix:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if p, ok := strings.CutPrefix(kv, "path="); ok && filepath.IsAbs(p) {
				out = append(out, p)
			}
		}
	}
	if runtimeDir != "" {
		out = append(out, filepath.Join(runtimeDir, "bus"))
	}
	return out
}

// strayBuses are session bus sockets hush was not told about: dbus-launch
// and dbus-run-session put them in /tmp/dbus-*, and a login session's is
// /run/user/<uid>/bus whether or not XDG_RUNTIME_DIR says so. Started
// without DBUS_SESSION_BUS_ADDRESS (from cron, a CI step, another
// terminal), hush would hide none of them, and a tool that finds one reads
// the keyring of that user. They are looked for on each plan: a session
// may start after hush. The same listing of /tmp finds OpenSSH's agent
// directories, /tmp/ssh-*/ (agent.<pid> inside), which ssh-agent makes
// wherever SSH_AUTH_SOCK is not passed on: they are returned with the
// buses, and Masks hides them whole.
func strayBuses() []string {
	out := append([]string(nil), tmpBuses()...)
	if p := fmt.Sprintf("/run/user/%d/bus", os.Geteuid()); func() bool { _, err := os.Lstat(p); return err == nil }() {
		out = append(out, p)
	}
	return out
}

// tmpBuses are the /tmp/dbus-* sockets and /tmp/ssh-* directories
// (tmpMasked). On Linux an inotify watch keeps
// them up to date (tmpbus_linux.go). Elsewhere, or without an
// inotify instance, /tmp is listed again only when its mtime changed (an
// entry was made, removed or renamed there): /tmp holds hundreds of
// entries, and listing it on every spawn cost a sandboxed call more than a
// tenth of its time. A listing made less than a second after that mtime is
// not trusted for later plans, so an entry made within the same timestamp
// tick cannot be missed.
//
// The watch starts only once this process has listed /tmp watchAfter
// times: an inotify instance costs the process that made it 5–15 ms when
// it exits (the kernel waits out a grace period to free it), which a
// `hush run` of one or two calls paid in full — its median went from 20
// to 35 ms — to save a few listings of 150 µs.
func tmpBuses() []string {
	if tmpListings.Load() >= watchAfter {
		if socks, ok := watchedTmpBuses(); ok {
			return socks
		}
	}
	fi, err := os.Stat("/tmp")
	if err != nil {
		return listTmpBuses()
	}
	tmpBusCache.Lock()
	defer tmpBusCache.Unlock()
	mt := fi.ModTime()
	if tmpBusCache.valid && mt.Equal(tmpBusCache.mtime) {
		return tmpBusCache.socks
	}
	tmpListings.Add(1)
	tmpBusCache.socks = listTmpBuses()
	tmpBusCache.mtime = mt
	tmpBusCache.valid = time.Since(mt) > time.Second
	return tmpBusCache.socks
}

// watchAfter is how many listings of /tmp come before the watch.
const watchAfter = 8

var tmpListings atomic.Int32

var tmpBusCache struct {
	sync.Mutex
	valid bool
	mtime time.Time
	socks []string
}

func listTmpBuses() []string {
	// One listing for both kinds, its entries' types from the directory
	// itself: no stat of each.
	ents, _ := os.ReadDir("/tmp")
	var out []string
	for _, e := range ents {
		if tmpMaskName(e.Name()) && tmpMasked(e.Name(), e.Type()) {
			out = append(out, "/tmp/"+e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// tmpMaskName reports whether a name in /tmp may be one tmpBuses hides;
// tmpMasked decides with its type: a dbus-* socket, or a real ssh-*
// directory (not a link: the mount would follow it).
func tmpMaskName(name string) bool {
	return strings.HasPrefix(name, "dbus-") || strings.HasPrefix(name, "ssh-")
}

func tmpMasked(name string, mode fs.FileMode) bool {
	switch {
	case strings.HasPrefix(name, "dbus-"):
		return mode&fs.ModeSocket != 0
	case strings.HasPrefix(name, "ssh-"):
		return mode.IsDir()
	}
	return false
}

// runtimeDirs are $XDG_RUNTIME_DIR and the login session's runtime dir,
// /run/user/<uid>, whether or not XDG_RUNTIME_DIR says so (started from
// cron or a CI step, hush may not be told), once each.
func runtimeDirs(rt string) []string {
	var out []string
	for _, d := range []string{rt, "/run/user/" + strconv.Itoa(os.Geteuid())} {
		if filepath.IsAbs(d) && (len(out) == 0 || filepath.Clean(d) != filepath.Clean(out[0])) {
			out = append(out, d)
		}
	}
	return out
}

// multiplexerSockets are the directories and sockets where the user's
// tmux and screen servers listen. A server accepts every client of its
// own user, and a tool is that user: `tmux new-window 'cat …/vault.env >
// loot'` had the user's tmux server — the one hush itself often runs in —
// run it outside the sandbox. tmux's default directory is
// ${TMUX_TMPDIR:-/tmp}/tmux-<uid> (every -L name lives there); $TMUX names
// the socket of the session hush runs in, wherever -S put it. screen's
// are in $SCREENDIR, /run/screen or ~/.screen.
func multiplexerSockets(opts MaskOptions) (dirs, socks []string) {
	uid := strconv.Itoa(os.Geteuid())
	for _, base := range []string{opts.TmuxTmpDir, "/tmp"} {
		if filepath.IsAbs(base) {
			dirs = append(dirs, filepath.Join(base, "tmux-"+uid))
		}
	}
	if p, _, _ := strings.Cut(opts.Tmux, ","); filepath.IsAbs(p) {
		socks = append(socks, p)
	}
	for _, d := range []string{opts.ScreenDir, "/run/screen", "/var/run/screen"} {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	if opts.Home != "" {
		dirs = append(dirs, filepath.Join(opts.Home, ".screen"))
	}
	return dirs, socks
}

// rootDaemonSockets are hidden from a root tool: it is uid 0 to the
// daemons behind them, which then start what it asks (systemd-run over the
// system bus, a container with the host's / from containerd) as the host's
// root, outside every namespace, where the vault is one read away. An
// unprivileged tool gets from them only what its user may anyway.
var rootDaemonSockets = []string{
	"/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket", "/run/systemd/private",
	"/run/containerd/containerd.sock", "/run/podman/podman.sock", "/run/crio/crio.sock",
	"/run/snapd.socket", "/run/libvirt/libvirt-sock",
}

// dockerSockets are the Docker Engine's usual unix sockets and the unix path
// of DOCKER_HOST.
func dockerSockets(dockerHost, runtimeDir string) []string {
	out := []string{"/var/run/docker.sock", "/run/docker.sock"}
	if p, ok := strings.CutPrefix(dockerHost, "unix://"); ok && filepath.IsAbs(p) {
		out = append(out, p)
	}
	if runtimeDir != "" {
		out = append(out, filepath.Join(runtimeDir, "docker.sock"))
	}
	return out
}

// executableLinks are the symlinks by which $PATH leads to exe under its
// own name or "hush" — each hop of a chain of them, its directory
// resolved — for a user who installed hush by a link (`ln -s
// ~/src/hush/hush ~/.local/bin/`): the link is what their next `hush`
// follows, and a tool that replaced it would be that hush. (A symlinked
// directory on the way is not covered: see README, "The honest boundary".)
func executableLinks(exe, pathEnv string) []string {
	if !filepath.IsAbs(exe) || pathEnv == "" {
		return nil
	}
	real := resolvePath(filepath.Clean(exe))
	names := []string{filepath.Base(exe)}
	if names[0] != "hush" {
		names = append(names, "hush")
	}
	seen := map[string]bool{}
	var out []string
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		for _, n := range names {
			p := filepath.Join(resolvePath(filepath.Clean(dir)), n)
			for hops := 0; hops < 40 && !seen[p]; hops++ {
				fi, err := os.Lstat(p)
				if err != nil || fi.Mode()&fs.ModeSymlink == 0 || resolvePath(p) != real {
					break
				}
				seen[p] = true
				out = append(out, p)
				t, err := os.Readlink(p)
				if err != nil {
					break
				}
				if !filepath.IsAbs(t) {
					t = filepath.Join(filepath.Dir(p), t)
				}
				t = filepath.Clean(t)
				p = filepath.Join(resolvePath(filepath.Dir(t)), filepath.Base(t))
			}
		}
	}
	return out
}

// resolvePath resolves symlinks in p as far as p exists: the missing tail
// is appended to the resolved existing part.
func resolvePath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(p)
	dir = filepath.Clean(dir)
	if dir == p || base == "" {
		return p
	}
	return filepath.Join(resolvePath(dir), base)
}

// within reports whether the clean absolute path p is root or below it.
func within(p, root string) bool {
	// Without building root+"/" or calling filepath.Rel: Masked runs this
	// for every mask and every file a walk passes.
	root = strings.TrimSuffix(root, "/")
	return p == root || len(p) > len(root) && p[len(root)] == '/' && p[:len(root)] == root
}

// below returns p relative to root when p lies strictly below it (both
// clean and absolute): a slice of p, not a new string.
func below(p, root string) (string, bool) {
	if p == root || !within(p, root) {
		return "", false
	}
	return p[len(strings.TrimSuffix(root, "/"))+1:], true
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// EmptyFileName is the file bound over every masked file, in a directory of
// hush's data dir (docker-bash's and the sandbox's).
const EmptyFileName = "empty"

// EnsureEmptyFile returns the path of an empty, read-only regular file in
// dir, (re)creating it if it is missing or was changed: something bound over
// a .env must hold nothing.
func EnsureEmptyFile(dir string) (string, error) {
	p := filepath.Join(dir, EmptyFileName)
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 && fi.Mode().Perm() == 0o444 {
		return p, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("check the mask file: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	// Create beside it and rename over, so a concurrent hush never binds a
	// half-made file.
	f, err := os.CreateTemp(dir, ".empty-*")
	if err != nil {
		return "", fmt.Errorf("create the mask file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o444); err != nil {
		f.Close()
		return "", fmt.Errorf("create the mask file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("create the mask file: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("create the mask file: %w", err)
	}
	return p, nil
}
