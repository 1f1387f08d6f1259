package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

const canaryValue = "zq9MOVEcanary"

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
