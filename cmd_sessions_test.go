package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hushcli/hush/config"
)

// TestSessionsList: with no session it says so; a config.toml it cannot
// read is an error; --here reaches runF.
func TestSessionsList(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	if err := runSessionsList(sessionsListOpts(ta.app, true)); err != nil {
		t.Fatal(err)
	}
	if ta.out.Len() == 0 && ta.errOut.Len() == 0 {
		t.Error("sessions list said nothing about no sessions")
	}
	bad := newTestApp(t, "")
	if err := os.MkdirAll(filepath.Join(bad.configDir, config.FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := runSessionsList(sessionsListOpts(bad.app, false)); err == nil {
		t.Error("sessions list ignored a config.toml it cannot read")
	}
	var got *sessionsListOptions
	cmd := under("sessions", newSessionsListCmd(ta.app, func(o *sessionsListOptions) error { got = o; return nil }))
	if err := runCommand(ta.app, cmd, "sessions", "list", "--here"); err != nil || got == nil || !got.Here {
		t.Errorf("sessions list --here: %v, %+v", err, got)
	}
}
