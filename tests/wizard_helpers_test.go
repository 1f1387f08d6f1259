package tests

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/vault/keyring"
	"github.com/hushcli/hush/vault/keyring/keyringtest"
	gokeyring "github.com/zalando/go-keyring"
)

// setEnv replaces (or adds) a variable of the world's environment.
func (w *world) setEnv(name, value string) {
	w.unsetEnv(name)
	w.env = append(w.env, name+"="+value)
}

func (w *world) unsetEnv(name string) {
	out := w.env[:0]
	for _, kv := range w.env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	w.env = out
}

// useKeyring points the world's hush at the real Secret Service, under a
// keyring service of its own, and returns a backend on it for checks. It
// skips the test when no Secret Service answers a round trip.
func useKeyring(t *testing.T, w *world) *keyring.Backend {
	t.Helper()
	addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS")
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	service := "hush-e2e-" + hex.EncodeToString(b)
	kb, err := keyring.Open(keyring.Options{Service: service, Env: map[string]string{"DBUS_SESSION_BUS_ADDRESS": addr}, DataDir: t.TempDir()})
	if err != nil {
		t.Skipf("needs secret-service: no Secret Service to test against (the suite runs it through scripts/with-secret-service): %v", err)
	}
	t.Cleanup(func() {
		_ = gokeyring.DeleteAll(service)
		_ = kb.Close()
	})
	keyringtest.RequireRoundTrip(t, kb)
	w.setEnv("DBUS_SESSION_BUS_ADDRESS", addr)
	w.setEnv(keyring.ServiceEnv, service)
	return kb
}

// filesHolding lists the files under the world's root (home, dirs,
// project) whose bytes contain s.
func (w *world) filesHolding(s string) []string {
	root := filepath.Dir(w.home)
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

// scanProcesses reports every process whose command line or (readable)
// environment holds s.
func scanProcesses(s string) []string {
	var hits []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join(d, f)); err == nil && strings.Contains(string(b), s) {
				hits = append(hits, filepath.Join(d, f))
			}
		}
	}
	return hits
}

// hushEnv is the env a bash tool call needs to run the hush binary
// against the world's dirs, the way a model could (paths, no secrets).
func (w *world) hushEnv() map[string]string {
	return map[string]string{"HUSH": hushBin, "HUSH_CONFIG_DIR": w.configDir, "HUSH_DATA_DIR": w.dataDir}
}

// Auth is the Authorization header of every chat request, in order.
func (f *fakeModel) Auth() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auth...)
}
