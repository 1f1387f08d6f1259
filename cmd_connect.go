package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"

	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/tools/sandbox/egress"
	"github.com/urfave/cli/v2"
)

// newConnectCmd is a ProxyCommand for programs that cannot use an HTTP
// proxy (ssh, git over ssh), run inside a host tool:
//
//	ssh -o ProxyCommand='hush __connect %h %p' git@github.com
//
// It opens a tunnel to HOST:PORT through hush's egress proxy, in the
// tool's network at sandbox.ProxyAddr — or, in the Landlock fallback,
// where the tool's HTTP_PROXY says (the call's own port on the host's
// loopback) — under the same policy as every other connection of the
// call, and copies standard input and output through it.
func newConnectCmd(a *app) *cli.Command {
	return &cli.Command{
		Name:      "__connect",
		Hidden:    true,
		Usage:     "a ProxyCommand: connect stdin and stdout to HOST PORT through hush's egress proxy (inside a host tool)",
		UsageText: "hush __connect HOST PORT",
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return errors.New("usage: hush __connect HOST PORT (e.g. ssh -o ProxyCommand='hush __connect %h %p')")
			}
			port, err := strconv.Atoi(c.Args().Get(1))
			if err != nil || port < 1 || port > 65535 {
				return fmt.Errorf("hush __connect: %q is not a port", c.Args().Get(1))
			}
			conn, err := egress.Dial(c.Context, connectProxyAddr(a.Ambient), c.Args().Get(0), port)
			if err != nil {
				return fmt.Errorf("hush __connect %s:%d: %w", c.Args().Get(0), port, err)
			}
			return pipeStdio(c.Context, conn)
		},
	}
}

// connectProxyAddr is where hush's egress proxy listens for the tool that
// runs `hush __connect`: its HTTP_PROXY when that is a loopback http URL
// with a port (the Landlock fallback's per-call port), else
// sandbox.ProxyAddr.
func connectProxyAddr(env map[string]string) string {
	if p := env["HTTP_PROXY"]; p != "" && egress.CheckProxyURL(p) == nil {
		if u, err := url.Parse(p); err == nil {
			return u.Host
		}
	}
	return sandbox.ProxyAddr
}

// pipeStdio copies stdin to conn and conn to stdout until conn's end.
func pipeStdio(ctx context.Context, conn net.Conn) error {
	defer conn.Close()
	go func() {
		_, _ = io.Copy(conn, os.Stdin)
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}()
	go func() {
		<-ctx.Done()
		conn.Close()
	}()
	_, err := io.Copy(os.Stdout, conn)
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
