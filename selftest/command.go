package selftest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hushcli/hush/config"
)

// Command is `hush audit`: Options for the run, the user's dirs and
// project for the configuration risks, and how to print the report.
type Command struct {
	Options
	ProjectDir, ConfigDir, DataDir string
	JSON                           bool
	// Progress gets one line before the run (not with JSON); may be nil.
	Progress io.Writer
}

// Run runs the audit, adds the configuration risks, and prints the report
// to w (as JSON with c.JSON). A leak is an error carrying the verdict.
func (c Command) Run(ctx context.Context, w io.Writer) error {
	if !c.JSON && c.Progress != nil {
		fmt.Fprintln(c.Progress, "hush audit: planting canaries and running every spawn path…")
	}
	rep, err := Run(ctx, c.Options)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	parentEnv, _ := os.ReadFile(filepath.Join("/proc", fmt.Sprint(os.Getppid()), "environ"))
	mcpJSON, _ := config.LoadMCPJSON(filepath.Join(c.ConfigDir, config.MCPFileName))
	rep.Risks = Risks(RiskInput{Config: c.User, ProjectDir: c.ProjectDir, ConfigDir: c.ConfigDir, DataDir: c.DataDir, ParentEnviron: parentEnv, MCPJSON: mcpJSON,
		Home: c.Ambient["HOME"], Executable: c.Hush, PathEnv: c.Ambient["PATH"]})
	return rep.Print(w, c.JSON)
}

// Print writes the report to w, as indented JSON or for a person; a
// report that is not OK is an error carrying its verdict.
func (r *Report) Print(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		r.Render(w)
	}
	if !r.OK() {
		return errors.New(r.Verdict)
	}
	return nil
}
