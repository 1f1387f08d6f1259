package wizard_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/vault/echotest"
	"github.com/hushcli/hush/wizard"
)

// TestApprovalTakesTheKeysBeforeItAsks: when a permission prompt's
// question is on the screen, the terminal is out of line mode, so an Enter
// typed the moment it shows answers it (the default, allow once). The
// question was printed before the form put the terminal in raw mode: the
// Enter typed then became a line feed (ICRNL), which the form ignored, and
// the prompt waited (TestChatTurnWithBackgroundAndMCPLeaksNothing timed
// out so on a loaded machine).
func TestApprovalTakesTheKeysBeforeItAsks(t *testing.T) {
	t.Parallel()
	term := echotest.Open(t)
	var (
		mu                    sync.Mutex
		out                   bytes.Buffer
		asked, echoAtQuestion bool
	)
	p := &wizard.Prompter{In: term.PTS, NoColor: true, Out: echotest.WriterFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		out.Write(b)
		if !asked && strings.Contains(out.String(), "wants the secret GRANTED") {
			asked, echoAtQuestion = true, term.Echo()
			term.Type("\r")
		}
		return len(b), nil
	})}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ans, err := p.Confirm(ctx, executor.Request{GateID: executor.GateVaultRead + "GRANTED", Subject: "mcp:everything"})
	if echoAtQuestion {
		t.Error("the terminal was in line mode (echo on) when the question was printed")
	}
	if err != nil || ans.Choice != executor.ChoiceAllowOnce {
		t.Errorf("Confirm = %+v, %v; want allow once from the Enter typed as the question showed", ans, err)
	}
	// The terminal is given back as it was.
	if !term.Echo() {
		t.Error("the echo is not back on after the prompt")
	}
	if shown := term.ShownAfter("end-of-test"); !strings.Contains(shown, "end-of-test") {
		t.Errorf("positive control: a line typed after the prompt was not echoed: %q", shown)
	}
}
