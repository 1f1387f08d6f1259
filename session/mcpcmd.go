package session

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools/mcp"
)

// MCPServers is every configured MCP server, from config.toml and mcp.json
// (MCPServers).
func (e *Env) MCPServers() ([]mcp.Server, error) {
	if err := e.Load(); err != nil {
		return nil, err
	}
	return MCPServers(e.cfg, e.dirs.Config)
}

// StartMCP starts the named servers (all when none) outside a chat session
// (Standalone): in the sandbox a session gives them, with config.toml's
// rules and, on a terminal, a person to ask.
func (e *Env) StartMCP(ctx context.Context, names ...string) (*mcp.Manager, error) {
	lv, err := e.Vault()
	if err != nil {
		return nil, err
	}
	dir, err := e.ProjectDir()
	if err != nil {
		return nil, err
	}
	servers, err := e.MCPServers()
	if err != nil {
		return nil, err
	}
	box, err := e.HostSandbox("mcp")
	if err != nil {
		return nil, err
	}
	return Standalone{Sandbox: box, Config: e.cfg, Servers: servers, Dir: dir, DataDir: e.dirs.Data, Ambient: e.Ambient, Vault: lv, Scrub: e.scrub,
		Prompter: e.prompter(), Notice: e.Warn, Version: e.Version}.Start(ctx, names...)
}

// MCPLogin is `hush mcp login SERVER`: at a terminal, it signs in to the
// OAuth server name and stores its tokens in the vault (Standalone.Login).
// Ctrl-C ends it with ErrInterrupted.
func (e *Env) MCPLogin(name string) error {
	in := e.Terminal()
	if in == nil {
		return errors.New("hush mcp login needs a terminal: the sign-in happens in your browser, and hush waits for it there")
	}
	servers, err := e.MCPServers()
	if err != nil {
		return err
	}
	if err := mcp.CheckKnown(servers, name); err != nil {
		return err
	}
	lv, err := e.Vault()
	if err != nil {
		return err
	}
	dir, err := e.ProjectDir()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Standalone{Config: e.cfg, Servers: servers, Dir: dir, DataDir: e.dirs.Data, Ambient: e.Ambient, Vault: lv, Scrub: e.scrub,
		Prompter: e.prompter(), Notice: e.Warn, Version: e.Version}.Login(ctx, name, in, e.Stderr)
}

// MCPList is `hush mcp list`: each server's state and tool count, started
// and stopped again, or with noStart only as configured.
func (e *Env) MCPList(noStart bool) error {
	var st []mcp.Status
	if noStart {
		servers, err := e.MCPServers()
		if err != nil {
			return err
		}
		st = mcp.Configured(servers)
	} else {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		mgr, err := e.StartMCP(ctx)
		if err != nil {
			return err
		}
		st = mgr.Status()
		mgr.Close()
	}
	return mcp.RenderList(e.Stdout, st, filepath.Join(e.dirs.Config, config.FileName))
}

// MCPTools is `hush mcp tools SERVER`: it starts the one server and lists
// its tools as the model sees them, with schema their input schemas.
func (e *Env) MCPTools(name string, schema bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	servers, err := e.MCPServers()
	if err != nil {
		return err
	}
	if err := mcp.CheckKnown(servers, name); err != nil {
		return err
	}
	mgr, err := e.StartMCP(ctx, name)
	if err != nil {
		return err
	}
	defer mgr.Close()
	list, err := mgr.ServerTools(name)
	if err != nil {
		return err
	}
	return mcp.RenderTools(e.Stdout, name, list, schema)
}

// MCPImport is `hush mcp import FILE|-` (mcp.ImportFile): it adds the
// servers of an mcpServers block to mcp.json, moving literal credentials
// into the vault; replace replaces servers of the same name.
func (e *Env) MCPImport(src string, replace bool) error {
	if err := e.Load(); err != nil {
		return err
	}
	var hint io.Writer
	if e.Terminal() != nil {
		hint = e.Stderr
	}
	data, name, err := mcp.ReadImportSource(context.Background(), src, e.Stdin, hint)
	if err != nil {
		return err
	}
	lv, err := e.Vault()
	if err != nil {
		return err
	}
	return mcp.ImportFile{Data: data, Source: name, MCPJSON: filepath.Join(e.dirs.Config, config.MCPFileName),
		ConfigTOML: filepath.Join(e.dirs.Config, config.FileName), InConfigTOML: e.cfg.MCP, Replace: replace,
		Vault: lv, Ambient: e.Ambient}.Run(e.Stdout)
}
