package wizard_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hushcli/hush/vault/echotest"
	"github.com/hushcli/hush/wizard"
)

// TestSetupKeyPromptHidesTypingBeforeItAsks: line by line at a terminal,
// the echo is off when the API key's prompt is printed, so a key typed or
// pasted the moment it shows is not echoed (huh prints the prompt, then
// reads with the echo off: TestSetupMovesSecretsInATerminal could see the
// key on the terminal). The other answers are echoed as typed.
func TestSetupKeyPromptHidesTypingBeforeItAsks(t *testing.T) {
	t.Parallel()
	term := echotest.Open(t)
	// The provider and the URL are typed ahead; the key when its prompt
	// shows, then the model and the backend.
	term.Type("1\n1\n")
	var out bytes.Buffer
	echoAtPrompt, asked := true, false
	s := &wizard.Setup{In: term.PTS, Accessible: true, Terminal: true, Backends: backends,
		Out: echotest.WriterFunc(func(p []byte) (int, error) {
			out.Write(p)
			if !asked && strings.Contains(out.String(), "(3/5) API key") {
				asked, echoAtPrompt = true, term.Echo()
				term.Type(key + "\n\n1\n")
			}
			return len(p), nil
		})}
	got, err := s.Run(context.Background())
	if err != nil || got.Key != key {
		t.Fatalf("Run = %+v, %v; want the typed key\n%s", got, err, out.String())
	}
	if echoAtPrompt {
		t.Error("the echo was still on when the key's prompt was printed")
	}
	if !term.Echo() {
		t.Error("the echo is not back on after setup")
	}
	shown := term.ShownAfter("end-of-test")
	if strings.Contains(shown, key) {
		t.Errorf("the terminal echoed the key: %q", shown)
	}
	if !strings.Contains(shown, "1\r\n1\r\n") || !strings.Contains(shown, "end-of-test") {
		t.Errorf("positive control: what was typed with the echo on was not echoed: %q", shown)
	}
}
