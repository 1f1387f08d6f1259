package wizard

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/vault/keyring"
)

func TestCurrentAnswers(t *testing.T) {
	t.Parallel()
	var cfg config.Config
	cfg.Model = config.Model{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Name: "m", APIKey: "${MY_KEY}"}
	if got := CurrentAnswers(cfg, "envfile"); got != (Answers{Provider: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m", KeyName: "MY_KEY", Backend: "envfile"}) {
		t.Errorf("CurrentAnswers = %+v", got)
	}
	cfg.Model.APIKey = "prefix-${MY_KEY}"
	if got := CurrentAnswers(cfg, "envfile"); got.KeyName != "" {
		t.Errorf("a reference that is not exactly ${NAME} named the key: %+v", got)
	}
	cfg.Model.Provider = "replay"
	if got := CurrentAnswers(cfg, "keyring"); got != (Answers{Backend: "keyring"}) {
		t.Errorf("replay is not a default: %+v", got)
	}
}

// TestSetupRunSavesNothingWhenTheCheckFails: an unreachable server, and
// "n" to saving anyway: no key in any file, no config.toml, and the
// running config unchanged.
func TestSetupRunSavesNothingWhenTheCheckFails(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	const key = "sk-setuprun-canary-0123456789abcdef"
	root := t.TempDir()
	ef := vault.NewEnvFile(filepath.Join(root, vault.EnvFileName))
	proxy := vault.NewProxy(ef)
	var cfg config.Config
	var out bytes.Buffer
	s := SetupRun{In: strings.NewReader("1\n4\nhttp://" + addr + "/v1\n" + key + "\nm\n1\nn\n"), Out: &out, Err: &out,
		Config: &cfg, Backend: "envfile", ConfigPath: filepath.Join(root, config.FileName), DataDir: root,
		Registry: vault.NewRegistry(), Proxy: proxy, Vault: &vault.Layered{Backend: proxy}, HTTP: http.DefaultClient}
	err = s.Run(context.Background())
	if err == nil || err.Error() != "nothing was saved; run `hush setup` again to change an answer" {
		t.Fatalf("Run = %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "cannot reach http://"+addr+"/v1/models") {
		t.Errorf("no clear message:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(root, config.FileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("config.toml was written: %v", err)
	}
	if b, _ := os.ReadFile(ef.Path()); bytes.Contains(b, []byte(key)) || cfg.Model.Provider != "" {
		t.Errorf("something was saved: vault %q, config %+v", b, cfg.Model)
	}
}

// A backend setup cannot open is named in one sentence: the registry's
// "open vault backend" and the keyring's "no OS keyring service" wrappers
// are not repeated around the reason.
func TestUnavailableIsOneSentence(t *testing.T) {
	t.Parallel()
	err := &vault.OpenError{Backend: "keyring", Err: &keyring.UnavailableError{Reason: "no D-Bus session bus; otherwise use the envfile backend", NamesEnvfile: true}}
	if !errors.Is(err, keyring.ErrUnavailable) || err.Error() != `open vault backend keyring: no OS keyring service is available: no D-Bus session bus; otherwise use the envfile backend ([vault] backend = "envfile")` {
		t.Errorf("the error reads %q", err)
	}
	want := "The keyring backend is not available here: no D-Bus session bus; otherwise use the envfile backend."
	if got := unavailable("keyring", err); got != want {
		t.Errorf("unavailable = %q, want %q", got, want)
	}
	if got := unavailable("vaultx", &vault.OpenError{Backend: "vaultx", Err: errors.New("it broke.")}); got != "The vaultx backend is not available here: it broke." {
		t.Errorf("unavailable = %q", got)
	}
}
