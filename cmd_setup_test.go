package main

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/wizard"
)

const setupKey = "sk-live-setupCANARY0042"

// keyServer is a model server's model list: 200 for the right key.
type keyServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
}

func newKeyServer(t *testing.T) *keyServer {
	k := &keyServer{}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.auth = append(k.auth, r.Header.Get("Authorization"))
		k.mu.Unlock()
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer "+setupKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"data":[]}`))
	}))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *keyServer) Auth() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.auth)
}

// filesHolding lists the files under root that contain s.
func filesHolding(t *testing.T, root, s string) []string {
	t.Helper()
	var hits []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), s) {
				hits = append(hits, strings.TrimPrefix(p, root+"/"))
			}
		}
		return nil
	})
	return hits
}

// TestSetupKeepsTheKeyInTheVaultOnly: setup writes nothing to the process
// environment; the key lands in the chosen backend and nowhere else;
// config.toml gets the reference; the running session gets the answers in
// memory.
func TestSetupKeepsTheKeyInTheVaultOnly(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"envfile", "keyring"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			srv := newKeyServer(t)
			choice := map[string]string{"envfile": "1", "keyring": "2"}[backend]
			ta := newTestApp(t, "1\n4\n"+srv.srv.URL+"/v1\n"+setupKey+"\nfake-model\n"+choice+"\n")
			if backend == "keyring" {
				requireKeyring(t, ta)
			}
			before := os.Environ()
			if err := runSetup(setupOpts(ta.app, context.Background(), false)); err != nil {
				t.Fatalf("%v\n%s%s", err, ta.out, ta.errOut)
			}
			if after := os.Environ(); !slices.Equal(before, after) {
				t.Errorf("setup changed the process environment")
			}
			if strings.Contains(ta.out.String()+ta.errOut.String(), setupKey) {
				t.Errorf("setup printed the key")
			}
			if got := srv.Auth(); !slices.Equal(got, []string{"Bearer " + setupKey}) {
				t.Errorf("the key check sent %q", got)
			}
			cfg, err := config.Load(filepath.Join(ta.configDir, config.FileName))
			if err != nil {
				t.Fatal(err)
			}
			want := config.Model{Provider: "openai", BaseURL: srv.srv.URL + "/v1", Name: "fake-model", APIKey: "${OPENAI_API_KEY}"}
			if cfg.Model != want || cfg.Vault.Backend != backend {
				t.Errorf("config.toml: %+v, backend %q", cfg.Model, cfg.Vault.Backend)
			}
			// The carry-across: this session already runs with the answers.
			if ta.Config().Model != want || ta.Backend() != backend {
				t.Errorf("in memory: %+v, backend %q", ta.Config().Model, ta.Backend())
			}
			if v, err := ta.Proxy().Get("OPENAI_API_KEY"); err != nil || v != setupKey {
				t.Errorf("the vault (%s) holds %q, %v", backend, v, err)
			}
			hits := filesHolding(t, ta.root, setupKey)
			wantHits := map[string][]string{"envfile": {"data/" + vault.EnvFileName}, "keyring": nil}[backend]
			if !slices.Equal(hits, wantHits) {
				t.Errorf("files holding the key: %q, want %q", hits, wantHits)
			}
			if !strings.Contains(ta.out.String(), "✓ the key works: "+srv.srv.URL+"/v1/models answered\n") {
				t.Errorf("no key check in the output:\n%s", ta.out)
			}
		})
	}
}

