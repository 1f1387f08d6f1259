package mcp

import (
	"context"
	"fmt"
	"io"

	"github.com/hushcli/hush/config/userfile"
)

// ReadImportSource reads what `hush mcp import SRC` imports: the file SRC,
// or at most 1 MiB of stdin for "-", and names the source for messages
// ("stdin" or SRC). hint, non-nil when stdin is a terminal, is told how to
// paste.
func ReadImportSource(ctx context.Context, src string, stdin io.Reader, hint io.Writer) (data []byte, name string, err error) {
	name = src
	if src == "-" {
		name = "stdin"
		if hint != nil {
			fmt.Fprintln(hint, "Paste the mcpServers JSON, then press Ctrl-D on an empty line.")
		}
		data, err = io.ReadAll(io.LimitReader(stdin, 1<<20))
	} else {
		data, err = userfile.Read(ctx, src, userfile.ConfigLimit)
	}
	if err != nil {
		return nil, name, fmt.Errorf("read %s: %w", src, err)
	}
	return data, name, nil
}
