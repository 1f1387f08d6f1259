package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/vault/keyring"
	"github.com/hushcli/hush/vault/keyring/keyringtest"
	"github.com/urfave/cli/v2"
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
	project        string
}

// again is a fresh hush process over ta's dirs and project (nothing loaded
// yet), reading stdin, writing to ta's buffers.
func (ta *testApp) again(stdin string) *app {
	return &app{Ambient: ta.Ambient, Stdin: strings.NewReader(stdin), Stdout: ta.out, Stderr: ta.errOut, WorkDir: ta.project, Version: "test"}
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
	ta.project = project
	ta.app = &app{Ambient: amb, Stdin: strings.NewReader(stdin), Stdout: ta.out, Stderr: ta.errOut, WorkDir: project, Version: "test"}
	t.Cleanup(func() { _ = gokeyring.DeleteAll(ta.service) })
	return ta
}

// requireKeyring skips unless the real Secret Service answers a round trip.
func requireKeyring(t *testing.T, ta *testApp) *keyring.Backend {
	t.Helper()
	kb, err := keyring.Open(keyring.Options{Service: ta.service, Env: ta.Ambient, DataDir: ta.dir})
	if err != nil {
		t.Skipf("needs secret-service: no Secret Service to test against (run through scripts/with-secret-service): %v", err)
	}
	t.Cleanup(func() { _ = kb.Close() })
	keyringtest.RequireRoundTrip(t, kb)
	return kb
}

// TestAsExit: the exit code of each kind of error a command returns.
func TestAsExit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want int
	}{
		{errors.New("plain"), exitFailure},
		{&exitError{exitDenied, errors.New("denied")}, exitDenied},
		{fmt.Errorf("wrapped: %w", &exitError{exitUsage, errors.New("bad name")}), exitUsage},
		{&stoppedError{Signal: syscall.SIGTERM, Err: session.ErrInterrupted}, exitTerminated},
		{&stoppedError{Signal: os.Interrupt, Err: session.ErrInterrupted}, exitInterrupted},
		{&stoppedError{Signal: syscall.SIGHUP, Err: session.ErrInterrupted}, exitHangup},
	} {
		got := asExit(tt.err)
		if got.code != tt.want || got.Error() != tt.err.Error() {
			t.Errorf("asExit(%v) = %d %q, want %d and the same message", tt.err, got.code, got.Error(), tt.want)
		}
	}
}

// runCommand runs a freshly built cmd as hush would (usage errors, stray
// arguments refused) with args after "hush": args[0] is cmd's name.
func runCommand(a *app, cmd *cli.Command, args ...string) error {
	prepareCommands([]*cli.Command{cmd})
	app := &cli.App{Name: "hush", Writer: a.Stdout, ErrWriter: a.Stderr, Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}}
	return runCLI(app, append([]string{"hush"}, args...))
}

// under is cmds as the subcommands of a command named parent.
func under(parent string, cmds ...*cli.Command) *cli.Command {
	return &cli.Command{Name: parent, Subcommands: cmds}
}
