package vault_test

import (
	"io"
	"strings"
	"testing"

	"github.com/hushcli/hush/vault"
	"github.com/hushcli/hush/vault/echotest"
)

// TestReadValueHidesTypingBeforeItAsks: at a terminal the echo is off
// when the prompt is written, not only once the read behind it starts, so
// a value typed the moment the prompt shows is not echoed (`hush vault
// set` printed the prompt first: TestVaultSetHiddenPrompt saw its typed
// canary on the terminal under load). Afterwards the echo is back on.
func TestReadValueHidesTypingBeforeItAsks(t *testing.T) {
	t.Parallel()
	term := echotest.Open(t)
	const value = "typed-at-once-0123456789"
	echoAtPrompt := true
	prompt := echotest.WriterFunc(func(p []byte) (int, error) {
		if strings.Contains(string(p), "typing is not shown") {
			echoAtPrompt = term.Echo()
			term.Type(value + "\r") // the moment the prompt shows
		}
		return io.Discard.Write(p)
	})
	got, err := vault.ReadValue(term.PTS, prompt, "TYPED_TOKEN")
	if err != nil || got != value {
		t.Fatalf("ReadValue = %q, %v; want the typed value", got, err)
	}
	if echoAtPrompt {
		t.Error("the echo was still on when the prompt was written")
	}
	if !term.Echo() {
		t.Error("the echo is not back on after the value was read")
	}
	shown := term.ShownAfter("end-of-test")
	if !strings.Contains(shown, "end-of-test") {
		t.Errorf("positive control: what was typed with the echo on was not echoed: %q", shown)
	}
	if strings.Contains(shown, value) {
		t.Errorf("the terminal echoed the value: %q", shown)
	}
}
