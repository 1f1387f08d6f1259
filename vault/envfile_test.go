package vault_test

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/hushcli/hush/config/userfile"
	"github.com/hushcli/hush/vault"
)

// canary marks a value that must never appear in an error.
const canary = "zq9CANARYvalue7x"

func newEnvFile(t *testing.T) (*vault.EnvFile, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", vault.EnvFileName)
	return vault.NewEnvFile(path), path
}

func mustSet(t *testing.T, v vault.Vault, kv ...string) {
	t.Helper()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := v.Set(kv[i], kv[i+1]); err != nil {
			t.Fatalf("Set(%s): %v", kv[i], err)
		}
	}
}

func TestEnvFileModes(t *testing.T) {
	t.Parallel()
	e, path := newEnvFile(t)
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("data dir exists before the first write: %v", err)
	}
	mustSet(t, e, "A", "1")
	checkMode(t, filepath.Dir(path), fs.ModeDir|0o700)
	checkMode(t, path, 0o600)
	mustSet(t, e, "B", "2")
	checkMode(t, path, 0o600)

	// A vault.env someone loosened (or created by hand) is tightened by the
	// next write, since every write replaces the file.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	mustSet(t, e, "A", "1")
	checkMode(t, path, 0o600)
}

func checkMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode(); got != want {
		t.Errorf("mode of %s = %v, want %v", path, got, want)
	}
}

// trickyValues must come back byte for byte from a file holding all of them.
var trickyValues = map[string]string{
	"EMPTY":            "",
	"LEADING_ZEROS":    "007",
	"DOUBLE_QUOTES":    `say "hi" twice`,
	"STARTS_QUOTE":     `"starts`,
	"ENDS_QUOTE":       `ends"`,
	"ONLY_QUOTE":       `"`,
	"QUOTED":           `"quoted"`,
	"SINGLE_QUOTES":    `it's 'single'`,
	"ENDS_SINGLE":      `x'`,
	"BACKSLASH":        `back\slash`,
	"ENDS_BACKSLASH":   `C:\Users\me\`,
	"ONLY_BACKSLASH":   `\`,
	"TWO_BACKSLASHES":  `\\`,
	"ESCAPED_QUOTE":    `\"`,
	"LITERAL_ESCAPES":  `\n \r \t \$ \\n`,
	"DOLLAR":           `$`,
	"DOLLAR_NAME":      `$HOME and $1`,
	"REFERENCE":        `${EMPTY}${LEADING_ZEROS}`,
	"ESCAPED_REF":      `$${X}`,
	"SUBSHELL":         `$(id)`,
	"NEWLINES":         "line1\nline2\n",
	"CRLF":             "a\r\nb",
	"CR":               "a\rb",
	"HASH":             "#",
	"HASH_COMMENT":     "value # not a comment",
	"LEADING_HASH":     "# leading",
	"SPACES":           "  leading and trailing  ",
	"TAB":              "\t",
	"EQUALS":           "a=b=c",
	"ONLY_EQUALS":      "=",
	"UNICODE":          "ünïcødé ✓ 🔑 \u00a0nbsp \u0085nel",
	"NOT_UTF8":         "\xff\xfe",
	"EXPORT_LOOKALIKE": "export X=1",
	"MIXED":            "l1\n  \"q\" 'q' \\ $X ${Y} # c\nend",
}

