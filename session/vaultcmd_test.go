package session

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
	"github.com/hushcli/hush/executor/auditlog"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/vault/keyring"
	"github.com/hushcli/hush/vault/keyring/keyringtest"
	"github.com/hushcli/hush/wizard"
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

func (w *vaultWorld) commands(v *Vault) vault.Commands {
	return vault.Commands{Layered: v.Layered, Proxy: v.Proxy, Backend: DefaultBackend, Out: w.out, Err: w.errOut}
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

func TestImportLegacyFileDisposesOfTheSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		opts       ImportOptions
		wantOut    string
		wantErr    string
		after      string // what is left: "gone", "kept", "renamed"
	}{
		{"delete", "A=1\nB_TOKEN=" + vaultCanary + "\n", ImportOptions{DeleteSource: true},
			"copied into the vault (envfile: DATA/vault.env): A, B_TOKEN\ndeleted PROJECT/.env\n", "", "gone"},
		{"rename", "A=1\n", ImportOptions{RenameSource: true},
			"copied into the vault (envfile: DATA/vault.env): A\nrenamed PROJECT/.env to PROJECT/.env.imported (hush no longer reads it; delete it when you no longer need it)\n", "", "renamed"},
		{"neither, without a terminal", "A=1\n", ImportOptions{},
			"copied into the vault (envfile: DATA/vault.env): A\nPROJECT/.env is still there (import copies, it does not move): hush still reads it; delete it, or use --delete-source or --rename-source\n", "", "kept"},
		{"the person chooses rename", "A=1\n", ImportOptions{Choose: func(_, _ string, safe bool) string {
			if !safe {
				return vault.KeepSource
			}
			return vault.RenameSource
		}},
			"copied into the vault (envfile: DATA/vault.env): A\nrenamed PROJECT/.env to PROJECT/.env.imported (hush no longer reads it; delete it when you no longer need it)\n", "", "renamed"},
		{"delete refused when an entry is not stored", "A=1\nBAD.NAME=" + vaultCanary + "\n", ImportOptions{DeleteSource: true},
			"copied into the vault (envfile: DATA/vault.env): A\nrefused: secret name \"BAD.NAME\" cannot be stored: use letters, digits and _, not starting with a digit\n",
			"not deleting PROJECT/.env: 1 entr(ies) are not in the vault (listed above); fix them, or keep the file aside with --rename-source", "kept"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newVaultWorld(t)
			src := filepath.Join(w.project, ".env")
			if err := os.WriteFile(src, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			err := ImportLegacyFile(src, func() (vault.Commands, error) { return w.commands(w.open(t)), nil }, tt.opts)
			fix := strings.NewReplacer(w.project, "PROJECT", w.dataDir, "DATA")
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || fix.Replace(err.Error()) != tt.wantErr) {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
			if got := fix.Replace(w.out.String()); got != tt.wantOut {
				t.Errorf("output =\n%s\nwant\n%s", got, tt.wantOut)
			}
			if strings.Contains(w.out.String()+w.errOut.String(), vaultCanary) {
				t.Error("the output shows a value")
			}
			_, srcErr := os.Stat(src)
			_, renErr := os.Stat(src + ".imported")
			got := map[bool]map[bool]string{true: {true: "kept", false: "kept"}, false: {true: "renamed", false: "gone"}}[srcErr == nil][renErr == nil]
			if got != tt.after {
				t.Errorf("the source is %s, want %s", got, tt.after)
			}
			if v, err := vault.NewEnvFile(filepath.Join(w.dataDir, vault.EnvFileName)).Get("A"); err != nil || v != "1" {
				t.Errorf("A in the vault = %q, %v", v, err)
			}
		})
	}
}

func TestImportLegacyFileRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	opened := false
	open := func() (vault.Commands, error) { opened = true; return w.commands(w.open(t)), nil }
	if err := ImportLegacyFile(w.project, open, ImportOptions{}); err == nil || !strings.HasSuffix(err.Error(), "is not a file") {
		t.Errorf("a directory: %v", err)
	}
	if err := ImportLegacyFile(filepath.Join(w.project, "missing.env"), open, ImportOptions{}); err == nil || !strings.HasPrefix(err.Error(), "import: ") {
		t.Errorf("a missing file: %v", err)
	}
	if opened {
		t.Error("the vault was opened for a file that cannot be imported")
	}
}

