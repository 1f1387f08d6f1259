package bash_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/toolset/bash"
)

func canary(label string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "canary-" + label + "-" + hex.EncodeToString(b)
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// fixture is one session's view for the bash tool: a vault of canaries, an
// ambient environment holding some of them under credential and innocuous
// names, and a gate that allows GRANTED and CONFIGURED only.
type fixture struct {
	t       *testing.T
	dir     string
	secrets map[string]string
	ambient map[string]string
	policy  tools.Policy
	mu      sync.Mutex
	asked   []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir()}
	f.secrets = map[string]string{
		"VAULT_CANARY": canary("vault"),
		"GRANTED":      canary("granted"),
		"CONFIGURED":   canary("configured"),
	}
	f.ambient = map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": f.dir, "LANG": "C.UTF-8",
		"OPENAI_API_KEY":   canary("envcred"),
		"INNOCENT_SETTING": f.secrets["VAULT_CANARY"],
		// An ambient value under a configured secret's name: seed 002's
		// leak was that it survived an explicitly empty scope.
		"CONFIGURED": canary("ambient-configured"),
	}
	return f
}

// Get is the gated vault: GRANTED and CONFIGURED are allowed, every other
// name denied; each read is recorded.
func (f *fixture) Get(name string) (string, error) {
	f.mu.Lock()
	f.asked = append(f.asked, name)
	f.mu.Unlock()
	if name != "GRANTED" && name != "CONFIGURED" {
		return "", fmt.Errorf("%w: vault.read:%s for bash is denied", executor.ErrDenied, name)
	}
	return f.secrets[name], nil
}

// call runs the tool once the way the executor does, output through a
// redactor of every vault value, and returns what the model would see.
// args is what the model sent (a map, so "secrets": [] stays in it).
func (f *fixture) call(args any) (string, executor.Result, error) {
	f.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		f.t.Fatal(err)
	}
	var secrets []redact.Secret
	for n, v := range f.secrets {
		secrets = append(secrets, redact.Secret{Name: n, Value: v})
	}
	sort.Slice(secrets, func(i, j int) bool { return secrets[i].Name < secrets[j].Name })
	var buf bytes.Buffer
	w := redact.New(secrets).Writer(&buf)
	tc := &executor.ToolContext{Subject: bash.Name, Dir: f.dir, Ambient: tools.NewAmbient(f.ambient), Vault: f,
		Secrets: tools.NewSecretSet(f.secrets), Policy: f.policy, Output: w}
	res, err := bash.Tool{}.Run(context.Background(), tc, raw)
	_ = w.Close()
	return buf.String(), res, err
}

func (f *fixture) reads() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.asked, ",")
}

// TestEnvironmentLeaksNothingInRawBytes reads the child's environment and
// its parent's in forms the redactor does not know (reversed, hex), so a
// leak shows even though the output is scrubbed; the granted secret, read
// the same way, is the positive control.
func TestEnvironmentLeaksNothingInRawBytes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.policy.Include = []string{"INNOCENT_SETTING", "OPENAI_API_KEY"} // allowlisted, still dropped
	script := `env | rev; echo ---; xxd -p /proc/$PPID/environ | tr -d '\n'; echo; echo ---; printf %s "$POS" | rev; echo`
	out, res, err := f.call(map[string]any{"script": script, "env": map[string]string{"POS": "${GRANTED}"}, "secrets": []string{}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v\n%s", err, res, out)
	}
	for name, v := range map[string]string{"VAULT_CANARY": f.secrets["VAULT_CANARY"], "CONFIGURED": f.secrets["CONFIGURED"],
		"ambient CONFIGURED": f.ambient["CONFIGURED"], "OPENAI_API_KEY": f.ambient["OPENAI_API_KEY"]} {
		if strings.Contains(out, reverse(v)) || strings.Contains(out, hex.EncodeToString([]byte(v))) || strings.Contains(out, v) {
			t.Errorf("the child read %s's value", name)
		}
	}
	for _, n := range []string{"OPENAI_API_KEY", "INNOCENT_SETTING", "CONFIGURED", "VAULT_CANARY"} {
		if strings.Contains(out, reverse(n+"=")) {
			t.Errorf("the child's environment holds %s", n)
		}
	}
	// Positive control: the channel reads raw bytes, and the grant arrives.
	if !strings.Contains(out, reverse(f.secrets["GRANTED"])) || !strings.Contains(out, reverse("POS=")) {
		t.Errorf("positive control: the granted secret did not arrive (reversed) in the child:\n%s", out)
	}
	if !strings.Contains(out, reverse("LANG=C.UTF-8")) {
		t.Errorf("positive control: the allowlisted LANG did not arrive:\n%s", out)
	}
	if got := f.reads(); got != "GRANTED" {
		t.Errorf("vault reads = %q, want GRANTED", got)
	}
}

