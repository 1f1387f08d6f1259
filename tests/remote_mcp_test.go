package tests

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkingServer is a remote MCP server of the test's own (the Go SDK's,
// Streamable HTTP, on 127.0.0.1) that serves only requests whose X-Api-Key
// is want, and records the raw value of every one it was sent.
type checkingServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newCheckingServer(t *testing.T, want string) *checkingServer {
	t.Helper()
	cs := &checkingServer{}
	server := sdk.NewServer(&sdk.Implementation{Name: "checking", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "whoami", Description: "says who is asking"},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the key was right"}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	cs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-Api-Key")
		cs.mu.Lock()
		cs.seen = append(cs.seen, got)
		cs.mu.Unlock()
		if got != want {
			http.Error(w, "wrong key "+got, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(cs.srv.Close)
	return cs
}

func (c *checkingServer) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

// TestRemoteMCPHeaderPassesTheGate: a remote server's ${GRANTED} header is
// read through the gate as mcp:remote; granted, the server receives exactly
// the value and the model gets its tool's result; the value is in no event,
// message, transcript or audit line. Denied, the server is never contacted.
func TestRemoteMCPHeaderPassesTheGate(t *testing.T) {
	t.Parallel()
	for _, grant := range []bool{true, false} {
		t.Run(fmt.Sprintf("granted=%v", grant), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			cs := newCheckingServer(t, w.granted)
			model := newFakeModel(t, step{calls: []fakeCall{{"mcp__remote__whoami", map[string]any{}}}}, step{text: "asked"})
			rules := "[[rules]]\ngate = \"tool.run:mcp__remote__*\"\nsubject = \"*\"\ndecision = \"allow\"\n"
			if grant {
				rules += "[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"mcp:remote\"\ndecision = \"allow\"\n"
			}
			w.fakeModelConfig(model, rules+fmt.Sprintf("[mcp.remote]\nurl = %q\nheaders = { X-Api-Key = \"${GRANTED}\" }\n", cs.srv.URL+"/mcp"))
			evs, stderr, code := runJSON(t, w, "run", "--json", "who am i")
			w.assertNoCanary("the transcript", w.transcripts())
			w.assertNoCanary("the audit log", w.audit())
			// The server's start-up read is in the stream, after session.started.
			if len(evs) < 2 || evs[0].str("type") != "session.started" || evs[1].str("type") != "permission" ||
				evs[1].str("gate") != "vault.read:GRANTED" || evs[1].str("subject") != "mcp:remote" || evs[1]["turn"] != float64(0) ||
				(evs[1].str("decision") == "allow") != grant {
				t.Errorf("the stream does not start with the server's gate decision: %v", evs[:min(len(evs), 2)])
			}
			if !grant {
				if code != 3 {
					t.Errorf("exit %d, want 3 (a start-up secret was denied)", code)
				}
				if n := len(cs.requests()); n != 0 {
					t.Fatalf("the denied server was sent %d request(s)", n)
				}
				if !strings.Contains(stderr, `mcp server "remote" not started: vault.read:GRANTED for mcp:remote is denied`) {
					t.Errorf("stderr does not say why the server was not used:\n%s", stderr)
				}
				if !strings.Contains(w.audit(), `"tool":"mcp:remote","gate":"vault.read:GRANTED","decision":"deny"`) {
					t.Errorf("the audit log lacks the denial:\n%s", w.audit())
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for i, got := range cs.requests() {
				if got != w.granted { // positive control, on the raw header
					t.Errorf("request %d carried X-Api-Key %q", i, got)
				}
			}
			f := ofType(evs, "tool.finished")
			if len(f) != 1 || f[0].str("status") != "ok" || !strings.Contains(f[0].str("result"), "the key was right") {
				t.Fatalf("tool.finished %v", f)
			}
			tools := ofType(evs, "session.started")[0]["tools"].([]any)
			if !strings.Contains(fmt.Sprint(tools), "mcp__remote__whoami") {
				t.Errorf("session.started tools %v", tools)
			}
		})
	}
}

// TestRemoteMCPEverything: the reference server from npm, started in its
// streamableHttp and its sse mode on 127.0.0.1, serves a tool call.
func TestRemoteMCPEverything(t *testing.T) {
	t.Parallel()
	bin := everythingBin(t)
	for _, tc := range []struct{ mode, path, typ, ready string }{
		{"streamableHttp", "/mcp", "http", "listening on port"},
		{"sse", "/sse", "sse", "running on port"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			port := freePort(t)
			srv := exec.Command(bin, tc.mode)
			srv.Env = []string{"PATH=" + os.Getenv("PATH"), "PORT=" + port, "HOME=" + w.home}
			stderr, err := srv.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
			ready := make(chan struct{})
			go func() {
				sc := bufio.NewScanner(stderr)
				once := sync.Once{}
				for sc.Scan() {
					if strings.Contains(sc.Text(), tc.ready) {
						once.Do(func() { close(ready) })
					}
				}
			}()
			select {
			case <-ready:
			case <-time.After(30 * time.Second):
				t.Fatalf("server-everything did not start its %s server", tc.mode)
			}
			model := newFakeModel(t, step{calls: []fakeCall{{"mcp__everything__echo", map[string]any{"message": "over-" + tc.typ}}}}, step{text: "echoed"})
			w.fakeModelConfig(model, "[[rules]]\ngate = \"tool.run:mcp__everything__*\"\nsubject = \"*\"\ndecision = \"allow\"\n"+
				"[[rules]]\ngate = \"vault.read:GRANTED\"\nsubject = \"mcp:everything\"\ndecision = \"allow\"\n"+
				fmt.Sprintf("[mcp.everything]\nurl = \"http://127.0.0.1:%s%s\"\ntype = %q\nheaders = { Authorization = \"Bearer ${GRANTED}\" }\n", port, tc.path, tc.typ))
			evs, errOut, code := runJSON(t, w, "run", "--json", "echo it")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			f := ofType(evs, "tool.finished")
			if len(f) != 1 || f[0].str("status") != "ok" || !strings.Contains(f[0].str("result"), "Echo: over-"+tc.typ) {
				t.Fatalf("tool.finished %v\nstderr %s", f, errOut)
			}
			out, err := runHush(w, "mcp", "list")
			if err != nil || !strings.Contains(out, "running  14") || !strings.Contains(out, "http://127.0.0.1:"+port+tc.path+" ("+tc.typ+")") {
				t.Errorf("mcp list (%v):\n%s", err, out)
			}
			w.assertNoCanary("mcp list", out)
		})
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
