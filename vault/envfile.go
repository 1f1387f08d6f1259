package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gofrs/flock"
	"github.com/joho/godotenv"
)

// EnvFileName is the default backend's file in the data dir.
const EnvFileName = "vault.env"

// EnvFile is the default backend: a dotenv-format file in hush's data dir
// (never the project dir), mode 0600. Every change is a read-modify-write
// under an exclusive lock on a sibling lock file, written to a temp file,
// fsynced and renamed over the old one, so a crash leaves the old or the new
// file whole, and two processes setting different names lose neither.
type EnvFile struct {
	path string
}

// NewEnvFile returns the backend for the file at path. The file need not
// exist yet; its directory is created (0700) on the first write.
func NewEnvFile(path string) *EnvFile { return &EnvFile{path: path} }

// Path is where the backend keeps its secrets.
func (e *EnvFile) Path() string { return e.path }

func (e *EnvFile) lock(exclusive bool) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(e.path), 0o700); err != nil {
		return nil, fmt.Errorf("vault: create data dir: %w", err)
	}
	l := flock.New(e.path + ".lock")
	var err error
	if exclusive {
		err = l.Lock()
	} else {
		err = l.RLock()
	}
	if err != nil {
		return nil, fmt.Errorf("vault: lock %s: %w", e.path, err)
	}
	return func() { _ = l.Unlock() }, nil
}

func (e *EnvFile) read() (map[string]string, error) {
	data, err := os.ReadFile(e.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vault: read %s: %w", e.path, err)
	}
	m, err := godotenv.UnmarshalBytes(data)
	if err != nil {
		// The parser quotes the text near the fault; never pass it on.
		return nil, fmt.Errorf("vault: %s is malformed (fix or remove it; contents not shown)", e.path)
	}
	return m, nil
}

// Get implements Vault.
func (e *EnvFile) Get(name string) (string, error) {
	unlock, err := e.lock(false)
	if err != nil {
		return "", err
	}
	defer unlock()
	m, err := e.read()
	if err != nil {
		return "", err
	}
	v, ok := m[name]
	if !ok {
		return "", notFound(name)
	}
	return v, nil
}

// Names implements Vault.
func (e *EnvFile) Names() ([]string, error) {
	unlock, err := e.lock(false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, err := e.read()
	if err != nil {
		return nil, err
	}
	return sortedKeys(m), nil
}

// All returns every stored secret in one read, for building the redactor.
func (e *EnvFile) All() (map[string]string, error) {
	unlock, err := e.lock(false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return e.read()
}

// Set implements Vault.
func (e *EnvFile) Set(name, value string) error {
	if err := e.storable(name, value); err != nil {
		return err
	}
	return e.update(func(m map[string]string) { m[name] = value })
}

// Delete implements Vault.
func (e *EnvFile) Delete(name string) error {
	return e.update(func(m map[string]string) { delete(m, name) })
}

// storable is the seed's unstorableKey: the base name policy narrowed to
// what a dotenv file can round-trip. Values are checked by writing them and
// parsing them back, which is the only test that cannot drift from the parser.
func (e *EnvFile) storable(name, value string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if strings.ContainsRune(value, 0) {
		return fmt.Errorf("secret %s: a value with a NUL byte %w in %s", name, ErrUnstorable, EnvFileName)
	}
	back, err := godotenv.UnmarshalBytes(marshal(map[string]string{name: value}))
	if err != nil || back[name] != value {
		return fmt.Errorf("secret %s: the value %w in %s (it would not read back unchanged)", name, ErrUnstorable, EnvFileName)
	}
	return nil
}

func (e *EnvFile) update(change func(map[string]string)) error {
	unlock, err := e.lock(true)
	if err != nil {
		return err
	}
	defer unlock()
	m, err := e.read()
	if err != nil {
		return err
	}
	change(m)
	return writeAtomic(e.path, marshal(m))
}

// marshal writes one NAME="value" line each, escaping what godotenv's
// double-quoted form unescapes. godotenv.Marshal would do, but it turns
// integer-looking values into unquoted numbers and loses leading zeros.
func marshal(m map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("# hush vault (default backend). Managed by `hush vault`; keep it 0600.\n")
	for _, k := range sortedKeys(m) {
		v := m[k]
		r := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, `"`, `\"`, `$`, `\$`)
		fmt.Fprintf(&b, "%s=\"%s\"\n", k, r.Replace(v))
	}
	return b.Bytes()
}

// writeAtomic replaces path with data: temp file in the same dir (0600),
// fsync, rename, fsync of the dir. A crash before the rename leaves the old
// file as it was and at most a stray temp file.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("vault: write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("vault: write %s: %w", path, err)
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
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("vault: write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
