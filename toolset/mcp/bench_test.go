package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/tools"
	"github.com/hushcli/hush/tools/sandbox"
	"github.com/hushcli/hush/toolset/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPRoundTrip is one trivial tool call (echo) to a local stdio
// server, after the handshake, the way the executor makes it: the tool's
// Run, through the Manager, the SDK client and the server's stdin and
// stdout, and the result written out as text. scripts/bench reports the
// median (med-ns/op) against the target of 2 ms.
//
// The server is the Go fault-injection server in testdata (its echo tool
// behaves); sdk is the same call on a bare SDK client session to the same
// program, the floor hush's layers sit on; everything is the npm reference
// server, when scripts/provision has installed it.
func BenchmarkMCPRoundTrip(b *testing.B) {
	b.Run("hush", func(b *testing.B) {
		benchManagerEcho(b, mcp.Server{Name: "bench", Command: faultServer})
	})
	b.Run("sdk", func(b *testing.B) {
		client := sdk.NewClient(&sdk.Implementation{Name: "hush-bench", Version: "1"}, nil)
		cs, err := client.Connect(b.Context(), &sdk.CommandTransport{Command: exec.Command(faultServer)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "ping"}}
		timeEach(b, func() {
			if res, err := cs.CallTool(b.Context(), params); err != nil || res.IsError {
				b.Fatalf("echo: %v", err)
			}
		})
	})
	b.Run("everything", func(b *testing.B) {
		if _, err := exec.LookPath("node"); err != nil {
			b.Skip("skipping: node is not installed (scripts/provision)")
		}
		cache := os.Getenv("HUSH_TEST_CACHE")
		if cache == "" {
			cache = filepath.Join(os.Getenv("HOME"), ".cache", "hush-test")
		}
		bin := filepath.Join(cache, "npm", "node_modules", ".bin", "mcp-server-everything")
		if _, err := os.Stat(bin); err != nil {
			b.Skipf("skipping: %s is not installed; run scripts/provision", bin)
		}
		benchManagerEcho(b, mcp.Server{Name: "everything", Command: bin, Args: []string{"stdio"}})
	})
}

// benchManagerEcho starts server through a Manager and times its echo
// tool's Run.
func benchManagerEcho(b *testing.B, server mcp.Server) {
	dir := b.TempDir()
	ambient := map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir, "LANG": "C.UTF-8"}
	m, err := mcp.NewManager(mcp.Options{Servers: []mcp.Server{server}, Dir: dir, Ambient: ambient,
		Secrets: executor.NewSecretCache(func() (map[string]string, error) { return map[string]string{}, nil }, nil),
		Grant:   func(context.Context, string, int) tools.Grant { return nil }})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	m.Start(b.Context())
	var echo *mcp.Tool
	for _, t := range m.Tools() {
		if t.Server() == server.Name && t.MCPName() == "echo" {
			echo = t
		}
	}
	if echo == nil {
		b.Fatalf("no echo tool: %+v", m.Status())
	}
	args := json.RawMessage(`{"text":"ping"}`)
	if server.Name == "everything" {
		args = json.RawMessage(`{"message":"ping"}`)
	}
	var out bytes.Buffer
	tc := &executor.ToolContext{Subject: echo.Subject(), Dir: dir, Ambient: tools.NewAmbient(ambient), Output: &out}
	timeEach(b, func() {
		out.Reset()
		if res, err := echo.Run(b.Context(), tc, args); err != nil || res.IsError || !bytes.Contains(out.Bytes(), []byte("ping")) {
			b.Fatalf("echo: %+v %v %q", res, err, out.String())
		}
	})
}

// timeEach runs f once per iteration and reports the median time of one
// call as med-ns/op: on a shared machine a descheduled iteration moves the
// mean a lot and the median hardly at all.
func timeEach(b *testing.B, f func()) {
	b.Helper()
	var samples []time.Duration
	for b.Loop() {
		start := time.Now()
		f()
		samples = append(samples, time.Since(start))
	}
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds()), "med-ns/op")
}

// BenchmarkMCPStart starts the Go test server through a Manager (spawn,
// handshake, tool listing) and closes it, in each iteration once without
// the host sandbox and once in it, interleaved; it reports both medians and
// the median of per-iteration ratios (scripts/bench's MCP start row).
func BenchmarkMCPStart(b *testing.B) {
	if !sandbox.Status().Namespaces {
		b.Skip(sandbox.Status().Reason)
	}
	dir := b.TempDir()
	masks, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: dir, DataDir: filepath.Join(dir, "data"), ConfigDir: filepath.Join(dir, "config"), Project: dir})
	if err != nil {
		b.Fatal(err)
	}
	ambient := map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir, "LANG": "C.UTF-8"}
	start := func(sb *sandbox.Config) time.Duration {
		t0 := time.Now()
		m, err := mcp.NewManager(mcp.Options{Servers: []mcp.Server{{Name: "bench", Command: faultServer}}, Dir: dir, Ambient: ambient,
			Secrets: executor.NewSecretCache(func() (map[string]string, error) { return map[string]string{}, nil }, nil),
			Grant:   func(context.Context, string, int) tools.Grant { return nil }, Sandbox: sb})
		if err != nil {
			b.Fatal(err)
		}
		m.Start(b.Context())
		d := time.Since(t0)
		if len(m.Tools()) == 0 {
			b.Fatalf("the server did not start: %+v", m.Status())
		}
		m.Close()
		return d
	}
	var bare, boxed []time.Duration
	var ratios []float64
	for b.Loop() {
		x := start(nil)
		y := start(&sandbox.Config{Masks: masks})
		bare, boxed = append(bare, x), append(boxed, y)
		ratios = append(ratios, float64(y)/float64(x))
	}
	med := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds())
	}
	slices.Sort(ratios)
	b.ReportMetric(med(bare), "bare-ns/op")
	b.ReportMetric(med(boxed), "sandbox-ns/op")
	b.ReportMetric(ratios[len(ratios)/2], "ratio")
}
