// Package files holds hush's in-process file tools: read, write, edit,
// glob and grep. They run inside hush's own process, where no sandbox
// protects anything, so they keep hush's promise themselves: every path
// is resolved through its symlinks and passed to the mask list's path
// check (Check, from tools/sandbox/masks.go — the one list, never a copy here)
// before a byte is read or written.
//
// The tools never call the gate or the redactor: the executor does, around
// every call. Their Preview tells the gate what a call touches — the
// resolved path, and for write and edit the complete diff — and the
// approved Preview is what Run applies.
//
// Nothing here starts a process, reads the vault or the environment.
package files

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hushcli/hush/executor"
)

// Check is the mask list's check for in-process tools: it reports whether
// hush must refuse path (absolute, symlinks already resolved) and why, in
// a few words ("hush's data directory"). It is required: a tool without
// one refuses every path.
type Check func(path string) (reason string, masked bool)

// MaskedDotEnv is what a read of a .env file returns: the one sentence
// that tells the model where secrets come from instead.
const MaskedDotEnv = "masked: secrets reach tools through the vault; see `hush vault import`"

// Tools returns the five file tools sharing check. walkCheck, if set, is
// the same list's check for paths that hold no symlink
// (sandbox.MaskSet.MaskedResolved), which glob and grep ask about every
// file they walk past; writeCheck, if set, is what write and edit must
// not change beyond check (sandbox.MaskSet.WriteMasked: the read-only
// masks, such as hush's own executable and ~/.ssh).
func Tools(check, walkCheck, writeCheck Check) []executor.Tool {
	return []executor.Tool{Read{Check: check}, Write{Check: check, WriteCheck: writeCheck}, Edit{Check: check, WriteCheck: writeCheck},
		Glob{Check: check, WalkCheck: walkCheck}, Grep{Check: check, WalkCheck: walkCheck}}
}

// checkWrite refuses a target that writeCheck covers (nil: none), by the
// name the model used or by where its symlinks lead.
func checkWrite(writeCheck Check, t target) error {
	if writeCheck == nil {
		return nil
	}
	if p, reason, via, masked := maskedBy(writeCheck, t.Shown, t.Real); masked {
		return fmt.Errorf("refused: %s is %s%s; hush's file tools may read it but never change it", p, reason, via)
	}
	return nil
}

// maskedBy returns the first of real and shown that check covers, why,
// and, where real is not the name the model used, a note that shown
// leads there through a symlink.
func maskedBy(check Check, shown, real string) (p, reason, via string, masked bool) {
	for _, p := range []string{real, shown} {
		if reason, masked := check(p); masked {
			if p == real && real != shown {
				via = fmt.Sprintf(" (%s leads there through a symlink)", shown)
			}
			return p, reason, via, true
		}
	}
	return "", "", "", false
}

// walkCheckOf is the check a walk uses.
func walkCheckOf(check, walkCheck Check) Check {
	if walkCheck != nil {
		return walkCheck
	}
	return check
}

// target is a path a call names, resolved.
type target struct {
	// Shown is the path as the model gave it, made absolute.
	Shown string
	// Real is Shown with every symlink resolved (for a file that does not
	// exist yet: its nearest existing parent resolved, the rest appended).
	Real string
	// Inside reports whether Real lies in the project directory.
	Inside bool
	// Exists reports whether Real exists.
	Exists bool
}

// resolve makes p (relative to the project dir, or absolute) a target and
// applies the mask check to both the path as named and where it leads.
func resolve(check Check, dir, p string) (target, error) {
	if dir == "" {
		return target{}, errors.New("no project directory")
	}
	if p == "" {
		return target{}, errors.New("bad arguments: path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return target{}, errors.New("bad arguments: path contains a NUL byte")
	}
	if strings.HasPrefix(p, "~/") || p == "~" {
		return target{}, fmt.Errorf("bad arguments: %q: ~ is not expanded; give an absolute path", p)
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, abs)
	}
	abs = filepath.Clean(abs)
	t := target{Shown: abs}
	real, exists, err := realPath(abs)
	if err != nil {
		return t, err
	}
	t.Real, t.Exists = real, exists
	root, _, err := realPath(filepath.Clean(dir))
	if err != nil {
		return t, err
	}
	t.Inside = within(root, real)
	if err := checkPath(check, abs, real); err != nil {
		return t, err
	}
	return t, nil
}

// realPath resolves every symlink in p. A path that does not exist yet is
// its nearest existing ancestor, resolved, with the rest appended.
func realPath(p string) (string, bool, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, true, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", false, fmt.Errorf("resolve %s: %w", p, unwrapPathError(err))
	}
	if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		// A dangling symlink: writing through it would create its target,
		// wherever that is. Resolve the target's name instead.
		dest, rerr := os.Readlink(p)
		if rerr != nil {
			return "", false, fmt.Errorf("resolve %s: %w", p, unwrapPathError(rerr))
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		r, _, err := realPath(filepath.Clean(dest))
		return r, false, err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, false, nil
	}
	rp, _, err := realPath(parent)
	if err != nil {
		return "", false, err
	}
	return filepath.Join(rp, filepath.Base(p)), false, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkPath refuses a path the mask list covers, by the name the model
// used or by where its symlinks lead.
func checkPath(check Check, shown, real string) error {
	if check == nil {
		return errors.New("refused: hush's mask check is not configured, so the file tools touch nothing")
	}
	if procPath(real) || procPath(shown) {
		return errors.New(procRefusal)
	}
	if p, reason, via, masked := maskedBy(check, shown, real); masked {
		if isDotEnv(p) {
			return errors.New(MaskedDotEnv)
		}
		return fmt.Errorf("masked: %s is %s%s; hush's file tools never touch it", p, reason, via)
	}
	return nil
}

// procRefusal: the file tools run inside hush, so /proc is hush's own view
// of every process of the user — hush's memory and the environments of
// the user's shells. A sandboxed tool sees a /proc of its own instead;
// the file tools refuse it whole. (Not a mask: the mask list is what a
// sandboxed tool must not see; this is what only an in-process tool could.)
const procRefusal = "refused: the file tools do not read /proc (from inside hush it shows hush's memory and other processes' environments); use bash, whose /proc is its own"

func procPath(p string) bool {
	return p == "/proc" || strings.HasPrefix(p, "/proc/")
}

// isDotEnv reports whether p names a .env file (.env, .env.local, .envrc):
// only to pick the sentence a masked read returns; whether it is masked at
// all is Check's decision.
func isDotEnv(p string) bool {
	b := filepath.Base(p)
	return b == ".env" || b == ".envrc" || strings.HasPrefix(b, ".env.")
}

// display is how a path is shown to the model: relative to the project
// directory when inside it.
func display(dir, p string) string {
	if rel, err := filepath.Rel(dir, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}

// readPreview is the gate's view of a call that only reads: routine inside
// the project, asked (with the resolved path) outside it.
func readPreview(verb string, t target) executor.Preview {
	pv := executor.Preview{Detail: verb + " " + t.Real, Path: t.Real}
	if t.Inside {
		pv.Default, pv.DefaultReason = executor.Allow, verb+" inside the project"
	} else if t.Real != t.Shown {
		pv.Detail += " (named " + t.Shown + ")"
	}
	return pv
}