func TestEnvFileRoundTrip(t *testing.T) {
	t.Parallel()
	e, path := newEnvFile(t)
	for name, value := range trickyValues {
		if err := e.Set(name, value); err != nil {
			t.Errorf("Set(%s, %q): %v", name, value, err)
		}
	}
	// A fresh instance reads only what is on disk.
	fresh := vault.NewEnvFile(path)
	for name, want := range trickyValues {
		got, err := fresh.Get(name)
		if err != nil || got != want {
			t.Errorf("Get(%s) = %q, %v; want %q", name, got, err, want)
		}
	}
	all, err := fresh.All()
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(all, trickyValues) {
		t.Errorf("All = %q\nwant  %q", all, trickyValues)
	}
	names, err := fresh.Names()
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Sorted(maps.Keys(trickyValues)); !slices.Equal(names, want) {
		t.Errorf("Names = %q, want %q", names, want)
	}

	// Overwrite: the new value replaces the old one, nothing else moves.
	mustSet(t, e, "LEADING_ZEROS", "0042")
	if got, _ := fresh.Get("LEADING_ZEROS"); got != "0042" {
		t.Errorf("Get after overwrite = %q, want %q", got, "0042")
	}
	if got, _ := fresh.Get("ENDS_BACKSLASH"); got != trickyValues["ENDS_BACKSLASH"] {
		t.Errorf("Get(ENDS_BACKSLASH) after another Set = %q", got)
	}
}

