package files

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/aymanbagabas/go-udiff"
	"github.com/hushcli/hush/config/atomicfile"
	"github.com/hushcli/hush/executor"
)

// MaxWriteBytes bounds one file write or edit result.
const MaxWriteBytes = 16 << 20

// change is what write and edit preview and, once approved, apply: the
// file as it was when the diff was made and what replaces it.
type change struct {
	path    string // resolved
	existed bool
	old     []byte
	new     []byte
	mode    fs.FileMode
}

// loadForChange reads the file a write or edit targets, refusing what it
// may not change. A write or edit outside the project is refused unless a
// configured rule allows it (the Preview's Default).
func loadForChange(t target, name string) (change, error) {
	c := change{path: t.Real, mode: 0o644}
	if !t.Exists {
		return c, nil
	}
	fi, err := os.Stat(t.Real)
	if err != nil {
		return c, fmt.Errorf("stat %s: %w", name, unwrapPathError(err))
	}
	if fi.IsDir() {
		return c, fmt.Errorf("%s is a directory", name)
	}
	if !fi.Mode().IsRegular() {
		return c, fmt.Errorf("%s is not a regular file (%s)", name, fi.Mode().Type())
	}
	if fi.Size() > MaxWriteBytes {
		return c, fmt.Errorf("%s is %s; write and edit handle files up to %s", name, size(fi.Size()), size(MaxWriteBytes))
	}
	data, err := readRegular(t.Real, name, MaxWriteBytes)
	if err != nil {
		return c, fmt.Errorf("read %s: %w", name, unwrapPathError(err))
	}
	if kind, bin := binaryKind(data[:min(len(data), 8192)]); bin {
		return c, fmt.Errorf("refused: %s is a binary file (%s); write and edit change text files only", name, kind)
	}
	c.existed, c.old, c.mode = true, data, fi.Mode().Perm()
	return c, nil
}

// placeholder is the redactor's stand-in for a secret value.
var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[REDACTED:[^\]\s]+\]`) })

// checkPlaceholders refuses new content with more redaction placeholders
// than the file had: the model saw a secret in the file as [REDACTED:NAME]
// and writing that back would replace the user's real value with it (and
// the approval's diff, redacted too, would show both lines alike).
func (c change) checkPlaceholders(name string) error {
	if n, o := len(placeholder().FindAllIndex(c.new, -1)), len(placeholder().FindAllIndex(c.old, -1)); n > o {
		return fmt.Errorf("refused: the new content of %s holds %s, the placeholder the model is shown instead of a secret; "+
			"writing it would replace the real value in the file. Leave the lines holding secrets out of the change", name, placeholder().Find(c.new))
	}
	return nil
}

// preview is the gate request of a change: the complete unified diff.
func (c change) preview(verb, name string, t target) executor.Preview {
	from, to := "a/"+name, "b/"+name
	if !c.existed {
		from = "/dev/null"
	}
	diff := udiff.Unified(from, to, string(c.old), string(c.new))
	if diff == "" {
		diff = "(no change: the file already has exactly this content)\n"
	}
	added, removed := countDiff(diff)
	pv := executor.Preview{
		Detail: fmt.Sprintf("%s %s (+%d −%d lines)", verb, t.Real, added, removed),
		Path:   t.Real,
		Diff:   diff,
		State:  c,
	}
	if !t.Inside {
		pv.Default = executor.Deny
		pv.DefaultReason = fmt.Sprintf("%s is outside the project directory, where %s may not write", t.Real, verb)
	}
	return pv
}

func countDiff(diff string) (added, removed int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}

// ErrChanged is returned when the file changed between the diff shown in
// the approval and the write.
var ErrChanged = errors.New("changed since the diff was shown")

// apply writes the approved change, only if the file is still what the
// diff was made from, through hush's one atomic writer (atomicfile): a
// synced temporary file in the same directory renamed over the old one,
// so a reader never sees half a file and a failure leaves the old one
// whole.
func (c change) apply(name string) error {
	cur, err := readRegular(c.path, name, MaxWriteBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if c.existed {
			return fmt.Errorf("%s was deleted after the diff was shown; nothing was written: read it again and redo the change", name)
		}
	case err != nil:
		return fmt.Errorf("read %s: %w", name, unwrapPathError(err))
	case !c.existed:
		return fmt.Errorf("%s was created by something else after the diff was shown; nothing was written: read it and redo the change", name)
	case !bytes.Equal(cur, c.old):
		return fmt.Errorf("%s %w; nothing was written: read it again and redo the change", name, ErrChanged)
	}
	// The directories on the way must still be the ones the diff was made
	// for: one swapped for a symlink since would carry the write elsewhere.
	if real, _, err := realPath(c.path); err != nil || real != c.path {
		return fmt.Errorf("refused: %s no longer leads to %s (a directory on its way changed after the diff was shown); nothing was written", name, c.path)
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", display(dir, dir), unwrapPathError(err))
	}
	if err := atomicfile.WriteFileMode(c.path, c.new, c.mode, nil); err != nil {
		return fmt.Errorf("write %s: %w", name, unwrapPathError(err))
	}
	return nil
}

// approved returns the change the gate approved for this call.
func approved(tc *executor.ToolContext) (change, error) {
	if tc.Preview == nil {
		return change{}, errors.New("no approved preview for this call; nothing was written")
	}
	c, ok := tc.Preview.State.(change)
	if !ok {
		return change{}, errors.New("the approved preview is not a file change; nothing was written")
	}
	return c, nil
}
