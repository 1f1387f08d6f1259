package main

import (
	"fmt"
	"github.com/hushcli/hush/config"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/hushcli/hush/session"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/toolset/dockerbash"
	"github.com/urfave/cli/v2"
)

// sandboxShowOptions is `hush sandbox show`.
type sandboxShowOptions struct {
	Out    io.Writer
	Config func() (loaded, error)
	// HostSandbox is the sandbox a host tool gets in this project.
	HostSandbox func(tool string) (*sandbox.Config, error)
	// Project is the directory tools run in (an MCP server's relative dir
	// is below it).
	Project func() (string, error)
	Tool    string
}

func newSandboxCmd(a *app) *cli.Command {
	return &cli.Command{
		Name:        "sandbox",
		Usage:       "show what a host tool's sandbox hides, and why",
		UsageText:   "hush sandbox show [--tool NAME]",
		Subcommands: []*cli.Command{newSandboxShowCmd(a, nil)},
	}
}

func newSandboxShowCmd(f *app, runF func(*sandboxShowOptions) error) *cli.Command {
	if runF == nil {
		runF = runSandboxShow
	}
	return &cli.Command{
		Name:  "show",
		Usage: "list the protections a tool runs with on this machine, the paths it does not see and those it may only read",
		Description: "Every host tool (bash, background processes, MCP servers) runs in a world of its\n" +
			"own, built from an allowlist: the project read-write, the system read-only, a minimal\n" +
			"/dev, its own PID namespace and /proc, a private /tmp and a private home holding only\n" +
			"PATH dirs, toolchains, build caches and git's config; a user namespace (no capability\n" +
			"over the host, even as root), no_new_privs, no kernel keys. This prints that world,\n" +
			"entry by entry, with the reason for each. [sandbox] in config.toml changes it:\n" +
			"allow = [\"~/.aws\", \"rw:~/notes\", \"ssh-agent\"] adds paths (rw: read-write) and named\n" +
			"sockets, hide = [...] takes paths out, docker = true adds the Docker socket,\n" +
			"required = true refuses host tools where the kernel refuses the sandbox.\n" +
			"Each call is limited too: [tools.NAME] max_processes (4096) and max_memory (half of\n" +
			"RAM, a call's processes together); \"# limits per call\" says how this machine enforces them.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tool", Value: "bash", Usage: "tool name: bash, background, or mcp:<server>"},
		},
		Action: func(c *cli.Context) error {
			return runF(&sandboxShowOptions{Out: f.Stdout, Config: f.loadConfig, HostSandbox: f.HostSandbox, Project: f.ProjectDir, Tool: c.String("tool")})
		},
	}
}

// runSandboxShow prints the tool's sandbox, the protections on this
// machine, then every mask with its reason.
func runSandboxShow(opts *sandboxShowOptions) error {
	if opts.Tool == dockerbash.Name {
		network := "none (the default)"
		if l, err := opts.Config(); err == nil {
			switch n := l.Config.Tools[dockerbash.Name].Network; n {
			case "", "none":
			case dockerbash.NetworkProxy:
				network = "its own internal Docker network per call, out only through hush's egress proxy on its gateway (docs/network.md)"
			default:
				network = "Docker's " + strconv.Quote(n) + ", unfiltered (network = \"proxy\" sends it through hush's egress proxy)"
			}
		}
		return fmt.Errorf("%s runs in a container, not the host sandbox: the project is mounted read-only at /app with its .env files hidden (see `hush env --tool %s`); its network: %s", opts.Tool, opts.Tool, network)
	}
	l, err := opts.Config()
	if err != nil {
		return err
	}
	if _, _, err := session.EnvPolicy(*l.Config, l.Dirs.Config, opts.Tool); err != nil {
		return err
	}
	sb, err := opts.HostSandbox(strings.SplitN(opts.Tool, ":", 2)[0])
	if err != nil {
		return err
	}
	if name, ok := strings.CutPrefix(opts.Tool, "mcp:"); ok && opts.Project != nil {
		// The server's own program, as it starts (mcp.Manager.connect).
		servers, err := session.MCPServers(*l.Config, l.Dirs.Config)
		if err != nil {
			return err
		}
		project, err := opts.Project()
		if err != nil {
			return err
		}
		for _, s := range servers {
			if s.Name == name && s.URL == "" {
				sb = sb.ForProgram(s.Program(project)...)
			}
		}
	}
	if err := sandbox.Render(opts.Out, opts.Tool, sb, sandbox.Status()); err != nil {
		return err
	}
	return renderNetwork(opts.Out, *l.Config, opts.Tool, sb)
}

// renderNetwork is `hush sandbox show`'s network section.
func renderNetwork(w io.Writer, cfg config.Config, tool string, sb *sandbox.Config) error {
	return renderNetworkFor(w, cfg, tool, sb, sandbox.Status())
}

// renderNetworkFor is renderNetwork on a machine whose sandbox gives st.
func renderNetworkFor(w io.Writer, cfg config.Config, tool string, sb *sandbox.Config, st sandbox.State) error {
	mode, entries, err := session.NetworkView(cfg, tool)
	if err != nil {
		return err
	}
	key := strings.SplitN(tool, ":", 2)[0]
	fmt.Fprintln(w)
	switch {
	case sb == nil || !st.Namespaces && !st.LandlockOnly:
		fmt.Fprintln(w, "network: the host's, unfiltered (the sandbox is off)")
		return nil
	case mode == session.NetworkNone && st.LandlockOnly:
		fmt.Fprintf(w, "network: none — no internet socket at all, loopback included (tools.%s.network = \"none\"; Landlock and seccomp)\n", key)
		return nil
	case mode == session.NetworkNone:
		fmt.Fprintf(w, "network: none — only a loopback interface of its own (tools.%s.network = \"none\")\n", key)
		return nil
	case mode == session.NetworkHost:
		fmt.Fprintf(w, "network: the host's, unfiltered (tools.%s.network = \"host\"): every host, this machine's loopback services included\n", key)
		return nil
	case st.LandlockOnly:
		fmt.Fprintln(w, "network: the host's, but TCP only to hush's egress proxy — the kernel refuses network namespaces here, so the proxy listens for each call")
		fmt.Fprintln(w, "  on the host's 127.0.0.1 at a port of the call's own, the one TCP port the tool may connect to (Landlock); UDP (DNS included),")
		fmt.Fprintln(w, "  raw and packet sockets and TCP fast open are refused (seccomp)")
		fmt.Fprintln(w, "  (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY point at it; a program that ignores them reaches no host at all)")
		fmt.Fprintln(w, "  not here: Landlock's rule names a port, not an address — a server anywhere that listens on the call's port (an attacker's")
		fmt.Fprintln(w, "  host can listen on every port) is reached directly, past the proxy; set [tools.NAME] network = \"none\" where that matters;")
		fmt.Fprintln(w, "  the proxy's port is on the host's loopback, where any process could connect — it answers only the call's own processes;")
		fmt.Fprintln(w, "  a tool may listen on the host's loopback, and a later call reaches a dev server it started only through the proxy")
		fmt.Fprintln(w, "  ([network] allow = [\"127.0.0.1:PORT\"]), not directly")
	default:
		fmt.Fprintf(w, "network: a network of its own with only loopback; its one way out is hush's egress proxy at http://%s\n", sandbox.ProxyAddr)
		fmt.Fprintln(w, "  (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY point at it; a program that ignores them reaches no host at all)")
		fmt.Fprintln(w, "  the session's own services (a dev server a background process started) are reached at 127.0.0.1; the host's loopback is not")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range entries {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Action, e.What, e.Why)
	}
	return tw.Flush()
}