// TestEnvFileOnDisk pins the file format: a header, then NAME=value lines in
// name order, double-quoted unless a value needs another spelling.
func TestEnvFileOnDisk(t *testing.T) {
	t.Parallel()
	e, path := newEnvFile(t)
	mustSet(t, e, "PIN", "007", "QUOTE", `ends"`, "WIN", `C:\dir\`, "MULTI", "a\nb $X")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# hush vault (default backend). Managed by `hush vault`; keep it 0600.\n" +
		`MULTI="a\nb \$X"` + "\n" +
		`PIN="007"` + "\n" +
		`QUOTE='ends"'` + "\n" +
		`WIN=C:\dir\` + "\n"
	if string(data) != want {
		t.Errorf("vault.env =\n%s\nwant\n%s", data, want)
	}
}

func TestEnvFileUnstorable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		test, name, value, want string
	}{
		{"empty name", "", canary, "secret name is empty: cannot be stored"},
		{"leading digit", "1ABC", canary, `secret name "1ABC" cannot be stored: use letters, digits and _, not starting with a digit`},
		{"dash", "A-B", canary, `secret name "A-B" cannot be stored: use letters, digits and _, not starting with a digit`},
		{"equals", "A=B", canary, `secret name "A=B" cannot be stored: use letters, digits and _, not starting with a digit`},
		{"space", "A B", canary, `secret name "A B" cannot be stored: use letters, digits and _, not starting with a digit`},
		{"non-ASCII letter", "ÄB", canary, `secret name "ÄB" cannot be stored: use letters, digits and _, not starting with a digit`},
		{"too long", strings.Repeat("A", 257), canary, `secret name "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"... is longer than 256 characters: cannot be stored`},
		{"NUL in value", "OK", canary + "\x00" + canary, "secret OK: a value with a NUL byte cannot be stored in vault.env"},
		{"trailing backslash and a newline", "OK", canary + "\n" + canary + `\`, "secret OK: the value cannot be stored in vault.env (it would not read back unchanged)"},
		{"trailing backslash and edge spaces", "OK", " " + canary + `\`, "secret OK: the value cannot be stored in vault.env (it would not read back unchanged)"},
	}
	for _, tt := range tests {
		t.Run(tt.test, func(t *testing.T) {
			t.Parallel()
			e, path := newEnvFile(t)
			err := e.Set(tt.name, tt.value)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Set error = %v\nwant        %s", err, tt.want)
			}
			if !errors.Is(err, vault.ErrUnstorable) {
				t.Errorf("error %q does not wrap ErrUnstorable", err)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q contains the value", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused Set wrote %s (stat: %v)", path, err)
			}
		})
	}
	if err := vault.CheckName(strings.Repeat("A", 256)); err != nil {
		t.Errorf("CheckName of a 256-character name: %v", err)
	}
}

func TestEnvFileGetMissing(t *testing.T) {
	t.Parallel()
	e, _ := newEnvFile(t)
	check := func(when string) {
		t.Helper()
		got, err := e.Get("NOPE")
		if !errors.Is(err, vault.ErrNotFound) || err.Error() != "secret NOPE: not in the vault" {
			t.Errorf("%s: Get(NOPE) = %q, %v; want %q wrapping ErrNotFound", when, got, err, "secret NOPE: not in the vault")
		}
	}
	check("no file")
	mustSet(t, e, "OTHER", canary)
	check("file without the name")
	names, err := e.Names()
	if err != nil || !slices.Equal(names, []string{"OTHER"}) {
		t.Errorf("Names = %q, %v; want [OTHER]", names, err)
	}
}

func TestEnvFileReadsOfMissingFile(t *testing.T) {
	t.Parallel()
	e, path := newEnvFile(t)
	names, err := e.Names()
	if err != nil || len(names) != 0 {
		t.Errorf("Names = %q, %v; want none", names, err)
	}
	all, err := e.All()
	if err != nil || all == nil || len(all) != 0 {
		t.Errorf("All = %q, %v; want an empty map", all, err)
	}
	if _, err := e.Get("A"); !errors.Is(err, vault.ErrNotFound) {
		t.Errorf("Get = %v, want ErrNotFound", err)
	}
	// Reading is not writing: no data dir, no lock file appears.
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reads created the data dir (stat: %v)", err)
	}
}

// Reads need no write access to the data dir (a read-only mount, say).
func TestEnvFileReadOnlyDir(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root writes to read-only dirs anyway")
	}
	e, path := newEnvFile(t)
	mustSet(t, e, "A", "1")
	dir := filepath.Dir(path)
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	if got, err := vault.NewEnvFile(path).Get("A"); err != nil || got != "1" {
		t.Errorf("Get in a read-only dir = %q, %v; want 1", got, err)
	}
}

func TestEnvFileByteOrderMark(t *testing.T) {
	t.Parallel()
	e, path := newEnvFile(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("\ufeffA=\"1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustSet(t, e, "B", "2")
	all, err := e.All()
	if err != nil || !maps.Equal(all, map[string]string{"A": "1", "B": "2"}) {
		t.Errorf("All = %q, %v; want A and B", all, err)
	}
}

func TestEnvFileDelete(t *testing.T) {
	t.Parallel()
	e, path := newEnvFile(t)
	if err := e.Delete("NOPE"); err != nil {
		t.Fatalf("Delete with no file: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Delete of nothing created %s (stat: %v)", path, err)
	}
	mustSet(t, e, "KEEP", "k", "DROP", "d")
	if err := e.Delete("NOPE"); err != nil {
		t.Fatalf("Delete of a missing name: %v", err)
	}
	if err := e.Delete("DROP"); err != nil {
		t.Fatal(err)
	}
	if err := e.Delete("DROP"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	all, err := e.All()
	if err != nil || !maps.Equal(all, map[string]string{"KEEP": "k"}) {
		t.Errorf("All after Delete = %q, %v; want KEEP only", all, err)
	}
}

func TestEnvFileMalformed(t *testing.T) {
	t.Parallel()
	for _, content := range []string{
		"A=\"" + canary + "\n",
		"A=1\nBAD-NAME=" + canary + "\n",
		canary + "\n",
	} {
		e, path := newEnvFile(t)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		want := "vault: " + path + " is malformed (fix or remove it; contents not shown)"
		_, getErr := e.Get("A")
		_, namesErr := e.Names()
		_, allErr := e.All()
		for op, err := range map[string]error{
			"Get": getErr, "Names": namesErr, "All": allErr,
			"Set": e.Set("B", "2"), "Delete": e.Delete("A"),
		} {
			if err == nil || err.Error() != want {
				t.Errorf("%s on %q: error = %v\nwant %s", op, content, err, want)
			}
		}
		// Set and Delete must not have "repaired" the file by rewriting it.
		data, err := os.ReadFile(path)
		if err != nil || string(data) != content {
			t.Errorf("malformed vault.env was rewritten: %q, %v", data, err)
		}
	}
}

// A hand edit can produce a value no spelling carries (here, through dotenv
// expansion: a newline and a trailing backslash). A later write must refuse
// rather than rewrite that value into something else.
func TestEnvFileUnwritableStoredValue(t *testing.T) {
	t.Parallel()
	e, path := newEnvFile(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	content := "A=\"" + canary + "\nl2\"\nB=${A}\\\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Get("B"); err != nil || got != canary+"\nl2\\" {
		t.Fatalf("Get(B) = %q, %v", got, err)
	}
	err := e.Set("C", "c")
	want := "vault: secret B in vault.env: its value cannot be stored (it would not read back unchanged); replace or delete it"
	if err == nil || err.Error() != want || !errors.Is(err, vault.ErrUnstorable) {
		t.Errorf("Set = %v, want %q", err, want)
	}
	if data, _ := os.ReadFile(path); string(data) != content {
		t.Errorf("vault.env was rewritten to %q", data)
	}
	if err := e.Delete("B"); err != nil {
		t.Errorf("Delete of the bad value: %v", err)
	}
	mustSet(t, e, "C", "c")
}

// TestEnvFileStrayTempFile is the state a crash between write and rename
// leaves: a half-written temp file beside the good vault.env.
func TestEnvFileStrayTempFile(t *testing.T) {
	t.Parallel()
	e, path := newEnvFile(t)
	mustSet(t, e, "A", "old-a", "B", "old-b")
	stray := filepath.Join(filepath.Dir(path), ".vault.env.tmp-123456")
	if err := os.WriteFile(stray, []byte("# hush vault\nA=\"new-a\"\nB=\"half-wri"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := vault.NewEnvFile(path)
	all, err := fresh.All()
	if err != nil || !maps.Equal(all, map[string]string{"A": "old-a", "B": "old-b"}) {
		t.Errorf("All with a stray temp file = %q, %v; want the old values", all, err)
	}
	mustSet(t, fresh, "C", "new-c")
	all, err = fresh.All()
	if err != nil || !maps.Equal(all, map[string]string{"A": "old-a", "B": "old-b", "C": "new-c"}) {
		t.Errorf("All after a Set past the stray = %q, %v", all, err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range entries {
		if n := de.Name(); strings.Contains(n, ".tmp-") && n != filepath.Base(stray) {
			t.Errorf("a successful Set left its temp file %s behind", n)
		}
	}
}

// Goroutines with their own EnvFile on one path behave like processes: each
// read-modify-write holds the lock, so no Set is lost.
func TestEnvFileConcurrentSetters(t *testing.T) {
	t.Parallel()
	_, path := newEnvFile(t)
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			e := vault.NewEnvFile(path)
			for i := range each {
				if err := e.Set(fmt.Sprintf("W%d_%d", w, i), fmt.Sprintf("v%d-%d", w, i)); err != nil {
					errs <- err
				}
				if _, err := e.Names(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, err := vault.NewEnvFile(path).All()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != workers*each {
		t.Errorf("%d names survived, want %d", len(all), workers*each)
	}
	for w := range workers {
		for i := range each {
			if got, want := all[fmt.Sprintf("W%d_%d", w, i)], fmt.Sprintf("v%d-%d", w, i); got != want {
				t.Errorf("W%d_%d = %q, want %q", w, i, got, want)
			}
		}
	}
}

// A vault file that is a named pipe or a device is refused at once, in a
// sentence, rather than read forever.
func TestEnvFileRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.env")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.env")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo: "vault: read " + fifo + ": it is a named pipe (FIFO); hush reads only regular files",
		zero: "vault: read " + zero + ": it is a character device; hush reads only regular files",
	} {
		_, err := vault.NewEnvFile(path).Names()
		if err == nil || err.Error() != want || !errors.Is(err, userfile.ErrNotRegular) {
			t.Errorf("Names of %s: %v\nwant %s", path, err, want)
		}
	}
}
