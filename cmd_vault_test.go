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

func envfileWith(t *testing.T, kv map[string]string) *vault.EnvFile {
	t.Helper()
	e := vault.NewEnvFile(filepath.Join(t.TempDir(), vault.EnvFileName))
	for k, v := range kv {
		if err := e.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// TestMoveSecretsLosesNothing: whichever step fails, every secret is still
// readable from the backend that config.toml names afterwards.
func TestMoveSecretsLosesNothing(t *testing.T) {
	t.Parallel()
	preexisting := map[string]string{"OTHER": "kept in the target", "E": "007"}
	tests := []struct {
		name        string
		setsLeft    int
		corrupt     string
		commitErr   error
		deleteFails bool
		wantErr     string
		switched    bool
	}{
		{name: "first copy fails", setsLeft: 0,
			wantErr: "copy A_TOKEN: injected: the backend is full; nothing was switched: the old backend is unchanged and the copies were removed"},
		{name: "fails half-way", setsLeft: 2,
			wantErr: "copy C_PASS: injected: the backend is full; nothing was switched: the old backend is unchanged and the copies were removed"},
		{name: "a value does not read back", setsLeft: 100, corrupt: "B_KEY",
			wantErr: "secret B_KEY did not read back unchanged from the new backend; nothing was switched: the old backend is unchanged and the copies were removed"},
		{name: "the config switch fails", setsLeft: 100, commitErr: errors.New("disk full"),
			wantErr: "switch the config: disk full; nothing was switched: the old backend is unchanged and the copies were removed"},
		{name: "deleting from the old backend fails", setsLeft: 100, deleteFails: true, switched: true},
		{name: "all well", setsLeft: 100, switched: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fromFile := envfileWith(t, moveSecretsValues)
			from := &flaky{Vault: fromFile, setsLeft: -1, deletes: tt.deleteFails}
			toFile := envfileWith(t, preexisting)
			to := &flaky{Vault: toFile, setsLeft: tt.setsLeft, corrupt: tt.corrupt}
			commits := 0
			rep, err := moveSecrets(from, to, nil, func() error { commits++; return tt.commitErr })
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v\nwant %s", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), canaryValue) {
					t.Errorf("the error shows a value: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			src, _ := fromFile.All()
			dst, _ := toFile.All()
			if !tt.switched {
				if !maps.Equal(src, moveSecretsValues) {
					t.Errorf("the old backend changed: %q", src)
				}
				if !maps.Equal(dst, preexisting) {
					t.Errorf("the new backend was not restored: %q", dst)
				}
				return
			}
			if commits != 1 {
				t.Errorf("commit ran %d times", commits)
			}
			want := maps.Clone(preexisting)
			maps.Copy(want, moveSecretsValues)
			if !maps.Equal(dst, want) {
				t.Errorf("the new backend holds %q\nwant %q", dst, want)
			}
			if !slices.Equal(rep.moved, slices.Sorted(maps.Keys(moveSecretsValues))) {
				t.Errorf("moved = %q", rep.moved)
			}
			if tt.deleteFails {
				if !maps.Equal(src, moveSecretsValues) || !slices.Equal(rep.leftBehind, rep.moved) {
					t.Errorf("left behind %q, old backend %q", rep.leftBehind, src)
				}
				var w bytes.Buffer
				rep.warn(&w, "envfile")
				if want := "hush: warning: could not delete A_TOKEN, B_KEY, C_PASS, D_URL, E from the envfile backend (injected: delete failed); they are safe in the new one — delete them there by hand\n"; w.String() != want {
					t.Errorf("warning = %q", w.String())
				}
			} else if len(src) != 0 {
				t.Errorf("the old backend still holds %q", slices.Sorted(maps.Keys(src)))
			}
		})
	}
}

func TestMoveSecretsRefusesConflicts(t *testing.T) {
	t.Parallel()
	from := envfileWith(t, map[string]string{"A": "one", "B": "same"})
	to := envfileWith(t, map[string]string{"A": "two", "B": "same"})
	_, err := moveSecrets(from, to, nil, func() error { t.Error("commit ran"); return nil })
	if want := "both backends hold A with different values; nothing was moved (remove one of the two copies first)"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	// extra (a key typed in setup) may replace a target's value, and is
	// restored when the move fails.
	failing := &flaky{Vault: to, setsLeft: -1, failOn: "C"}
	_, err = moveSecrets(envfileWith(t, map[string]string{"B": "same", "C": "c"}), failing, map[string]string{"A": "new"}, func() error { return nil })
	if err == nil {
		t.Fatal("the move did not fail")
	}
	if got, _ := to.All(); !maps.Equal(got, map[string]string{"A": "two", "B": "same"}) {
		t.Errorf("target after a failed move = %q", got)
	}
}

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
	if len(rep.moved) != len(moveSecretsValues) || len(rep.leftBehind) != 0 {
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

func TestImportSecrets(t *testing.T) {
	t.Parallel()
	e := envfileWith(t, map[string]string{"SAME": "s", "DIFF": "vault value"})
	entries := map[string]string{
		"GOOD": "g-" + canaryValue, "SAME": "s", "DIFF": "file value " + canaryValue,
		"BAD-NAME": canaryValue, "UNSTORABLE": canaryValue + "\n" + canaryValue + `\`,
	}
	rep := importSecrets(e, entries, false)
	if !slices.Equal(rep.imported, []string{"GOOD"}) || !slices.Equal(rep.already, []string{"SAME"}) {
		t.Errorf("imported %q, already %q", rep.imported, rep.already)
	}
	wantRefused := map[string]string{
		"BAD-NAME":   `secret name "BAD-NAME" cannot be stored: use letters, digits and _, not starting with a digit`,
		"UNSTORABLE": "secret UNSTORABLE: the value cannot be stored in vault.env (it would not read back unchanged)",
	}
	if !maps.Equal(rep.refused, wantRefused) {
		t.Errorf("refused = %q\nwant %q", rep.refused, wantRefused)
	}
	if want := map[string]string{"DIFF": "the vault already holds another value (kept; --overwrite replaces it)"}; !maps.Equal(rep.kept, want) {
		t.Errorf("kept = %q", rep.kept)
	}
	if rep.safe() {
		t.Error("a partial import reports safe")
	}
	if got, _ := e.Get("DIFF"); got != "vault value" {
		t.Errorf("DIFF was overwritten without --overwrite")
	}
	rep = importSecrets(e, map[string]string{"DIFF": "file value"}, true)
	if got, _ := e.Get("DIFF"); got != "file value" || !rep.safe() {
		t.Errorf("--overwrite: DIFF = %q, report %+v", got, rep)
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
