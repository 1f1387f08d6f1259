package selftest

import (
	"os"
	"path/filepath"
	"strings"
)

// PathFiles is the row of hush's in-process file tools (read, grep): no
// sandbox protects them, so the audit checks that they refuse the masked
// paths themselves — the project's .env family, a symlink from the project
// to the vault file, the vault by its own path — and that they still read
// what they may (the positive control).
const PathFiles = "read/grep"

// The files planted for the file-tools row, relative to the project.
const (
	fileLink      = "notes.txt" // a symlink to the vault file
	fileDotLocal  = ".env.local"
	filePublic    = "README" // readable: the positive control
	publicMarker  = "made to look into"
	maskedMessage = "masked:"
)

// plantFileTargets adds what the file-tools row reads to a world.
func plantFileTargets(w *world, c canaries) error {
	if err := os.WriteFile(filepath.Join(w.project, fileDotLocal), []byte("AUDIT_DOTENV_LOCAL="+c[cDotEnv]+"\n"), 0o600); err != nil {
		return err
	}
	return os.Symlink(filepath.Join(w.dataDir, "vault.env"), filepath.Join(w.project, fileLink))
}

type fileCall struct {
	name string
	args map[string]any
	// masked: the call must be refused; otherwise it is the positive control.
	masked bool
}

// fileToolCalls are the model's calls for the file-tools row.
func fileToolCalls(dataDir string) []fileCall {
	return []fileCall{
		{"read", map[string]any{"path": ".env"}, true},
		{"read", map[string]any{"path": fileDotLocal}, true},
		{"read", map[string]any{"path": fileLink}, true},
		{"read", map[string]any{"path": filepath.Join(dataDir, "vault.env")}, true},
		{"grep", map[string]any{"pattern": "AUDIT_", "path": fileLink}, true},
		{"grep", map[string]any{"pattern": "AUDIT_", "path": dataDir}, true},
		{"read", map[string]any{"path": filePublic}, false},
		{"grep", map[string]any{"pattern": publicMarker}, false},
	}
}

// isFileTool maps the file tools to their row.
func isFileTool(name string) bool {
	switch name {
	case "read", "grep", "glob", "write", "edit":
		return true
	}
	return false
}

// fileCells checks the file-tools row: every masked call refused with no
// canary in its result, the tree-wide grep (which walks past the .env
// files and the symlink) found nothing secret, and the positive controls
// read the public file.
func (r *runResult) fileCells(c canaries) map[string]Cell {
	cells := map[string]Cell{}
	results := r.results[PathFiles]
	output := strings.Join(results, "\n")
	for _, v := range []string{VecEnv, VecEnviron, VecMem, VecCmdline} {
		cells[v] = notApplicable("an in-process tool starts no process")
	}
	cells[VecOutput] = c.check(output, cEnvPlain)
	cells[VecTranscript] = c.check(r.transcript, cEnvPlain)
	cells[VecAuditLog] = c.check(r.audit, cEnvPlain)
	calls := fileToolCalls(r.w.dataDir)
	if len(results) != len(calls) {
		why := r.runErr
		if why == "" {
			why = "the file tools did not all run"
		}
		cells[VecFiles] = Cell{Status: "FAIL", Detail: why}
		cells[VecGranted] = Cell{Status: "FAIL", Detail: why}
		return cells
	}
	cells[VecFiles] = pass()
	cells[VecGranted] = pass()
	for i, call := range calls {
		res := results[i]
		what := call.name
		if p, ok := call.args["path"].(string); ok {
			what += " " + p
		}
		switch {
		case call.masked && len(c.find(res)) > 0:
			cells[VecFiles] = leak(c.find(res))
			return cells
		case call.masked && !strings.Contains(res, maskedMessage) && cells[VecFiles].Status == "pass":
			cells[VecFiles] = Cell{Status: "FAIL", Detail: what + " was not refused as masked"}
		case !call.masked && !strings.Contains(res, publicMarker):
			cells[VecGranted] = Cell{Status: "FAIL", Detail: what + " did not read the public file, so the refusals may prove nothing"}
		}
	}
	return cells
}
