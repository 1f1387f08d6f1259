package mcp

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadImportSource(t *testing.T) {
	t.Parallel()
	var hint bytes.Buffer
	data, name, err := ReadImportSource(context.Background(), "-", strings.NewReader(`{"mcpServers":{}}`), &hint)
	if err != nil || name != "stdin" || string(data) != `{"mcpServers":{}}` || !strings.Contains(hint.String(), "Ctrl-D") {
		t.Errorf("stdin: %q, %q, %v, hint %q", data, name, err, hint.String())
	}
	big := strings.NewReader(strings.Repeat("x", 2<<20))
	if data, _, _ := ReadImportSource(context.Background(), "-", big, nil); len(data) != 1<<20 {
		t.Errorf("stdin is read up to 1 MiB, got %d bytes", len(data))
	}
	p := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	if err := os.WriteFile(p, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, name, err := ReadImportSource(context.Background(), p, nil, nil); err != nil || name != p || string(data) != `{"a":1}` {
		t.Errorf("a file: %q, %q, %v", data, name, err)
	}
	missing := filepath.Join(t.TempDir(), "none.json")
	if _, _, err := ReadImportSource(context.Background(), missing, nil, nil); err == nil || !strings.HasPrefix(err.Error(), "read "+missing+": ") {
		t.Errorf("a missing file: %v", err)
	}
}