// TestSetupRerunChangesOneAnswer: a second run with empty answers except
// the model keeps provider, URL, backend and key.
func TestSetupRerunChangesOneAnswer(t *testing.T) {
	t.Parallel()
	srv := newKeyServer(t)
	first := newTestApp(t, "1\n4\n"+srv.srv.URL+"/v1\n"+setupKey+"\nfake-model\n1\n")
	if err := runSetup(setupOpts(first.app, context.Background(), false)); err != nil {
		t.Fatalf("%v\n%s", err, first.out)
	}
	cfgPath := filepath.Join(first.configDir, config.FileName)
	// A setting of the user's own, which setup must not touch.
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("\n# my own\n[turn]\nmax_steps = 7\n")
	f.Close()

	second := &app{Ambient: first.Ambient, Stdin: strings.NewReader("\n\n\nother-model\n\n"), Stdout: first.out, Stderr: first.errOut, WorkDir: first.WorkDir}
	if err := runSetup(setupOpts(second, context.Background(), false)); err != nil {
		t.Fatalf("%v\n%s", err, first.out)
	}
	got, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	want := `[model]
provider = "openai"
base_url = "` + srv.srv.URL + `/v1"
model = "other-model"
api_key = "${OPENAI_API_KEY}"

[vault]
backend = "envfile"

# my own
[turn]
max_steps = 7
`
	if string(got) != want {
		t.Errorf("config.toml =\n%s\nwant\n%s", got, want)
	}
	if v, _ := vault.NewEnvFile(filepath.Join(first.dir, vault.EnvFileName)).Get("OPENAI_API_KEY"); v != setupKey {
		t.Errorf("the stored key changed")
	}
	// The second run sends the stored key to the server only when a person
	// runs it at a terminal; this test process may or may not have one.
	if tty, err := wizard.ControllingTerminal(); err == nil {
		tty.Close()
		if a := srv.Auth(); len(a) != 2 || a[1] != "Bearer "+setupKey {
			t.Errorf("key checks sent %q", a)
		}
	} else {
		if a := srv.Auth(); len(a) != 1 {
			t.Errorf("without a terminal the stored key was sent: %d requests", len(a))
		}
		if !strings.Contains(first.out.String(), "– the stored key was not checked: hush sends a stored key to a server only when you run setup at a terminal\n") {
			t.Errorf("no note about the unchecked key:\n%s", first.out)
		}
	}
}

// TestSetupUnreachableURL: a clear message, and declining to save changes
// nothing at all.
func TestSetupUnreachableURL(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ta := newTestApp(t, "1\n4\nhttp://"+addr+"/v1\n"+setupKey+"\nm\n1\nn\n")
	err = runSetup(setupOpts(ta.app, context.Background(), false))
	var ee *exitError
	if !errors.As(err, &ee) || err.Error() != "nothing was saved; run `hush setup` again to change an answer" {
		t.Fatalf("error = %v", err)
	}
	if !strings.Contains(ta.out.String(), "✗ cannot reach http://"+addr+"/v1/models: connection refused\n") {
		t.Errorf("no clear message:\n%s", ta.out)
	}
	if hits := filesHolding(t, ta.root, setupKey); len(hits) != 0 {
		t.Errorf("the key was stored although nothing was saved: %q", hits)
	}
	if _, err := os.Stat(filepath.Join(ta.configDir, config.FileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("config.toml was written: %v", err)
	}
	if ta.Config().Model.Provider != "" {
		t.Errorf("the session's config changed: %+v", ta.Config().Model)
	}
}

// TestSetupCmdOptions: hush setup's flags and $ACCESSIBLE reach runF's
// options; without a terminal TTY is nil.
func TestSetupCmdOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args       []string
		ambient    string
		accessible bool
	}{
		{[]string{"setup"}, "", false},
		{[]string{"setup", "--accessible"}, "", true},
		{[]string{"setup"}, "1", true},
	} {
		ta := newTestApp(t, "")
		if c.ambient != "" {
			ta.Ambient["ACCESSIBLE"] = c.ambient
		}
		var got *setupOptions
		cmd := newSetupCmd(ta.app, func(o *setupOptions) error { got = o; return nil })
		if err := runCommand(ta.app, cmd, c.args...); err != nil || got == nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if got.Accessible != c.accessible || got.TTY != nil || got.Context == nil || got.In != ta.Stdin {
			t.Errorf("%q with ACCESSIBLE=%q: %+v", c.args, c.ambient, got)
		}
	}
	ta := newTestApp(t, "")
	if err := runCommand(ta.app, newSetupCmd(ta.app, func(*setupOptions) error { return nil }), "setup", "x"); asExit(err).code != exitUsage {
		t.Errorf("a stray argument: %v", err)
	}
}
