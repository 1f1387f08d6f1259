package main

import (
	"github.com/hushcli/hush/config"
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
