package session

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox"
)

// hush's own connections that carry a secret — the model's API key,
// telemetry headers, a remote MCP server's token — go only to their
// configured host. Where that host is this machine's loopback, the service
// may be down and its port taken by something else; if that something is
// a process hush itself started (a tool whose network is the host's, or a
// child of one), it is not the service the user configured, and hush sends
// it nothing. (A tool in its own network, the default, cannot listen on
// the host's loopback at all.)

// dialOwn connects like a net.Dialer, then, to a loopback address, checks
// who listens there and closes the connection before a byte is sent when
// it is a process hush started.
func dialOwn(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	ra, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok || !ra.IP.IsLoopback() {
		return c, nil
	}
	if pid := listenerPid(ra.Port); pid > 0 && pid != os.Getpid() && descendsFrom(pid, os.Getpid()) {
		c.Close()
		return nil, fmt.Errorf("%s is served by a process hush started (pid %d), not the service configured there: hush sends it nothing", addr, pid)
	}
	return c, nil
}

// listenerPid is a process holding the TCP socket listening on port on
// this machine's loopback or every address, or 0 when none is found (or
// none may be looked at).
func listenerPid(port int) int {
	var links []string
	for _, l := range tools.Listeners("/proc/net") {
		if l.Port == port {
			links = append(links, "socket:["+l.Inode+"]")
		}
	}
	if len(links) == 0 {
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range procs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err == nil && sandbox.HoldsFile(pid, links...) {
			return pid
		}
	}
	return 0
}

// descendsFrom says pid is ancestor or one of its descendants.
func descendsFrom(pid, ancestor int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == ancestor {
			return true
		}
		ppid, _, ok := sandbox.ProcStat(pid)
		if !ok {
			return false
		}
		pid = ppid
	}
	return false
}
