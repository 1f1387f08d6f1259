// Package keyringtest is for tests that use the real Secret Service.
package keyringtest

import (
	"testing"

	"github.com/hushcli/hush/vault/keyring"
)

// RequireRoundTrip skips the test unless kb stores, returns and deletes an
// item: a Secret Service that answers the bus but cannot keep items (no
// unlocked collection) is as good as none. Other failures are the test's.
func RequireRoundTrip(t testing.TB, kb *keyring.Backend) {
	t.Helper()
	if err := kb.Set("HUSH_PROBE", "probe"); err != nil {
		t.Skipf("needs secret-service: the Secret Service does not store items (run through scripts/with-secret-service): %v", err)
	}
	if v, err := kb.Get("HUSH_PROBE"); err != nil || v != "probe" {
		t.Skipf("needs secret-service: the Secret Service does not return what it stored: %q, %v", v, err)
	}
	if err := kb.Delete("HUSH_PROBE"); err != nil {
		t.Fatalf("delete the probe item: %v", err)
	}
}
