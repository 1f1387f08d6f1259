package dockerbash_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/hushcli/hush/toolset/dockerbash"
)

// socketProxy forwards a unix socket to the engine's, and can be cut (every
// connection closed, nothing listening) and restored, as an engine that
// stops or a socket that goes away mid-call.
//
// A cut is at once: it first stops every connection forwarding (the
// generation's cut flag), then closes them. Closed one by one, the first
// closed (the call's wait) let the tool react while a pooled connection
// was still open, and its removal reached the engine after the "cut" — on
// a loaded machine, now and then, the container "that could not be
// removed" was gone.
type socketProxy struct {
	t      *testing.T
	path   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
	gen    *proxyGen // the current listener's connections
}

// proxyGen is one restore's connections: cut is set before any closes.
type proxyGen struct{ cut atomic.Bool }

// gated forwards to w until its generation is cut.
type gated struct {
	w   io.Writer
	gen *proxyGen
}

func (g gated) Write(b []byte) (int, error) {
	if g.gen.cut.Load() {
		return 0, net.ErrClosed
	}
	return g.w.Write(b)
}

func newSocketProxy(t *testing.T, ambient map[string]string) *socketProxy {
	target := strings.TrimPrefix(dockerbash.EngineHost(ambient), "unix://")
	if strings.Contains(target, "://") {
		t.Skipf("the engine is not on a unix socket (%s)", target)
	}
	p := &socketProxy{t: t, path: filepath.Join(t.TempDir(), "docker.sock"), target: target}
	p.restore()
	t.Cleanup(p.cut)
	return p
}

func (p *socketProxy) restore() {
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		p.t.Fatal(err)
	}
	gen := &proxyGen{}
	p.mu.Lock()
	p.ln, p.gen = ln, gen
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("unix", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if gen.cut.Load() {
				// Accepted before a cut it must not outlive.
				p.mu.Unlock()
				c.Close()
				up.Close()
				continue
			}
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(gated{up, gen}, c); up.Close() }()
			go func() { _, _ = io.Copy(gated{c, gen}, up); c.Close() }()
		}
	}()
}

func (p *socketProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != nil {
		p.gen.cut.Store(true)
	}
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	_ = os.Remove(p.path)
}

// runCut starts a call through the proxy, cuts the proxy once the
// container runs, calls during() and returns the call's result text.
func runCut(t *testing.T, ambient map[string]string, tool dockerbash.Tool, during func(p *socketProxy)) (status string, id string) {
	p := newSocketProxy(t, ambient)
	proxied := map[string]string{"DOCKER_HOST": "unix://" + p.path}
	tc, out := newToolContext(t, proxied, mapVault{}, nil)
	done := make(chan string, 1)
	go func() {
		res, err := call(t, context.Background(), tool, tc, map[string]any{"script": "hostname; sleep 300"})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- res.Status
	}()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "\n"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the container did not start")
		}
	}
	id = strings.TrimSpace(out.String())
	p.cut()
	during(p)
	select {
	case status = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not end after the engine was cut")
	}
	return status, id
}

// TestEngineCutMidCall: the engine's socket cut in the middle of a call
// (as a stopped or restarted engine) leaves no container once the engine
// is back within the removal's bound — removal is retried — and the call
// says the container was removed only when it was (it used to say
// "stopped and removed" while the container ran on past its timeout).
func TestEngineCutMidCall(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	t.Run("back within the bound", func(t *testing.T) {
		t.Parallel()
		tool := newTool(t)
		tool.RemoveTimeout = 20 * time.Second
		status, id := runCut(t, ambient, tool, func(p *socketProxy) {
			time.Sleep(time.Second)
			p.restore()
		})
		if strings.Contains(status, "could not be removed") {
			t.Errorf("status %q, want the container removed once the engine was back", status)
		}
		gone(t, ambient, id)
	})
	t.Run("gone for good", func(t *testing.T) {
		t.Parallel()
		tool := newTool(t)
		tool.RemoveTimeout = 2 * time.Second
		status, id := runCut(t, ambient, tool, func(*socketProxy) {})
		t.Logf("status: %s", status)
		if !strings.Contains(status, "the container could not be removed") || strings.Contains(status, "stopped and removed") {
			t.Errorf("status %q, want it to say the container could not be removed", status)
		}
		// Truthful: the container is still there (through the real socket).
		cli, err := officialClient(ambient)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		ctx := context.Background()
		info, err := cli.ContainerInspect(ctx, id)
		if err != nil {
			t.Fatalf("the container the call could not remove is not there: %v", err)
		}
		if info.Config.Labels[dockerbash.LabelOwner] == "" {
			t.Errorf("the container carries no owner label: %v", info.Config.Labels)
		}
		_ = cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
		gone(t, ambient, id)
	})
}

