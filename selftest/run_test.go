package selftest

import (
	"strings"
	"testing"
)

// TestMatrixMCPRowSaysWhyItsServerDidNotStart: when the probe MCP server
// of the first matrix did not start, the mcp row's cells carry what hush
// said of it on stderr, not only the model's "unknown tool".
func TestMatrixMCPRowSaysWhyItsServerDidNotStart(t *testing.T) {
	stderr := "hush: warning: something else\n" +
		`hush: mcp server "auditprobe" failed to start: exited during the MCP handshake (exit status 125); its stderr ends: hush sandbox: write gid_map: Permission denied` + "\n"
	r := &runResult{results: map[string][]string{}, errs: map[string]string{PathMCP: `error: unknown tool "mcp__auditprobe__probe"`},
		cmdlines: map[string][]string{}, mcpWarnings: mcpWarnings(stderr)}
	if len(r.mcpWarnings) != 1 {
		t.Fatalf("mcpWarnings picked %q, want the one mcp server line", r.mcpWarnings)
	}
	c := newCanaries()
	cell := r.cells(PathMCP, c)[VecGranted]
	if cell.Status != "FAIL" || !strings.Contains(cell.Detail, "unknown tool") || !strings.Contains(cell.Detail, "write gid_map: Permission denied") {
		t.Errorf("mcp/granted = %s (%s): want FAIL with the tool error and hush's reason", cell.Status, cell.Detail)
	}
	// Another path's cells do not borrow the MCP server's reason.
	r.errs[PathBash] = "error: boom"
	if cell := r.cells(PathBash, c)[VecGranted]; strings.Contains(cell.Detail, "gid_map") {
		t.Errorf("bash/granted = %s (%s): the MCP reason leaked into another row", cell.Status, cell.Detail)
	}
}
