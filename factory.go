package main

import (
	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/wizard"
)

// loaded is the factory's configuration, loaded once on first use: the
// merged config.toml and the config and data dirs. A command's options
// carry it as a func, so `hush --version` reads no file and a test hands a
// command its own.
type loaded struct {
	Config *config.Config
	Dirs   config.Dirs
}

// loadConfig is the factory's lazy, error-returning configuration.
func (a *app) loadConfig() (loaded, error) {
	if err := a.Load(); err != nil {
		return loaded{}, err
	}
	return loaded{Config: a.Config(), Dirs: a.Dirs()}, nil
}

// prompter is a person to ask at the terminal, or nil without one.
func (a *app) prompter() executor.Prompter {
	if a.Terminal() == nil {
		return nil
	}
	return &wizard.Prompter{In: a.Stdin, Out: a.Stdout, Accessible: a.Ambient["ACCESSIBLE"] != "", NoColor: a.Ambient["NO_COLOR"] != ""}
}
