// Command faultserver is an MCP stdio server written with the Go SDK whose
// tools misbehave on request, for testing how hush's MCP client copes: it
// crashes mid-call, freezes, writes garbage to stdout, leaks an environment
// variable, spawns a grandchild; with -start it fails during start-up.
//
// It lives in testdata so that `go build ./...` and the architecture test
// ignore it: it starts processes and reads its environment on purpose.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The exit code of each way faultserver ends; hush's MCP tests expect these
// numbers in the messages hush prints about the server.
const (
	exitDone            = 0 // the bye tool ended the session
	exitServeFailed     = 1 // the SDK's Run returned an error
	exitStartFailed     = 2 // -start exit
	exitCrashed         = 3 // the crash tool
	exitHandshakeFailed = 4 // -start exit-in-handshake
)

func main() {
	start := flag.String("start", "normal", "normal | exit | exit-in-handshake | garbage | hang")
	flag.Parse()
	fmt.Fprintln(os.Stderr, "faultserver: starting in mode", *start)
	switch *start {
	case "exit":
		fmt.Fprintln(os.Stderr, "faultserver: fatal: no configuration found")
		os.Exit(exitStartFailed)
	case "exit-in-handshake":
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		fmt.Fprintln(os.Stderr, "faultserver: giving up during the handshake")
		os.Exit(exitHandshakeFailed)
	case "garbage":
		fmt.Println("Welcome to faultserver! This banner is not JSON-RPC.")
	case "hang":
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {}
	}

	s := mcp.NewServer(&mcp.Implementation{Name: "faultserver", Version: "1"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add := func(name, desc string, schema string, h func(args map[string]any) *mcp.CallToolResult) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var args map[string]any
				_ = json.Unmarshal(req.Params.Arguments, &args)
				return h(args), nil
			})
	}
	noArgs := `{"type":"object","properties":{}}`
	add("echo", "Echo the text back.", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		func(a map[string]any) *mcp.CallToolResult { return text(fmt.Sprint(a["text"])) })
	add("env", "Print the environment as JSON.", noArgs, func(map[string]any) *mcp.CallToolResult {
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		b, _ := json.MarshalIndent(env, "", "  ")
		return text(string(b))
	})
	add("leak", "Return the value of an environment variable.", `{"type":"object","properties":{"name":{"type":"string"}}}`,
		func(a map[string]any) *mcp.CallToolResult {
			return text("value=" + os.Getenv(fmt.Sprint(a["name"])))
		})
	add("crash", "Exit in the middle of the call.", noArgs, func(map[string]any) *mcp.CallToolResult {
		fmt.Fprintln(os.Stderr, "faultserver: panic: simulated crash")
		os.Exit(exitCrashed)
		return nil
	})
	add("freeze", "Stop the whole process (SIGSTOP): no call or ping is answered again.", noArgs, func(map[string]any) *mcp.CallToolResult {
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		select {} // the stop may land a moment after kill returns
	})
	add("slow", "Answer after the given number of seconds.", `{"type":"object","properties":{"seconds":{"type":"number"}}}`,
		func(a map[string]any) *mcp.CallToolResult {
			secs, _ := a["seconds"].(float64)
			time.Sleep(time.Duration(secs * float64(time.Second)))
			return text("done")
		})
	add("garbage", "Write garbage to stdout, then answer.", noArgs, func(map[string]any) *mcp.CallToolResult {
		fmt.Println("<html>this is not JSON-RPC</html>")
		return text("wrote garbage")
	})
	add("spawn", "Start a long-lived grandchild whose argv[0] is the given marker.", `{"type":"object","properties":{"marker":{"type":"string"}}}`,
		func(a map[string]any) *mcp.CallToolResult {
			cmd := exec.Command("bash", "-c", `exec -a "$0" sleep 300`, fmt.Sprint(a["marker"]))
			if err := cmd.Start(); err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
			}
			return text(fmt.Sprintf("spawned pid %d", cmd.Process.Pid))
		})
	add("big", "Answer with the given number of MiB of text.", `{"type":"object","properties":{"mib":{"type":"number"}}}`,
		func(a map[string]any) *mcp.CallToolResult {
			mib, _ := a["mib"].(float64)
			return text(strings.Repeat("x", int(mib*(1<<20))))
		})
	out := &stdout{}
	add("bye", "Answer, then exit at once (a server that ends its own session).", noArgs, func(map[string]any) *mcp.CallToolResult {
		out.bye.Store(true) // exit once the answer is written
		return text("bye")
	})
	add("fail", "Report a tool error.", noArgs, func(map[string]any) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the widget is broken"}}}
	})
	if err := s.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: out}); err != nil {
		fmt.Fprintln(os.Stderr, "faultserver:", err)
		os.Exit(exitServeFailed)
	}
}

// stdout is the server's stdout. Once the bye tool armed it, the frame
// that carries bye's answer is the last thing the server writes: it exits
// right after writing it, the way a server that ends its own session does.
// (A timer started in the tool's handler raced the SDK's write of the
// answer: on a loaded machine the server exited first, and the call it had
// handled went unanswered.)
type stdout struct{ bye atomic.Bool }

func (w *stdout) Write(p []byte) (int, error) {
	n, err := os.Stdout.Write(p)
	if w.bye.Load() && bytes.Contains(p, []byte(`"text":"bye"`)) {
		fmt.Fprintln(os.Stderr, "faultserver: done, exiting")
		os.Exit(exitDone)
	}
	return n, err
}

func (w *stdout) Close() error { return os.Stdout.Close() }
