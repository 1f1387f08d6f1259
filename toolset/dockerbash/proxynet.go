package dockerbash

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox/egress"
)

// NetworkProxy is the network setting (tools.dockerbash.network = "proxy")
// under which a call's container reaches the network only through hush's
// egress proxy, under the same policy as the host tools' calls: the
// container is alone on an internal Docker network of the call's own,
// which has no route out of it, and hush's proxy listens on that
// network's gateway address, the one address of the host the container
// can reach. Its environment points HTTP_PROXY and the like there.
const NetworkProxy = "proxy"

// proxyNet is one call's internal network and the proxy serving it.
type proxyNet struct {
	id   string
	url  string // http://GATEWAY:PORT
	stop func()
}

// openProxyNet makes the call's internal network and serves the egress
// proxy on its gateway until close. serve is the call's side of the
// session's proxy (ToolContext.Egress, after BuildEnv: it holds the
// call's secrets).
func (t Tool) openProxyNet(ctx context.Context, cli *Engine, ambient tools.Ambient, serve func(context.Context, net.Listener)) (*proxyNet, error) {
	if serve == nil {
		return nil, errors.New(`tools.dockerbash.network = "proxy" needs hush's egress proxy, which is off ([unsafe] no_sandbox): set network = "none", or turn the sandbox back on`)
	}
	if h := ambient.DockerHost(); h != "" && !strings.HasPrefix(h, "unix://") {
		return nil, fmt.Errorf(`tools.dockerbash.network = "proxy" needs the Docker engine on this machine, where hush listens for the container; the engine is at %s`, shownHost(h))
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "hush-" + Name + "-" + hex.EncodeToString(b)
	var created struct {
		ID string `json:"Id"`
	}
	req := map[string]any{"Name": name, "Internal": true, "CheckDuplicate": true,
		"Labels": map[string]string{LabelTool: Name, LabelPID: strconv.Itoa(os.Getpid()), LabelOwner: owner(), LabelSession: t.Session}}
	if err := cli.call(ctx, http.MethodPost, "/networks/create", nil, req, &created); err != nil {
		return nil, engineError("create the call's network", err)
	}
	pn := &proxyNet{id: created.ID, stop: func() {}}
	fail := func(err error) (*proxyNet, error) {
		pn.close(ctx, cli, t.RemoveTimeout)
		return nil, err
	}
	var info struct {
		IPAM struct {
			Config []struct{ Subnet, Gateway string }
		}
	}
	if err := cli.call(ctx, http.MethodGet, "/networks/"+url.PathEscape(created.ID), nil, nil, &info); err != nil {
		return fail(engineError("inspect the call's network", err))
	}
	var gw netip.Addr
	var subnet netip.Prefix
	for _, c := range info.IPAM.Config {
		g, gerr := netip.ParseAddr(c.Gateway)
		s, serr := netip.ParsePrefix(c.Subnet)
		if gerr == nil && serr == nil && g.Is4() && s.Contains(g) {
			gw, subnet = g, s
			break
		}
	}
	if !gw.IsValid() {
		return fail(errors.New("the Docker engine gave the call's network no IPv4 gateway for hush's proxy to listen on"))
	}
	ln, err := net.Listen("tcp", netip.AddrPortFrom(gw, 0).String())
	if err != nil {
		return fail(fmt.Errorf("listen for the container on its network's gateway %s (a rootless engine's networks are not this machine's): %w", gw, err))
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(sctx, subnetListener{Listener: ln, subnet: subnet, gateway: gw})
	}()
	pn.stop = func() { cancel(); <-done }
	pn.url = "http://" + ln.Addr().String()
	return pn, nil
}

// close stops the proxy and removes the network (after the container:
// a network with a container on it cannot be removed).
func (pn *proxyNet) close(ctx context.Context, cli *Engine, timeout time.Duration) {
	pn.stop()
	if timeout == 0 {
		timeout = removeTimeout
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	for rctx.Err() == nil {
		err := cli.call(rctx, http.MethodDelete, "/networks/"+url.PathEscape(pn.id), nil, nil, nil)
		if err == nil || isNotFound(err) {
			return
		}
		select {
		case <-rctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// env sets the proxy variables of seed 001's rule (a loopback-style
// http:// URL with a port, both cases) in env, over any the call set.
func (pn *proxyNet) env(env tools.Env) tools.Env {
	vars := egress.ProxyVars(pn.url)
	out := env[:0:0]
	for _, v := range env {
		if _, ok := vars[v.Name]; !ok {
			out = append(out, v)
		}
	}
	for n, v := range vars {
		out = append(out, tools.Var{Name: n, Value: v, Source: tools.FromOption})
	}
	return out
}

// subnetListener accepts only connections from the call's network: the
// gateway's address is the host's, which other containers and local
// processes can reach too.
type subnetListener struct {
	net.Listener
	subnet  netip.Prefix
	gateway netip.Addr
}

func (l subnetListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
			if a := ap.Addr().Unmap(); l.subnet.Contains(a) && a != l.gateway {
				return c, nil
			}
		}
		c.Close()
	}
}
