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
)

// WriteFile replaces path with data, 0600. When check is not nil it runs
// on the synced temp file before the rename; its error leaves path as it
// was. Errors are the operation's own (*fs.PathError and the like), for
// the caller to wrap with what it was writing.
func WriteFile(path string, data []byte, check func(tmp string) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Chmod(0o600); err != nil {
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
