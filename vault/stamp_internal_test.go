package vault

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestEnvFileTrustsOnlySettledStamps: a vault file whose last change is
// more than settleAfter old is not read again while its stamp holds (the
// fast path taken), and every later change — in place, same size, same
// inode — is still seen on the next read.
func TestEnvFileTrustsOnlySettledStamps(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stat stamps are used on Linux only")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), EnvFileName)
	writeInPlace := func(content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil { // truncates: same inode
			t.Fatal(err)
		}
	}
	e := NewEnvFile(path)
	get := func(want string) {
		t.Helper()
		all, err := e.All()
		if err != nil {
			t.Fatal(err)
		}
		if all["TOKEN"] != want {
			t.Fatalf("TOKEN = %q, want %q", all["TOKEN"], want)
		}
	}
	writeInPlace("TOKEN=aaaa-1111\n")
	get("aaaa-1111")
	if e.settled {
		t.Fatal("a file written just now counts as settled")
	}
	time.Sleep(settleAfter + 100*time.Millisecond)
	get("aaaa-1111") // read again: now settled
	if !e.settled {
		t.Fatal("a file last changed over settleAfter ago is not settled")
	}
	// Positive control for the fast path: with the stamp unchanged the
	// file is not read, so bytes planted in the cache are what comes back.
	e.parsed["TOKEN"] = "from-the-cache"
	get("from-the-cache")
	writeInPlace("TOKEN=bbbb-2222\n") // same size, same inode, new ctime
	get("bbbb-2222")
	if e.settled {
		t.Fatal("a file changed just now counts as settled")
	}
}

// TestVersionFollowsEveryChange: Version stays put while nothing changes
// (the agent then skips reading the vault) and moves with a Set, an
// in-place edit, a removal, and a backend swapped in behind the proxy —
// even one whose own version happens to equal the old one's.
func TestVersionFollowsEveryChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := NewEnvFile(filepath.Join(dir, EnvFileName))
	p := NewProxy(e)
	l := &Layered{Backend: p, Process: map[string]string{}}
	version := func() uint64 {
		t.Helper()
		v, err := l.Version()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := e.Set("TOKEN", "aaaa-1111"); err != nil {
		t.Fatal(err)
	}
	v1 := version()
	if v := version(); v != v1 {
		t.Fatalf("version moved with nothing changed: %d then %d", v1, v)
	}
	steps := []struct {
		name   string
		change func() error
	}{
		{"set", func() error { return e.Set("TOKEN", "bbbb-2222") }},
		{"in-place edit, same size", func() error {
			return os.WriteFile(e.Path(), []byte("TOKEN=cccc-3333\n"), 0o600)
		}},
		{"removed", func() error { return os.Remove(e.Path()) }},
		{"swapped for a twin", func() error {
			ev, err := e.Version()
			p.Swap(fakeVersioned{v: ev}) // the same backend version as e's
			return err
		}},
	}
	last := v1
	for _, s := range steps {
		if err := s.change(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		v := version()
		if v == last {
			t.Errorf("%s: version stayed %d", s.name, v)
		}
		last = v
	}
	if _, err := (&Layered{Backend: fakeUnversioned{}}).Version(); err != ErrNoVersion {
		t.Errorf("a backend without versions: err = %v, want ErrNoVersion", err)
	}
}

type fakeUnversioned struct{ Vault }

type fakeVersioned struct {
	Vault
	v uint64
}

func (f fakeVersioned) Version() (uint64, error) { return f.v, nil }
