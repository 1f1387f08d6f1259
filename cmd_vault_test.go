package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/vault/keyring"
	gokeyring "github.com/zalando/go-keyring"
)

// testApp is hush in-process with its own dirs, a project, and the given
// stdin; its ambient environment is a snapshot, like the real one.
type testApp struct {
	*app
	root           string
	out, errOut    *bytes.Buffer
	service        string // keyring service, unique per test
	configDir, dir string
}

func newTestApp(t *testing.T, stdin string) *testApp {
	t.Helper()
	root := t.TempDir()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	ta := &testApp{root: root, out: &bytes.Buffer{}, errOut: &bytes.Buffer{}, service: "hush-test-" + hex.EncodeToString(b),
		configDir: filepath.Join(root, "config"), dir: filepath.Join(root, "data")}
	amb := map[string]string{
		"HOME":                     filepath.Join(root, "home"),
		"PATH":                     os.Getenv("PATH"),
		"HUSH_CONFIG_DIR":          ta.configDir,
		"HUSH_DATA_DIR":            ta.dir,
		keyring.ServiceEnv:         ta.service,
		"DBUS_SESSION_BUS_ADDRESS": os.Getenv("DBUS_SESSION_BUS_ADDRESS"),
	}
	project := filepath.Join(root, "project")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	ta.app = &app{ambient: amb, stdin: strings.NewReader(stdin), stdout: ta.out, stderr: ta.errOut, workDir: project}
	t.Cleanup(func() { _ = gokeyring.DeleteAll(ta.service) })
	return ta
}

func (ta *testApp) project() string { return ta.workDir }

// requireKeyring skips unless the real Secret Service answers a round trip.
func requireKeyring(t *testing.T, ta *testApp) *keyring.Backend {
	t.Helper()
	kb, err := keyring.Open(keyring.Options{Service: ta.service, Env: ta.ambient, DataDir: ta.dir})
	if err != nil {
		t.Skipf("no Secret Service to test against (run through scripts/with-secret-service): %v", err)
	}
	t.Cleanup(func() { _ = kb.Close() })
	if err := kb.Set("HUSH_PROBE", "probe"); err != nil {
		t.Skipf("the Secret Service does not store items: %v", err)
	}
	if v, err := kb.Get("HUSH_PROBE"); err != nil || v != "probe" {
		t.Skipf("the Secret Service does not return what it stored: %v", err)
	}
	if err := kb.Delete("HUSH_PROBE"); err != nil {
		t.Fatal(err)
	}
	return kb
}

// flaky wraps a real backend: it accepts setsLeft writes and then fails,
// or stores a corrupted value, the way a backend that breaks half-way does.
type flaky struct {
	vault.Vault
	mu       sync.Mutex
	setsLeft int
	corrupt  string // a name whose stored value is altered
	failOn   string // a name whose Set fails
	deletes  bool   // Delete fails
}

func (f *flaky) Set(name, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.setsLeft == 0 || name == f.failOn {
		return errors.New("injected: the backend is full")
	}
	f.setsLeft--
	if name == f.corrupt {
		value += "~"
	}
	return f.Vault.Set(name, value)
}

func (f *flaky) Delete(name string) error {
	if f.deletes {
		return errors.New("injected: delete failed")
	}
	return f.Vault.Delete(name)
}

var moveSecretsValues = map[string]string{
	"A_TOKEN": "value-a-" + canaryValue, "B_KEY": "value-b\nline2", "C_PASS": `"quoted" \ $X`, "D_URL": "postgres://u:p@h/db", "E": "007",
}

const canaryValue = "zq9MOVEcanary"

