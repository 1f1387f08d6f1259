package mcp_test

import (
	"testing"

	"github.com/hushcli/hush/toolset/mcp"
)

func TestCheckKnown(t *testing.T) {
	t.Parallel()
	servers := []mcp.Server{{Name: "a"}, {Name: "b"}}
	if err := mcp.CheckKnown(servers, "a"); err != nil {
		t.Error(err)
	}
	if err := mcp.CheckKnown(servers, "z"); err == nil || err.Error() != `no MCP server "z" (configured: a, b)` {
		t.Errorf("unknown: %v", err)
	}
	if err := mcp.CheckKnown(nil, "z"); err == nil || err.Error() != `no MCP server "z": none is configured` {
		t.Errorf("none: %v", err)
	}
}

// `hush mcp list --no-start` shows a remote server by its URL (without its
// query) and transport, as the started list does.
func TestConfiguredShowsARemoteServersURL(t *testing.T) {
	t.Parallel()
	st := mcp.Configured([]mcp.Server{{Name: "linear", URL: "https://mcp.linear.app/mcp?k=v", OAuth: true}})
	if len(st) != 1 || st[0].Command != "https://mcp.linear.app/mcp (http, oauth)" {
		t.Fatalf("configured %+v", st)
	}
}
