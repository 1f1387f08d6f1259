package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor/transcript"
	"github.com/hushcli/hush/session"
	"github.com/urfave/cli/v2"
)

// TestChatCmdOptions: chat's flags, and the root command's, reach runF's
// options; a stray word is refused before it.
func TestChatCmdOptions(t *testing.T) {
	t.Parallel()
	ta := newTestApp(t, "")
	var got *chatOptions
	runF := func(o *chatOptions) error { got = o; return nil }
	root := func() *cli.App {
		a := newRootCmd(ta.app, runF)
		a.Commands = []*cli.Command{newChatCmd(ta.app, runF)}
		a.ExitErrHandler = func(*cli.Context, error) {}
		prepareCommands(a.Commands)
		return a
	}
	for _, c := range []struct {
		args  []string
		check func(*chatOptions) bool
	}{
		{[]string{"chat", "--continue", "--fork", "--model", "m1", "--plain"}, func(o *chatOptions) bool {
			return o.Resume.Continue && o.Resume.Fork && o.Model.model == "m1" && o.Model.plain && o.UI == nil && !o.Interactive
		}},
		{[]string{"chat", "--resume", "s-123"}, func(o *chatOptions) bool { return o.Resume.Resume && o.Resume.ID == "s-123" }},
		{[]string{"--provider", "replay", "--yes"}, func(o *chatOptions) bool { return o.Model.provider == "replay" && o.Model.yes }},
	} {
		got = nil
		if err := runCLI(root(), append([]string{"hush"}, c.args...)); err != nil || got == nil || !c.check(got) {
			t.Errorf("%q: %v, options %+v", c.args, err, got)
		}
		if got != nil && (got.Config == nil || got.Setup == nil || got.Find == nil || got.Chat == nil || got.Exit == nil) {
			t.Errorf("%q: the factory's funcs are missing: %+v", c.args, got)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chat", "hello"}, "chat takes no arguments"},
		{[]string{"chat", "--continue", "--resume"}, "--continue and --resume both pick a session"},
		{[]string{"chat", "--wait"}, "--fork and --wait go with --continue or --resume"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		got = nil
		err := runCLI(root(), append([]string{"hush"}, c.args...))
		if asExit(err).code != exitUsage || !strings.Contains(err.Error(), c.want) || got != nil {
			t.Errorf("%q: %v, runF called: %v", c.args, err, got != nil)
		}
	}
}

// TestRunChatFirstRun: setup runs first only with a person to ask and no
// model configured or named; the session to resume is found before the
// chat opens.
func TestRunChatFirstRun(t *testing.T) {
	t.Parallel()
	stop := errors.New("the chat would open here")
	for _, c := range []struct {
		name        string
		provider    string // configured
		flag        string // --provider
		interactive bool
		setup       bool
	}{
		{"first run", "", "", true, true},
		{"no terminal", "", "", false, false},
		{"configured", "openai", "", true, false},
		{"--provider", "", "replay", true, false},
	} {
		var out bytes.Buffer
		setups, finds := 0, 0
		opts := &chatOptions{Out: &out, Model: modelFlags{provider: c.flag}, Interactive: c.interactive,
			Resume: resumeRequest{Continue: true},
			Config: func() (loaded, error) {
				return loaded{Config: &config.Config{Model: config.Model{Provider: c.provider}}}, nil
			},
			Setup: func() error { setups++; return nil },
			Find: func(rr resumeRequest, interactive bool) (*transcript.Session, error) {
				finds++
				if interactive != c.interactive || !rr.Continue {
					t.Errorf("%s: Find(%+v, %v)", c.name, rr, interactive)
				}
				return nil, nil
			},
			Chat: func(session.Model, *transcript.Session, resumeRequest) (chatLoop, error) { return chatLoop{}, stop },
		}
		if err := runChat(opts); !errors.Is(err, stop) {
			t.Errorf("%s: %v", c.name, err)
		}
		if (setups == 1) != c.setup || setups > 1 || finds != 1 || strings.Contains(out.String(), "not set up yet") != c.setup {
			t.Errorf("%s: %d setup(s), %d find(s), out %q", c.name, setups, finds, out.String())
		}
	}
}