// TestBackendSwitchToKeyring: the real keyring, registered through the
// vault registry as "keyring" — first wrapped to fail after three writes,
// then as it is. The failed switch leaves the file and config.toml as they
// were and nothing in the keyring; the good one moves every secret.
func TestBackendSwitchToKeyring(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	kb := requireKeyring(t, ta)
	lv, err := ta.openVault()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range moveSecretsValues {
		if err := lv.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(ta.configDir, config.FileName)
	if err := os.MkdirAll(ta.configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfgBefore := "# mine\n[turn]\nmax_steps = 9\n"
	if err := os.WriteFile(cfgPath, []byte(cfgBefore), 0o600); err != nil {
		t.Fatal(err)
	}
	envfilePath := filepath.Join(ta.dir, vault.EnvFileName)

	failing := vault.NewRegistry()
	failing.Register("keyring", func(dataDir string) (vault.Vault, error) {
		k, err := keyring.Factory(ta.ambient)(dataDir)
		return &flaky{Vault: k, setsLeft: 3}, err
	})
	_, err = ta.moveToBackend(failing, "keyring", nil, nil)
	if want := "copy D_URL: injected: the backend is full; nothing was switched: the old backend is unchanged and the copies were removed"; err == nil || err.Error() != want {
		t.Fatalf("error = %v\nwant %s", err, want)
	}
	if got, _ := vault.NewEnvFile(envfilePath).All(); !maps.Equal(got, moveSecretsValues) {
		t.Errorf("vault.env after the failed switch = %q", got)
	}
	if names, _ := kb.Names(); len(names) != 0 {
		t.Errorf("the keyring holds %q after the failed switch", names)
	}
	for k := range moveSecretsValues {
		if _, err := kb.Get(k); !errors.Is(err, vault.ErrNotFound) {
			t.Errorf("keyring still has %s: %v", k, err)
		}
	}
	if got, _ := os.ReadFile(cfgPath); string(got) != cfgBefore {
		t.Errorf("config.toml changed:\n%s", got)
	}
	if _, isFile := ta.proxy.Backend().(*vault.EnvFile); !isFile || ta.currentBackend() != "envfile" {
		t.Errorf("the session switched backends: %T, %q", ta.proxy.Backend(), ta.currentBackend())
	}

	rep, err := ta.moveToBackend(ta.vaultRegistry(), "keyring", nil, nil)
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
	// The layered vault the session holds now reads through to the keyring.
	if v, err := lv.Get("B_KEY"); err != nil || v != moveSecretsValues["B_KEY"] {
		t.Errorf("Get through the session's vault after the switch = %q, %v", v, err)
	}
	if _, isKeyring := ta.proxy.Backend().(*keyring.Backend); !isKeyring || ta.currentBackend() != "keyring" {
		t.Errorf("the session did not switch: %T, %q", ta.proxy.Backend(), ta.currentBackend())
	}
}

func TestVaultImportDisposesOfTheSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		opts       importOptions
		wantOut    string
		wantErr    string
		after      string // what is left: "gone", "kept", "renamed"
	}{
		{"delete", "A=1\nB_TOKEN=" + canaryValue + "\n", importOptions{deleteSource: true},
			"copied into the vault (envfile (DATA/vault.env)): A, B_TOKEN\ndeleted PROJECT/.env\n", "", "gone"},
		{"rename", "A=1\n", importOptions{renameSource: true},
			"copied into the vault (envfile (DATA/vault.env)): A\nrenamed PROJECT/.env to PROJECT/.env.imported (hush no longer reads it; delete it when you no longer need it)\n", "", "renamed"},
		{"neither, without a terminal", "A=1\n", importOptions{},
			"copied into the vault (envfile (DATA/vault.env)): A\nPROJECT/.env is still there (import copies, it does not move): hush still reads it; delete it, or use --delete-source or --rename-source\n", "", "kept"},
		{"delete refused when an entry is not stored", "A=1\nBAD.NAME=" + canaryValue + "\n", importOptions{deleteSource: true},
			"copied into the vault (envfile (DATA/vault.env)): A\nrefused: secret name \"BAD.NAME\" cannot be stored: use letters, digits and _, not starting with a digit\n",
			"not deleting PROJECT/.env: 1 entr(ies) are not in the vault (listed above); fix them, or keep the file aside with --rename-source", "kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ta := newTestApp(t, "")
			src := filepath.Join(ta.project(), ".env")
			if err := os.WriteFile(src, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			err := ta.vaultImport(src, tt.opts)
			fix := strings.NewReplacer(ta.project(), "PROJECT", ta.dir, "DATA")
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || fix.Replace(err.Error()) != tt.wantErr) {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
			if got := fix.Replace(ta.out.String()); got != tt.wantOut {
				t.Errorf("output =\n%s\nwant\n%s", got, tt.wantOut)
			}
			if strings.Contains(ta.out.String()+ta.errOut.String(), canaryValue) {
				t.Error("the output shows a value")
			}
			_, srcErr := os.Stat(src)
			_, renErr := os.Stat(src + ".imported")
			got := map[bool]map[bool]string{true: {true: "kept", false: "kept"}, false: {true: "renamed", false: "gone"}}[srcErr == nil][renErr == nil]
			if got != tt.after {
				t.Errorf("the source is %s, want %s", got, tt.after)
			}
			if v, err := vault.NewEnvFile(filepath.Join(ta.dir, vault.EnvFileName)).Get("A"); err != nil || v != "1" {
				t.Errorf("A in the vault = %q, %v", v, err)
			}
		})
	}
}

func TestReadSecretValue(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"v": "v", "v\n": "v", "v\r\n": "v", "v\n\n": "v\n", " v \n": " v ", "": ""} {
		ta := newTestApp(t, in)
		got, err := ta.readSecretValue("X")
		if err != nil || got != want {
			t.Errorf("readSecretValue(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestVaultSet(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, canaryValue+"\n")
	ta.ambient["MY_SERVICE_TOKEN"] = "from-the-environment"
	if err := ta.vaultSet("MY_SERVICE_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if got, _ := vault.NewEnvFile(filepath.Join(ta.dir, vault.EnvFileName)).Get("MY_SERVICE_TOKEN"); got != canaryValue {
		t.Errorf("stored %q", got)
	}
	wantOut := fmt.Sprintf("stored MY_SERVICE_TOKEN in the vault (envfile (%s))\n", filepath.Join(ta.dir, vault.EnvFileName))
	wantErr := "hush: warning: MY_SERVICE_TOKEN is also set in the environment hush was started with, and that value wins over the vault; unset it in your shell to use the stored one\n"
	if ta.out.String() != wantOut || ta.errOut.String() != wantErr {
		t.Errorf("stdout %q\nstderr %q", ta.out.String(), ta.errOut.String())
	}

	for _, tt := range []struct{ name, stdin, want string }{
		{"1BAD", "v", `secret name "1BAD" cannot be stored: use letters, digits and _, not starting with a digit`},
		{"EMPTY", "\n", "no value given; nothing was stored (to remove a secret: hush vault rm EMPTY)"},
	} {
		ta := newTestApp(t, tt.stdin)
		if err := ta.vaultSet(tt.name); err == nil || err.Error() != tt.want {
			t.Errorf("vaultSet(%s) = %v, want %q", tt.name, err, tt.want)
		}
	}
}
