package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LandlockView is a host tool's world where the kernel refuses the
// namespaces and Landlock holds it alone: the policy's view (policy.go)
// turned into what Landlock can say. Landlock is an allowlist — what is not
// listed is unreachable — but it grants whole trees: it cannot take one
// file (the project's .env) out of a tree it grants, nor make one
// read-only inside a writable one (Uncovered lists those entries).
type LandlockView struct {
	// Read: read and execute, beneath each path.
	Read []string
	// Write: read, write, create, rename and remove, beneath each path.
	Write []string
	// Devices: device files, read-write (/dev/null, /dev/urandom, ...).
	Devices []string
	// Sockets: named unix sockets the tool may connect to ([sandbox]
	// allow = ["ssh-agent"], docker = true). None: the tool may not make
	// a unix socket at all (a pair stays).
	Sockets []string
	// Home and Tmp are the tool's private HOME and TMPDIR, in Write.
	Home, Tmp string
	// NoNetwork: no TCP (Landlock) and no socket of the internet families
	// (seccomp), not even loopback.
	NoNetwork bool
	// Uncovered are the view's Hidden entries, and its read-only entries,
	// that lie inside a tree Read or Write grants: the namespace sandbox
	// hides them or keeps them read-only; Landlock cannot.
	Uncovered []Entry
	// RealHome is the home the policy's entries under it come from.
	RealHome string
}

// landlockDevices are the device files a tool gets (the namespace
// sandbox's minimal /dev, without its own devpts and /dev/shm).
var landlockDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// landlockViewFor is the Landlock view of cfg's policy for a tool working
// in dir with environment env; without a policy in cfg, one is made from
// its mask set's inputs. home and tmp are the private HOME and TMPDIR.
func landlockViewFor(dir string, env []string, cfg *Config, home, tmp string) (*LandlockView, error) {
	var p *Policy
	if cfg != nil {
		p = cfg.Policy
	}
	if p == nil {
		var err error
		if p, err = policyFromMasks(dir, env, cfg.masks()); err != nil {
			return nil, err
		}
	}
	v := &LandlockView{Devices: landlockDevices, Home: home, Tmp: tmp, RealHome: p.opts.Home}
	if cfg != nil {
		v.NoNetwork = cfg.NoNetwork
	}
	view := p.View()
	var readOnly, hidden []Entry
	for _, e := range view {
		switch {
		case e.Link != "":
			// A system link (/bin -> usr/bin): Landlock follows it to
			// its target, which the view lists.
		case e.Mode == Hidden:
			hidden = append(hidden, e)
		case e.Mode == Private && e.Kernel == "proc":
			// The host's /proc, read-only: Landlock's ptrace rule keeps
			// other processes' environ and memory from the tool.
			v.Read = append(v.Read, "/proc")
		case e.Mode == Private:
			// The root, the home, /tmp, /dev: private dirs and device
			// files instead.
		case e.Source == "":
		case isSocket(e.Source):
			v.Sockets = append(v.Sockets, e.Source)
		case e.Mode == ReadOnly:
			v.Read = append(v.Read, e.Source)
			readOnly = append(readOnly, e)
		case e.Mode == ReadWrite:
			v.Write = append(v.Write, e.Source)
		}
	}
	v.Write = append(v.Write, home, tmp)
	granted := func(path string, in []string) bool {
		for _, g := range in {
			if within(path, g) {
				return true
			}
		}
		return false
	}
	for _, e := range hidden {
		if granted(e.Path, v.Read) || granted(e.Path, v.Write) {
			if e.Reason == ReasonHushHidden {
				return nil, fmt.Errorf("sandbox: hush's dir %s lies inside %s, which the Landlock sandbox grants whole and cannot hide it from (the kernel refuses the namespaces); start hush in a project dir that does not hold it", e.Path, grantedBy(e.Path, append(append([]string{}, v.Read...), v.Write...)))
			}
			v.Uncovered = append(v.Uncovered, e)
		}
	}
	for _, e := range readOnly {
		if granted(e.Source, v.Write) {
			v.Uncovered = append(v.Uncovered, e)
		}
	}
	return v, nil
}

// grantedBy is the path of paths that holds p.
func grantedBy(p string, paths []string) string {
	for _, g := range paths {
		if within(p, g) {
			return g
		}
	}
	return ""
}

func isSocket(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// policyFromMasks makes the policy of a Config that has none from its mask
// set's inputs (the same home, hush dirs, executable and [sandbox] lists)
// and the tool's environment.
func policyFromMasks(dir string, env []string, s *MaskSet) (*Policy, error) {
	lookup := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	o := PolicyOptions{Dir: dir, Home: lookup("HOME"), PathEnv: lookup("PATH")}
	if s != nil {
		m := s.opts
		if m.Home != "" {
			o.Home = m.Home
		}
		if o.PathEnv == "" {
			o.PathEnv = m.PathEnv
		}
		if m.Project != "" {
			o.Dir = m.Project
		}
		o.HushDirs = append([]string{m.ConfigDir, m.DataDir}, m.OtherHushDirs...)
		o.SSHAuthSock, o.GnuPGHome, o.RuntimeDir, o.DockerHost = m.SSHAuthSock, m.GnuPGHome, m.RuntimeDir, m.DockerHost
		o.Executable, o.Docker, o.Hide = m.Executable, m.Docker, m.Hide
	}
	if !filepath.IsAbs(o.Dir) {
		o.Dir, _ = filepath.Abs(o.Dir)
	}
	return NewPolicy(o)
}

// masks is the sandbox's mask set, or nil.
func (sb *Config) masks() *MaskSet {
	if sb == nil {
		return nil
	}
	return sb.Masks
}
