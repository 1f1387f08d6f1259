package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
)

// The chat's @path completion and attachment: hush's own reads on the
// user's behalf, under the same rules as the file tools (DESIGN: a regular
// file inside the project, no symlink out, not masked, bounded, never
// blocking).

// MaxAttachBytes bounds a file attached to a prompt with @path.
const MaxAttachBytes = 256 << 10

// ProjectFiles lists the project's files for @ completion, relative to
// dir: what glob lists (.gitignore honoured; .git, symlinks and masked
// paths left out), at most limit of them, sorted.
func ProjectFiles(ctx context.Context, check Check, dir string, limit int) ([]string, error) {
	root, _, err := realPath(dir)
	if err != nil {
		return nil, err
	}
	var (
		mu  sync.Mutex
		out []string
	)
	w := &walker{check: check}
	w.visit = func(e entry) {
		if !w.allowed(e.path) {
			return
		}
		mu.Lock()
		if len(out) < limit {
			out = append(out, e.rel)
		} else {
			w.stop.Store(true)
		}
		mu.Unlock()
	}
	w.walk(ctx, root)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// ErrNotAttachable: a path named with @ that hush will not read for a
// prompt (outside the project, masked, a .env, not a regular file).
var ErrNotAttachable = errors.New("not attachable")

// Attach reads a project file named in a prompt (@path) through the read
// tool's checks: the mask list on the path and where it leads, a regular
// file opened without following a last symlink, inside the project even
// after every link is resolved, at most MaxAttachBytes.
func Attach(check Check, dir, p string) (string, error) {
	t, err := resolve(check, dir, p)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrNotAttachable, err.Error())
	}
	name := display(dir, t.Shown)
	switch {
	case !t.Inside:
		return "", fmt.Errorf("%w: %s leads outside the project", ErrNotAttachable, name)
	case isDotEnv(t.Real) || isDotEnv(t.Shown):
		return "", fmt.Errorf("%w: %s: %s", ErrNotAttachable, name, MaskedDotEnv)
	case !t.Exists:
		return "", fmt.Errorf("%s does not exist: %w", name, os.ErrNotExist)
	}
	f, err := openChecked(t.Real, name)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrNotAttachable, err.Error())
	}
	f.Close()
	b, err := readRegular(t.Real, name, MaxAttachBytes)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrNotAttachable, err.Error())
	}
	if _, ok := binaryKind(b[:min(len(b), 8192)]); ok {
		return "", fmt.Errorf("%w: %s is not text", ErrNotAttachable, name)
	}
	return string(b), nil
}