// TestLeftoversOfADeadHushAreRemoved: the next start removes the
// containers whose hush is gone and says so; a live hush's are kept.
func TestLeftoversOfADeadHushAreRemoved(t *testing.T) {
	t.Parallel()
	ambient := engineAmbient(t)
	cli, err := officialClient(ambient)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skip("no boot id")
	}
	session := canary("session")
	create := func(owner string) string {
		c, err := cli.ContainerCreate(ctx, &container.Config{Image: testImage, Cmd: []string{"sleep", "300"},
			Labels: map[string]string{dockerbash.LabelTool: dockerbash.Name, dockerbash.LabelOwner: owner, dockerbash.LabelSession: session}}, nil, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}) })
		return c.ID
	}
	// The test process is alive; the same pid with another start time is
	// a hush that died (its pid reused or not).
	self := strconv.Itoa(os.Getpid())
	selfStat, _ := os.ReadFile("/proc/self/stat")
	s := string(selfStat)
	start := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[19]
	nsLink, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	ns := strings.TrimSuffix(strings.TrimPrefix(nsLink, "pid:["), "]")
	bootID := strings.TrimSpace(string(boot))
	dead := create(bootID + ":" + ns + ":" + self + ":1")
	alive := create(bootID + ":" + ns + ":" + self + ":" + start)
	// A hush in another PID namespace (a container, a sandbox) labelled
	// this one: its pid means nothing here, so it is not judged gone.
	elsewhere := create(bootID + ":1:" + self + ":1")
	// A call's own network (network = "proxy") that the dead hush left,
	// and one of the live hush.
	mkNet := func(owner string) string {
		n, err := cli.NetworkCreate(ctx, canary("net"), network.CreateOptions{Internal: true,
			Labels: map[string]string{dockerbash.LabelTool: dockerbash.Name, dockerbash.LabelOwner: owner, dockerbash.LabelSession: session}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cli.NetworkRemove(context.Background(), n.ID) })
		return n.ID
	}
	deadNet, aliveNet := mkNet(bootID+":"+ns+":"+self+":1"), mkNet(bootID+":"+ns+":"+self+":"+start)
	var said []string
	for _, l := range dockerbash.RemoveLeftovers(ctx, ambient) {
		said = append(said, l.Describe())
	}
	want := "removed a docker-bash container of session " + session + " that a hush which is gone left behind (" + dead[:12] + ")"
	if !strings.Contains(strings.Join(said, "\n"), want) {
		t.Errorf("RemoveLeftovers said %q, want %q", said, want)
	}
	if _, err := cli.ContainerInspect(ctx, dead); !cerrdefs.IsNotFound(err) {
		t.Errorf("the dead hush's container is still there (%v)", err)
	}
	if _, err := cli.ContainerInspect(ctx, alive); err != nil {
		t.Errorf("the live hush's container was removed: %v", err)
	}
	if _, err := cli.ContainerInspect(ctx, elsewhere); err != nil {
		t.Errorf("the container of a hush in another PID namespace was removed: %v", err)
	}
	if _, err := cli.NetworkInspect(ctx, deadNet, network.InspectOptions{}); !cerrdefs.IsNotFound(err) {
		t.Errorf("the dead hush's network is still there (%v)", err)
	}
	if _, err := cli.NetworkInspect(ctx, aliveNet, network.InspectOptions{}); err != nil {
		t.Errorf("the live hush's network was removed: %v", err)
	}
}
