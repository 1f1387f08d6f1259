package session

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/vault/keyring"
	"github.com/hushcli/hush/vault/keyring/keyringtest"
	gokeyring "github.com/zalando/go-keyring"
)

// vaultWorld is a config dir, a data dir, a project and a keyring service
// of its own, with an ambient environment that points at them.
type vaultWorld struct {
	configDir, dataDir, project string
	service                     string // keyring service, unique per test
	ambient                     map[string]string
	out, errOut                 *bytes.Buffer
}

func newVaultWorld(t *testing.T) *vaultWorld {
	t.Helper()
	root := t.TempDir()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	w := &vaultWorld{configDir: filepath.Join(root, "config"), dataDir: filepath.Join(root, "data"), project: filepath.Join(root, "project"),
		service: "hush-test-" + hex.EncodeToString(b), out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
	w.ambient = map[string]string{
		"HOME":                     filepath.Join(root, "home"),
		"PATH":                     os.Getenv("PATH"),
		keyring.ServiceEnv:         w.service,
		"DBUS_SESSION_BUS_ADDRESS": os.Getenv("DBUS_SESSION_BUS_ADDRESS"),
	}
	for _, d := range []string{w.configDir, w.dataDir, w.project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = gokeyring.DeleteAll(w.service) })
	return w
}

func (w *vaultWorld) dirs() config.Dirs { return config.Dirs{Config: w.configDir, Data: w.dataDir} }

func (w *vaultWorld) open(t *testing.T) *Vault {
	t.Helper()
	v, err := OpenVault(config.Config{}, VaultRegistry(w.ambient), w.dataDir, w.ambient, w.project)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// requireKeyring skips unless the real Secret Service answers a round trip.
func requireKeyring(t *testing.T, w *vaultWorld) *keyring.Backend {
	t.Helper()
	kb, err := keyring.Open(keyring.Options{Service: w.service, Env: w.ambient, DataDir: w.dataDir})
	if err != nil {
		t.Skipf("needs secret-service: no Secret Service to test against (run through scripts/with-secret-service): %v", err)
	}
	t.Cleanup(func() { _ = kb.Close() })
	keyringtest.RequireRoundTrip(t, kb)
	return kb
}

// flaky wraps a real backend: it accepts setsLeft writes and then fails,
// the way a backend that breaks half-way does.
type flaky struct {
	vault.Vault
	mu       sync.Mutex
	setsLeft int
}

func (f *flaky) Set(name, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.setsLeft == 0 {
		return errors.New("injected: the backend is full")
	}
	f.setsLeft--
	return f.Vault.Set(name, value)
}

const vaultCanary = "zq9MOVEcanary"

var moveSecretsValues = map[string]string{
	"A_TOKEN": "value-a-" + vaultCanary, "B_KEY": "value-b\nline2", "C_PASS": `"quoted" \ $X`, "D_URL": "postgres://u:p@h/db", "E": "007",
}

// TestMoveToKeyring: the real keyring, registered through the vault
// registry as "keyring" — first wrapped to fail after three writes, then as
// it is. The failed move leaves the file and config.toml as they were and
// nothing in the keyring; the good one moves every secret.
func TestMoveToKeyring(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	kb := requireKeyring(t, w)
	v := w.open(t)
	for k, val := range moveSecretsValues {
		if err := v.Set(k, val); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(w.configDir, config.FileName)
	cfgBefore := "# mine\n[turn]\nmax_steps = 9\n"
	if err := os.WriteFile(cfgPath, []byte(cfgBefore), 0o600); err != nil {
		t.Fatal(err)
	}
	envfilePath := filepath.Join(w.dataDir, vault.EnvFileName)

	failing := vault.NewRegistry()
	failing.Register("keyring", func(dataDir string) (vault.Vault, error) {
		k, err := keyring.Factory(w.ambient)(dataDir)
		return &flaky{Vault: k, setsLeft: 3}, err
	})
	_, err := v.MoveTo(failing, "keyring", w.dirs(), nil, nil)
	if want := "copy D_URL: injected: the backend is full; nothing was switched: the old backend is unchanged and the copies were removed"; err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant %s", err, want)
	}
	if got, _ := vault.NewEnvFile(envfilePath).All(); !maps.Equal(got, moveSecretsValues) {
		t.Errorf("vault.env after the failed move = %q", got)
	}
	if names, _ := kb.Names(); len(names) != 0 {
		t.Errorf("the keyring holds %q after the failed move", names)
	}
	if got, _ := os.ReadFile(cfgPath); string(got) != cfgBefore {
		t.Errorf("config.toml changed:\n%s", got)
	}
	if _, isFile := v.Proxy.Backend().(*vault.EnvFile); !isFile {
		t.Errorf("the vault switched backends: %T", v.Proxy.Backend())
	}

	rep, err := v.MoveTo(VaultRegistry(w.ambient), "keyring", w.dirs(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Moved) != len(moveSecretsValues) || len(rep.LeftBehind) != 0 {
		t.Errorf("report = %+v", rep)
	}
	if got, _ := vault.NewEnvFile(envfilePath).All(); len(got) != 0 {
		t.Errorf("vault.env still holds %q", slices.Sorted(maps.Keys(got)))
	}
	if got, _ := kb.All(); !maps.Equal(got, moveSecretsValues) {
		t.Errorf("the keyring holds %d secrets, want every one", len(got))
	}
	if got, _ := os.ReadFile(cfgPath); string(got) != cfgBefore+"\n[vault]\nbackend = \"keyring\"\n" {
		t.Errorf("config.toml =\n%s", got)
	}
	// The layered vault reads through to the keyring now.
	if val, err := v.Get("B_KEY"); err != nil || val != moveSecretsValues["B_KEY"] {
		t.Errorf("Get through the vault after the move = %q, %v", val, err)
	}
	if _, isKeyring := v.Proxy.Backend().(*keyring.Backend); !isKeyring {
		t.Errorf("the vault did not switch: %T", v.Proxy.Backend())
	}
}
