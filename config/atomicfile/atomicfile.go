// Package atomicfile is hush's one way to replace a file it owns
// (config.toml, mcp.json, trusted-projects.json, the envfile vault): the
// new content goes to a 0600 temp file beside the old one, is synced, may
// be checked, and is renamed over it. A reader never sees half a file, and
// a crash leaves the old file as it was and at most a stray temp file.
//
// It is a leaf (standard library only) so that both config and vault use
// it. It never creates directories: the caller knows which mode they need.
package atomicfile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// WriteFile replaces path with data, 0600. When check is not nil it runs
// on the synced temp file before the rename; its error leaves path as it
// was. Errors are the operation's own (*fs.PathError and the like), for
// the caller to wrap with what it was writing.
func WriteFile(path string, data []byte, check func(tmp string) error) error {
	return WriteFileMode(path, data, 0o600, check)
}

// WriteFileMode is WriteFile with the new file's mode: the file tools
// keep a project file's own mode (a script stays executable). The temp
// file has the mode before data is written to it.
func WriteFileMode(path string, data []byte, mode os.FileMode, check func(tmp string) error) error {
	dir := filepath.Dir(path)
	// The pid in the name lets RemoveStale tell a killed writer's leftover
	// (it holds the whole new content, secrets included) from a live one.
	f, err := os.CreateTemp(dir, tempPrefix(path)+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Chmod(mode); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if check != nil {
		if err := check(tmp); err != nil {
			_ = os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	// The rename is durable once the directory is synced; a failure here
	// loses nothing already written, so it is not reported.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// tempPrefix is how WriteFile's temp files for path are named, before the
// writer's pid: ".vault.env.tmp-".
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// staleAge is how old a temp file without a pid in its name (written by an
// older hush) must be to count as a killed writer's: a write takes
// milliseconds.
const staleAge = time.Minute

// RemoveStale removes the temp files WriteFile left in dir when its
// process was killed between creating one and renaming it (SIGKILL during
// `hush vault set` left one per kill, each holding the whole vault), and
// returns their names. A temp file of a writer that still runs is kept.
func RemoveStale(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		i := strings.Index(name, ".tmp-")
		if !strings.HasPrefix(name, ".") || i < 0 || !e.Type().IsRegular() {
			continue
		}
		rest := name[i+len(".tmp-"):]
		pidText, _, hasPid := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		switch {
		case hasPid && err == nil && pid > 0:
			if pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
				continue // its writer may still be at work
			}
		default:
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < staleAge {
				continue
			}
		}
		if os.Remove(filepath.Join(dir, name)) == nil {
			removed = append(removed, name)
		}
	}
	return removed
}