// TestScopeNilVersusEmpty: with no declared scope the configured secrets
// arrive (through the gate); an explicitly empty scope grants none of them
// and lets no ambient value of that name through; a list grants exactly its
// names. The values are checked reversed, past the redactor.
func TestScopeNilVersusEmpty(t *testing.T) {
	t.Parallel()
	script := `printf 'configured=%s granted=%s\n' "$(printf %s "${CONFIGURED-unset}" | rev)" "$(printf %s "${GRANTED-unset}" | rev)"`
	for _, tc := range []struct {
		name       string
		scope      []string
		configured string // "vault", "unset"
		granted    string
		reads      string
	}{
		{"nil scope: the configured secrets", nil, "vault", "unset", "CONFIGURED"},
		{"empty scope: none, not even the configured", []string{}, "unset", "unset", ""},
		{"a list: exactly its names", []string{"GRANTED"}, "unset", "vault", "GRANTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.policy.Secrets = []string{"CONFIGURED"}
			f.policy.Include = []string{"CONFIGURED"} // the ambient value is offered too; it must never win
			args := map[string]any{"script": script}
			if tc.scope != nil {
				args["secrets"] = tc.scope
			}
			out, res, err := f.call(args)
			if err != nil || res.IsError {
				t.Fatalf("%v %+v\n%s", err, res, out)
			}
			want := func(name, how string) string {
				if how == "unset" {
					return reverse("unset")
				}
				return reverse(f.secrets[name])
			}
			line := fmt.Sprintf("configured=%s granted=%s\n", want("CONFIGURED", tc.configured), want("GRANTED", tc.granted))
			if out != line {
				t.Errorf("the child saw %q, want %q", out, line)
			}
			if strings.Contains(out, reverse(f.ambient["CONFIGURED"])) {
				t.Error("the ambient value of a configured secret's name reached the child")
			}
			if got := f.reads(); got != tc.reads {
				t.Errorf("vault reads = %q, want %q", got, tc.reads)
			}
		})
	}
}

// TestSecretInArgvIsRefused: a script holding a vault value is refused
// before anything starts (the script is bash's argv), and the error names
// no value; the same script without the value runs (the control).
func TestSecretInArgvIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	marker := filepath.Join(f.dir, "ran")
	out, _, err := f.call(map[string]any{"script": "touch " + marker + "; echo " + f.secrets["VAULT_CANARY"]})
	if !errors.Is(err, tools.ErrSecretInArgv) {
		t.Fatalf("err = %v, want ErrSecretInArgv (output %q)", err, out)
	}
	if strings.Contains(err.Error(), f.secrets["VAULT_CANARY"]) {
		t.Error("the refusal holds the secret's value")
	}
	if _, serr := os.Stat(marker); serr == nil {
		t.Fatal("the script ran although its command line held a secret")
	}
	if _, res, err := f.call(map[string]any{"script": "touch " + marker + "; echo not-a-secret"}); err != nil || res.IsError {
		t.Fatalf("control: %v %+v", err, res)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: the same script without the value did not run: %v", err)
	}
}

// TestDeniedSecretRunsNothing: a call whose secret the gate denies fails
// with the denial and starts no process.
func TestDeniedSecretRunsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	marker := filepath.Join(f.dir, "ran")
	_, _, err := f.call(map[string]any{"script": "touch " + marker, "env": map[string]string{"X": "${VAULT_CANARY}"}})
	if !errors.Is(err, executor.ErrDenied) {
		t.Fatalf("err = %v, want a denial", err)
	}
	if _, serr := os.Stat(marker); serr == nil {
		t.Fatal("the script ran although its secret was denied")
	}
	if got := f.reads(); got != "VAULT_CANARY" {
		t.Errorf("vault reads = %q, want VAULT_CANARY", got)
	}
}
