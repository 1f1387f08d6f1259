package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/hushcli/hush/config/atomicfile"
	"github.com/hushcli/hush/config/userfile"
	"github.com/joho/godotenv"
)

// EnvFileName is the default backend's file in the data dir.
const EnvFileName = "vault.env"

// EnvFile is the default backend: a dotenv-format file in hush's data dir
// (never the project dir), mode 0600. Every change is a read-modify-write
// under an exclusive lock on a sibling lock file, written to a temp file,
// fsynced and renamed over the old one, so a crash leaves the old or the new
// file whole, and two processes setting different names lose neither.
// Reads take no lock (see lock).
type EnvFile struct {
	path string

	// The last parse, keyed by the file's exact bytes. The agent reads
	// every secret once per turn to build its redactor, and parsing 100
	// entries took about 0.7 ms of every tool call; comparing the bytes
	// takes microseconds and can never hand back a stale value.
	mu     sync.Mutex
	raw    []byte
	parsed map[string]string
	buf    []byte // reused for each read, so an unchanged file allocates nothing

	// The file as stat(2) saw it when raw was read, and whether that
	// version was settled then (see fileStamp): a settled file whose stamp
	// has not changed is not read again.
	stamp   fileStamp
	settled bool
	version uint64 // changes with parsed (Version)
}

// NewEnvFile returns the backend for the file at path. The file need not
// exist yet; its directory is created (0700) on the first write.
func NewEnvFile(path string) *EnvFile { return &EnvFile{path: path} }

// Path is where the backend keeps its secrets.
func (e *EnvFile) Path() string { return e.path }

// lock takes the exclusive lock every change holds for its read-modify-write.
// Reads take no lock: a change replaces the file by rename, so a reader
// opens the old file or the new one, whole, and never waits on a writer's
// fsync or needs write access to the data dir (or creates it).
func (e *EnvFile) lock() (func(), error) {
	if err := os.MkdirAll(filepath.Dir(e.path), 0o700); err != nil {
		return nil, fmt.Errorf("vault: create data dir: %w", err)
	}
	l := flock.New(e.path + ".lock")
	if err := l.Lock(); err != nil {
		return nil, fmt.Errorf("vault: lock %s: %w", e.path, err)
	}
	return func() { _ = l.Unlock() }, nil
}

func (e *EnvFile) read() (map[string]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.refresh(); err != nil {
		return nil, err
	}
	if e.parsed == nil {
		return map[string]string{}, nil // no file
	}
	return maps.Clone(e.parsed), nil // callers may change what they get
}

// refresh brings parsed up to the file's contents (nil when there is no
// file), reading it only when its stamp does not prove it unchanged. It
// runs under e.mu.
func (e *EnvFile) refresh() error {
	now := time.Now()
	stamp, err := statStamp(e.path)
	if errors.Is(err, fs.ErrNotExist) {
		e.forget()
		return nil
	}
	if err == nil && e.parsed != nil && e.settled && stamp == e.stamp {
		return nil
	}
	e.stamp, e.settled = stamp, err == nil && stamp.settledAt(now)
	data, err := readFile(e.path, e.buf[:0])
	if errors.Is(err, fs.ErrNotExist) {
		e.forget()
		return nil
	}
	if err != nil {
		e.settled = false
		return fmt.Errorf("vault: read %s: %w", e.path, err)
	}
	e.buf = data
	if e.parsed == nil || !bytes.Equal(data, e.raw) {
		// hush never writes a byte-order mark, but an editor saving the file may.
		m, err := parseEnv(bytes.TrimPrefix(data, []byte("\ufeff")))
		if err != nil {
			// The parser quotes the text near the fault; never pass it on.
			e.settled = false
			return fmt.Errorf("vault: %s is malformed (fix or remove it; contents not shown)", e.path)
		}
		e.raw, e.buf, e.parsed = data, e.raw[:0], m
		e.version++
	}
	return nil
}

// forget drops the last parse: the file is gone.
func (e *EnvFile) forget() {
	if e.parsed != nil {
		e.version++
	}
	e.raw, e.parsed, e.settled = e.raw[:0], nil, false
}

// Version implements Versioned. While the file is settled and its stamp
// unchanged it costs one stat(2); otherwise it reads the file as All does,
// without copying the result.
func (e *EnvFile) Version() (uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.refresh(); err != nil {
		return 0, err
	}
	return e.version, nil
}