// TestVaultSet: the value comes from stdin without its last line ending;
// an ambient variable of the same name is warned about; a bad name is a
// usage error and an empty value stores nothing.
func TestVaultSet(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"v": "v", "v\n": "v", "v\r\n": "v", "v\n\n": "v\n", " v \n": " v "} {
		w := newVaultWorld(t)
		if err := w.env(in).VaultSet("X"); err != nil {
			t.Fatalf("VaultSet with stdin %q: %v", in, err)
		}
		if got, err := w.storedValue("X"); err != nil || got != want {
			t.Errorf("stdin %q stored %q, %v; want %q", in, got, err, want)
		}
	}

	w := newVaultWorld(t)
	e := w.env(vaultCanary + "\n")
	e.Ambient["MY_SERVICE_TOKEN"] = "from-the-environment"
	if err := e.VaultSet("MY_SERVICE_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.storedValue("MY_SERVICE_TOKEN"); got != vaultCanary {
		t.Errorf("stored %q", got)
	}
	wantOut := "stored MY_SERVICE_TOKEN in the vault (envfile: " + filepath.Join(w.dataDir, vault.EnvFileName) + ")\n"
	wantErr := "hush: warning: MY_SERVICE_TOKEN is also set in the environment hush was started with, and that value wins over the vault; unset it in your shell to use the stored one\n"
	if w.out.String() != wantOut || w.errOut.String() != wantErr {
		t.Errorf("stdout %q\nstderr %q", w.out.String(), w.errOut.String())
	}

	w = newVaultWorld(t)
	err := w.env("v").VaultSet("1BAD")
	var usage *UsageError
	if !errors.As(err, &usage) || err.Error() != `secret name "1BAD" cannot be stored: use letters, digits and _, not starting with a digit` {
		t.Errorf("VaultSet(1BAD) = %v, want a usage error", err)
	}
	if _, statErr := os.Stat(filepath.Join(w.dataDir, vault.EnvFileName)); statErr == nil {
		t.Error("a bad name created the vault file")
	}
	err = w.env("\n").VaultSet("EMPTY")
	if err == nil || errors.As(err, &usage) || err.Error() != "no value given; nothing was stored (to remove a secret: hush vault rm EMPTY)" {
		t.Errorf("VaultSet(EMPTY) = %v", err)
	}
}

// TestVaultListAndRm: list shows names and where each comes from, never a
// value; rm removes the name from the backend.
func TestVaultListAndRm(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	if err := w.env(vaultCanary).VaultSet("API_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.project, ".env"), []byte("DOTENV_ONLY=x1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A legacy file in a subdirectory: its values are labelled with it.
	if err := os.MkdirAll(filepath.Join(w.project, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.project, "sub", ".env"), []byte("SUB_ONLY=x2\nDOTENV_ONLY=x3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.out.Reset()
	if err := w.env("").VaultList(); err != nil {
		t.Fatal(err)
	}
	list := w.out.String()
	if !strings.Contains(list, "API_TOKEN") || strings.Contains(list, vaultCanary) {
		t.Errorf("vault list:\n%s", list)
	}
	for name, file := range map[string]string{"DOTENV_ONLY": filepath.Join(w.project, ".env"), "SUB_ONLY": filepath.Join(w.project, "sub", ".env")} {
		line := ""
		for _, l := range strings.Split(list, "\n") {
			if strings.HasPrefix(l, name+" ") {
				line = l
			}
		}
		if want := ".env (" + file + "; move it with"; !strings.Contains(line, want) {
			t.Errorf("vault list labels %s with the wrong file, want %q:\n%s", name, want, list)
		}
	}
	if err := w.env("").VaultRm("SUB_ONLY"); err == nil || !strings.Contains(err.Error(), filepath.Join("sub", ".env")) {
		t.Errorf("rm of a sub/.env value = %v, want it to name sub/.env", err)
	}
	w.out.Reset()
	if err := w.env("").VaultRm("API_TOKEN"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.out.String(), "removed API_TOKEN from the vault") {
		t.Errorf("rm said %q", w.out.String())
	}
	if v, err := w.storedValue("API_TOKEN"); err == nil || v != "" {
		t.Errorf("API_TOKEN is still stored: %q, %v", v, err)
	}
	if err := w.env("").VaultRm("API_TOKEN"); err == nil {
		t.Error("removing a name the vault does not hold succeeded")
	}
}

// TestVaultImport: `hush vault import` stores a legacy file's entries;
// without a terminal it keeps the file unless told otherwise.
func TestVaultImport(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	src := filepath.Join(w.project, ".env.local")
	if err := os.WriteFile(src, []byte("IMPORTED_KEY="+vaultCanary+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.env("").VaultImport(src, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.storedValue("IMPORTED_KEY"); got != vaultCanary {
		t.Errorf("imported %q", got)
	}
	if _, err := os.Stat(src); err != nil {
		t.Errorf("without a terminal or a flag the source is gone: %v", err)
	}
	if err := w.env("").VaultImport(src, ImportOptions{DeleteSource: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(src); err == nil {
		t.Error("--delete-source kept the file")
	}
}

// TestVaultBackendShowAndSwitch: show names the backend in use; a switch
// asks confirm with the count and the current backend, changes nothing
// when refused, and moves every secret and config.toml (and the Env's
// config in memory) when accepted.
func TestVaultBackendShowAndSwitch(t *testing.T) {
	t.Parallel()
	w := newVaultWorld(t)
	if err := w.env("").VaultBackendShow(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.out.String(), "backend: envfile (") || !strings.Contains(w.out.String(), "keyring") {
		t.Errorf("backend show:\n%s", w.out)
	}
	if err := w.env(vaultCanary).VaultSet("SWITCH_TOKEN"); err != nil {
		t.Fatal(err)
	}
	e := w.env("")
	if err := e.vaultBackendSwitch("nosuch", nil); err == nil || !strings.Contains(err.Error(), `unknown vault backend "nosuch"`) {
		t.Errorf("switch to an unknown backend = %v", err)
	}
	w.out.Reset()
	if err := e.vaultBackendSwitch("envfile", nil); err != nil || w.out.String() != "already using the envfile backend\n" {
		t.Errorf("switch to the same backend = %v, %q", err, w.out)
	}
	var asked []string
	refuse := func(n int, from string) (bool, error) {
		asked = append(asked, fmt.Sprint(n, " ", from))
		return false, nil
	}
	if err := e.vaultBackendSwitch("keyring", refuse); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []string{"1 envfile"}) || e.Backend() != "envfile" {
		t.Errorf("asked %q; backend now %s", asked, e.Backend())
	}
	if got, _ := w.storedValue("SWITCH_TOKEN"); got != vaultCanary {
		t.Errorf("a refused switch moved the secret: %q", got)
	}
	noTTY := errors.New("no terminal here")
	if err := e.vaultBackendSwitch("keyring", func(int, string) (bool, error) { return false, noTTY }); !errors.Is(err, noTTY) {
		t.Errorf("the confirm error is lost: %v", err)
	}

	requireKeyring(t, w)
	if err := e.vaultBackendSwitch("keyring", func(int, string) (bool, error) { return true, nil }); err != nil {
		t.Fatal(err)
	}
	if e.Backend() != "keyring" || e.Config().Vault.Backend != "keyring" {
		t.Errorf("in memory the backend is %q", e.Backend())
	}
	if got, _ := os.ReadFile(filepath.Join(w.configDir, config.FileName)); !strings.Contains(string(got), `backend = "keyring"`) {
		t.Errorf("config.toml =\n%s", got)
	}
	if got, _ := w.storedValue("SWITCH_TOKEN"); got != "" {
		t.Errorf("the secret stayed in vault.env: %q", got)
	}
	if v, err := w.env("").VaultCommands(); err != nil || v.Backend != "keyring" {
		t.Errorf("a new Env opens backend %q, %v", v.Backend, err)
	} else if got, err := v.Layered.Get("SWITCH_TOKEN"); err != nil || got != vaultCanary {
		t.Errorf("the keyring holds %q, %v", got, err)
	}
}

// TestVaultBackendSwitchNeedsATerminal: without a controlling terminal,
// moving secrets is refused and nothing moves.
func TestVaultBackendSwitchNeedsATerminal(t *testing.T) {
	t.Parallel()
	if tty, err := wizard.ControllingTerminal(); err == nil {
		tty.Close()
		t.Skip("this test process has a controlling terminal")
	}
	w := newVaultWorld(t)
	if err := w.env(vaultCanary).VaultSet("SWITCH_TOKEN"); err != nil {
		t.Fatal(err)
	}
	err := w.env("").VaultBackendSwitch("keyring", true)
	if err == nil || !strings.HasPrefix(err.Error(), "moving 1 secret(s) to another backend needs you at a terminal") {
		t.Errorf("switch without a terminal = %v", err)
	}
	if got, _ := w.storedValue("SWITCH_TOKEN"); got != vaultCanary {
		t.Errorf("the secret moved: %q", got)
	}
}

// TestVaultRevealWithoutATerminal: the refusal is recorded in the data
// dir's audit log; with a config.toml that cannot be read it is still
// refused.
func TestVaultRevealWithoutATerminal(t *testing.T) {
	t.Parallel()
	if tty, err := wizard.ControllingTerminal(); err == nil {
		tty.Close()
		t.Skip("this test process has a controlling terminal")
	}
	w := newVaultWorld(t)
	if err := w.env("").VaultReveal("API_TOKEN"); !errors.Is(err, ErrRevealNeedsTerminal) {
		t.Errorf("reveal = %v", err)
	}
	log, err := os.ReadFile(filepath.Join(w.dataDir, auditlog.FileName))
	if err != nil || !strings.Contains(string(log), "vault.read:API_TOKEN") {
		t.Errorf("the refusal is not in the audit log (%v):\n%s", err, log)
	}
	if err := os.Mkdir(filepath.Join(w.configDir, config.FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := w.env("").VaultReveal("API_TOKEN"); !errors.Is(err, ErrRevealNeedsTerminal) {
		t.Errorf("reveal with a broken config = %v", err)
	}
}