// readFile is os.ReadFile into buf, through the syscall package: on Linux
// an os.File for a regular file costs four more system calls (the
// netpoller trying fcntl and epoll_ctl on it), and the agent reads the
// vault on every turn. It reads until read(2) says end of file, so a
// network file system's short reads cannot truncate it.
func readFile(path string, buf []byte) ([]byte, error) {
	// O_NONBLOCK: a named pipe put in the vault's place cannot make the
	// open wait; fstat then refuses anything but a regular file, and a file
	// over the limit, before a byte is read (the rules of config/userfile,
	// kept here on the syscall path).
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, userfile.NotRegular(modeOf(uint32(st.Mode)))
	}
	if st.Size > userfile.VaultLimit {
		return nil, userfile.TooLarge(userfile.VaultLimit)
	}
	for {
		if len(buf) > userfile.VaultLimit {
			return nil, userfile.TooLarge(userfile.VaultLimit)
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(4096, cap(buf)))
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// modeOf is the fs.FileMode type bits of a stat(2) mode.
func modeOf(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// fileStamp is one version of a file as stat(2) reports it. Any change to
// a file sets its ctime to the current time (a rename, which is how hush
// writes, gives it a new inode as well), and nobody can set ctime back. A
// stamp taken when the file's last change was already more than
// settleAfter old (settled) therefore changes with every later change:
// timestamps are kept to the kernel's clock tick or better, far under a
// second, so a later change cannot share the old ctime. Until a version
// has settled, its bytes are read and compared on every read, as before —
// the file was just written, and a second change in the same clock tick
// would keep its size and times. (Git trusts its index's stat data the
// same way, for the same reason.) A clock set backwards by more than
// settleAfter could hide one change, until the next.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // ns since the epoch
}

const settleAfter = time.Second

func (s fileStamp) settledAt(now time.Time) bool {
	limit := now.Add(-settleAfter).UnixNano()
	return s.ctime < limit && s.mtime < limit
}

// Get implements Vault.
func (e *EnvFile) Get(name string) (string, error) {
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
	m, err := e.read()
	if err != nil {
		return nil, err
	}
	return sortedKeys(m), nil
}

// All returns every stored secret in one read, for building the redactor.
func (e *EnvFile) All() (map[string]string, error) {
	return e.read()
}

// Set implements Vault.
func (e *EnvFile) Set(name, value string) error {
	if err := e.storable(name, value); err != nil {
		return err
	}
	return e.update(func(m map[string]string) bool {
		m[name] = value
		return true
	})
}

// Delete implements Vault. Deleting a name that is not stored writes
// nothing, so it does not create the file either.
func (e *EnvFile) Delete(name string) error {
	return e.update(func(m map[string]string) bool {
		if _, ok := m[name]; !ok {
			return false
		}
		delete(m, name)
		return true
	})
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
	if _, ok := encodeValue(name, value); !ok {
		return fmt.Errorf("secret %s: the value %w in %s (it would not read back unchanged)", name, ErrUnstorable, EnvFileName)
	}
	return nil
}

// update applies change under the exclusive lock and rewrites the file when
// change reports that it changed something.
func (e *EnvFile) update(change func(map[string]string) bool) error {
	unlock, err := e.lock()
	if err != nil {
		return err
	}
	defer unlock()
	m, err := e.read()
	if err != nil {
		return err
	}
	if !change(m) {
		return nil
	}
	data, err := marshal(m)
	if err != nil {
		return err
	}
	return writeAtomic(e.path, data)
}

// marshal writes one NAME=value line each. godotenv.Marshal would do, but it
// turns integer-looking values into unquoted numbers and loses leading zeros.
// A value that was read from a hand-edited file but cannot be written back
// unchanged is an error naming the secret, never a silent rewrite.
func marshal(m map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# hush vault (default backend). Managed by `hush vault`; keep it 0600.\n")
	for _, k := range sortedKeys(m) {
		enc, ok := encodeValue(k, m[k])
		if !ok {
			return nil, fmt.Errorf("vault: secret %s in %s: its value %w (it would not read back unchanged); replace or delete it", k, EnvFileName, ErrUnstorable)
		}
		fmt.Fprintf(&b, "%s=%s\n", k, enc)
	}
	return b.Bytes(), nil
}

// dquote escapes what godotenv's double-quoted form unescapes. A Replacer
// is safe for concurrent use and never changes, so sharing it is no state.
var dquote = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, `"`, `\"`, `$`, `\$`)

// encodeValue returns the first spelling of value that godotenv reads back
// unchanged as the only entry of a file. Double quotes take almost anything,
// but godotenv cannot end a double-quoted value with a backslash or a quote
// (it treats the closing quote as escaped, and trims every trailing quote),
// so single quotes (no escapes at all) and a bare value (only $ escaped) are
// the fallbacks that let such values, common in generated passwords, be
// stored. Every spelling escapes or avoids $, so a value never depends on the
// entries before it in the file.
func encodeValue(name, value string) (string, bool) {
	for _, enc := range []string{
		`"` + dquote.Replace(value) + `"`,
		`'` + value + `'`,
		strings.ReplaceAll(value, "$", `\$`),
	} {
		back, err := godotenv.UnmarshalBytes([]byte(name + "=" + enc + "\n"))
		if got, ok := back[name]; err == nil && len(back) == 1 && ok && got == value {
			return enc, true
		}
	}
	return "", false
}

// writeAtomic replaces path with data through hush's one atomic writer
// (temp file 0600 in the same dir, fsync, rename, fsync of the dir).
func writeAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, nil); err != nil {
		return fmt.Errorf("vault: write %s: %w", path, err)
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
