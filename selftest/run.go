package selftest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hushcli/hush/config"
	"github.com/hushcli/hush/tools/sandbox"
)

// Options configure one audit.
type Options struct {
	// Hush is the hush binary to start as the agent under test.
	Hush string
	// Ambient is the auditing hush's start-up environment snapshot (PATH,
	// DOCKER_HOST and the like are passed on to the agent under test).
	Ambient map[string]string
	// User is the user's config: its tool policies and [unsafe] settings are
	// what the audit tests.
	User config.Config
	// Docker includes the docker-bash path.
	Docker bool
	// NoSandbox writes [unsafe] no_sandbox = true into the agent under
	// test's config (`hush audit --sandbox off`): the attack rows must then
	// turn red, proving they can.
	NoSandbox bool
	// Timeout bounds each agent run (default 60s).
	Timeout time.Duration
}

// Row is one spawn path's results.
type Row struct {
	Path  string          `json:"path"`
	Cells map[string]Cell `json:"cells"`
}

// Report is the audit's outcome.
type Report struct {
	Rows []Row `json:"rows"`
	// Attacks are the hostile turn's rows (attack.go).
	Attacks    []AttackRow `json:"attacks"`
	Leaks      int         `json:"leaks"`
	Failed     int         `json:"failed"`
	NotChecked int         `json:"not_checked"`
	Verdict    string      `json:"verdict"`
	Risks      []string    `json:"risks"`
	// Protections are the host sandbox's protections where the kernel
	// refuses its namespaces (protections.go): each one missing fails.
	Protections []ProtectionRow `json:"protections,omitempty"`
}

// OK reports whether nothing leaked and every positive control arrived.
func (r *Report) OK() bool { return r.Leaks == 0 && r.Failed == 0 }

// unprivileged is the uid and gid the agent under test runs as when the
// audit runs as root: root reads any process's memory, so a same-user
// protection can only be checked between two ordinary processes.
const unprivileged = 65534

// Run performs the audit.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	root, err := os.MkdirTemp("", "hush-audit-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	c := newCanaries()
	paths := []string{PathBash, PathBackground, PathMCP, PathFiles}
	_, dockerConfigured := o.User.Tools[PathDocker]
	if o.Docker && dockerConfigured {
		paths = append(paths, PathDocker)
	}

	main, err := o.runWorld(ctx, filepath.Join(root, "a"), c, paths, nil)
	if err != nil {
		return nil, err
	}
	var lowered *runResult
	if os.Geteuid() == 0 {
		if err := os.Chmod(root, 0o711); err != nil {
			return nil, err
		}
		cred := &syscall.Credential{Uid: unprivileged, Gid: unprivileged, Groups: []uint32{}}
		lowered, err = o.runWorld(ctx, filepath.Join(root, "b"), c, []string{PathBash, PathBackground, PathMCP}, cred)
		if err != nil {
			return nil, err
		}
	}

	rep := &Report{}
	for _, p := range paths {
		row := Row{Path: p, Cells: main.cells(p, c)}
		if lowered != nil && p != PathDocker && p != PathFiles {
			// Root reads every process's memory; the memory check that
			// means something is the unprivileged run's.
			low := lowered.cells(p, c)
			row.Cells[VecMem] = low[VecMem]
			row.Cells[VecEnviron] = worst(row.Cells[VecEnviron], low[VecEnviron])
		} else if os.Geteuid() == 0 && p != PathDocker && p != PathFiles {
			row.Cells[VecMem] = skip("running as root, which can read any process's memory")
		}
		if p == PathDocker {
			row.Cells[VecMem] = notApplicable("a container cannot see host processes")
			row.Cells[VecEnviron] = notApplicable("a container cannot see host processes")
		}
		for _, cell := range row.Cells {
			switch cell.Status {
			case "LEAK":
				rep.Leaks++
			case "FAIL":
				rep.Failed++
			}
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.Attacks, err = o.attacks(ctx, root)
	if err != nil {
		return nil, err
	}
	for _, row := range rep.Attacks {
		for _, cell := range row.Cells {
			switch cell.Status {
			case "LEAK":
				rep.Leaks++
			case "FAIL":
				rep.Failed++
			case "not checked":
				rep.NotChecked++
			}
		}
	}
	rep.Protections = protectionRows(sandbox.Status(), o.NoSandbox)
	for _, p := range rep.Protections {
		if p.Status == "FAIL" {
			rep.Failed++
		}
	}
	if o.Docker && !dockerConfigured {
		row := Row{Path: PathDocker, Cells: map[string]Cell{}}
		for _, v := range Vectors {
			row.Cells[v] = skip("docker-bash is not configured: add [tools.dockerbash] with an image to config.toml")
		}
		rep.Rows = append(rep.Rows, row)
	}
	switch {
	case rep.Leaks > 0:
		rep.Verdict = fmt.Sprintf("LEAK: %d check(s) found a planted secret where it must not be", rep.Leaks)
	case rep.Failed > 0:
		rep.Verdict = fmt.Sprintf("FAILED: %d check(s) could not run as planned, so they prove nothing", rep.Failed)
		if n := len(rep.Protections); n > 0 {
			rep.Verdict = fmt.Sprintf("FAILED: %d check(s) failed: the kernel refuses the sandbox's namespaces, and the protections marked FAIL above are missing here", rep.Failed)
		}
	case rep.NotChecked > 0:
		rep.Verdict = fmt.Sprintf("pass where checked, but %d attack check(s) were not checked (see the notes), so they prove nothing", rep.NotChecked)
	default:
		rep.Verdict = "pass: no planted secret reached a tool, a log or the model except where granted, and then redacted; no attack recovered one"
	}
	return rep, nil
}

func worst(a, b Cell) Cell {
	rank := map[string]int{"n/a": 0, "skip": 1, "pass": 2, "FAIL": 3, "LEAK": 4}
	if rank[b.Status] > rank[a.Status] {
		return b
	}
	return a
}

// runResult is what one run of the agent under test produced.
type runResult struct {
	w          *world
	results    map[string][]string // path -> tool results (redacted text the model saw)
	errs       map[string]string   // path -> first error line, when a path could not run
	cmdlines   map[string][]string // path -> canary labels seen in a command line
	transcript string
	audit      string
	runErr     string
	// mcpWarnings is what the agent said on stderr of MCP servers it
	// could not start.
	mcpWarnings []string
}

// runWorld lays out a world and runs the agent under test once.
func (o Options) runWorld(ctx context.Context, dir string, c canaries, paths []string, cred *syscall.Credential) (*runResult, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	bin := o.Hush
	if cred != nil {
		// The unprivileged agent must be able to run the binary and own its
		// world.
		bin = filepath.Join(dir, "hush")
		if err := copyFile(o.Hush, bin, 0o755); err != nil {
			return nil, err
		}
	}
	w, err := build(dir, bin, c, o, paths)
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := chownTree(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd, err := w.agentCommand(runCtx, bin, "audit every spawn path", cred, &stdout, &stderr)
	if err != nil {
		return nil, err
	}
	scan := newCmdlineScanner(c)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the agent under test: %w", err)
	}
	stop := scan.start()
	runErr := cmd.Wait()
	stop()
	r := &runResult{w: w, results: map[string][]string{}, errs: map[string]string{}, cmdlines: scan.byPath()}
	if runErr != nil {
		r.runErr = strings.TrimSpace(firstLine(stderr.String()) + " " + runErr.Error())
	}
	r.mcpWarnings = mcpWarnings(stderr.String())
	r.parseEvents(stdout.Bytes())
	r.transcript = readAll(filepath.Join(w.dataDir, "transcripts"))
	r.audit = readAll(filepath.Join(w.dataDir, "audit.jsonl"))
	return r, nil
}

// parseEvents sorts the --json tool results (docs/events.schema.json) by path.
func (r *runResult) parseEvents(out []byte) {
	names := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			CallID  string `json:"call_id"`
			Name    string `json:"name"`
			Result  string `json:"result"`
			IsError bool   `json:"is_error"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Type {
		case "tool.started":
			names[ev.CallID] = ev.Name
		case "tool.finished":
			p := pathOf(names[ev.CallID])
			r.results[p] = append(r.results[p], ev.Result)
			if ev.IsError && r.errs[p] == "" {
				r.errs[p] = firstLine(ev.Result)
			}
		}
	}
}

func pathOf(tool string) string {
	switch {
	case tool == "bash":
		return PathBash
	case tool == "background":
		return PathBackground
	case tool == "dockerbash":
		return PathDocker
	case strings.HasPrefix(tool, "mcp"):
		return PathMCP
	case isFileTool(tool):
		return PathFiles
	}
	return tool
}

// cells checks one path's vectors.
func (r *runResult) cells(p string, c canaries) map[string]Cell {
	if p == PathFiles {
		return r.fileCells(c)
	}
	cells := map[string]Cell{}
	output := strings.Join(r.results[p], "\n")
	probes := ParseProbeLines(output)
	for _, v := range Vectors {
		cells[v] = skip("the path did not run")
	}
	// Tool output, transcript and audit log are checked whatever happened.
	// The plain innocent-named variable is not a secret by hush's rules;
	// only the agent's own environ must hide it.
	cells[VecOutput] = c.check(output, cEnvPlain)
	cells[VecTranscript] = c.check(r.transcript, cEnvPlain)
	cells[VecAuditLog] = c.check(r.audit, cEnvPlain)
	if labels := r.cmdlines[p]; len(labels) > 0 {
		cells[VecCmdline] = leak(labels)
	} else {
		cells[VecCmdline] = pass()
	}
	if len(probes) == 0 {
		why := r.errs[p]
		if why == "" {
			why = r.runErr
		}
		if why == "" {
			why = "the probe did not report"
		}
		if p == PathMCP && len(r.mcpWarnings) > 0 {
			// A probe server that did not start says why.
			why += " (" + strings.Join(r.mcpWarnings, "; ") + ")"
		}
		for _, v := range []string{VecEnv, VecFiles, VecEnviron, VecMem} {
			cells[v] = skip(why)
		}
		if p == PathDocker {
			cells[VecGranted] = skip(why)
		} else {
			cells[VecGranted] = Cell{Status: "FAIL", Detail: why}
		}
		return cells
	}
	pr := probes[0]
	allowEnv := []string{cGranted, cEnvPlain}
	if p == PathMCP {
		allowEnv = append(allowEnv, cMCPLiteral) // the server's own configured env
	}
	cells[VecEnv] = checkHex(c, pr.Env, allowEnv...)
	if p == PathDocker {
		cells[VecFiles] = checkHex(c, pr.Files["/app/.env"])
	} else {
		cells[VecFiles] = notApplicable("a host tool reads any file you can; the output column shows .env redacted")
	}
	cells[VecEnviron] = checkHex(c, pr.AgentEnviron)
	cells[VecMem] = checkHex(c, pr.AgentMem)
	if pr.Granted == sha(c[cGranted]) {
		cells[VecGranted] = pass()
	} else {
		cells[VecGranted] = Cell{Status: "FAIL", Detail: "the granted secret did not arrive, so the other checks may prove nothing"}
	}
	return cells
}

// checkHex decodes a probe field; a field the probe could not read passes
// (the protection held), with the reason as detail.
func checkHex(c canaries, field string, allowed ...string) Cell {
	if strings.HasPrefix(field, "!") {
		return Cell{Status: "pass", Detail: "not readable: " + shortErr(field[1:])}
	}
	raw, err := decodeRaw(field)
	if err != nil {
		return Cell{Status: "FAIL", Detail: "the probe's report did not decode"}
	}
	return c.check(string(raw), allowed...)
}

func shortErr(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// cmdlineScanner watches every process's command line while the agent
// under test runs, and traces a hit to the path whose tagged script is the
// process or one of its ancestors.
//
// Tracing must not depend on the process still being there: a command
// line is read while the process runs, and the process (with the sandbox
// processes above it, which carry the same command line) may exit a moment
// later, its command line empty from then on. A hit traced by reading
// /proc again then reached no tag and counted against every path (the
// bash fault turned the background and mcp rows red too). So a hit is
// traced from the command line it was found in, and an ancestor whose
// command line is already gone by the path remembered for it.
type cmdlineScanner struct {
	c canaries
	// pids lists the processes and read returns /proc/PID/FILE (nil when
	// it cannot be read): the live /proc, or a test's process table.
	pids func() []int
	read func(pid int, file string) []byte
	mu   sync.Mutex
	hits map[string]map[string]bool
	// tagged is the path of each process seen with a tagged command line,
	// by pid, with its start time against a reused pid.
	tagged map[int]taggedProc
}

type taggedProc struct {
	start string
	path  string
}

func newCmdlineScanner(c canaries) *cmdlineScanner {
	return &cmdlineScanner{c: c, pids: procPids, read: procRead, hits: map[string]map[string]bool{}, tagged: map[int]taggedProc{}}
}

func procPids() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func procRead(pid int, file string) []byte {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	return b
}

func (s *cmdlineScanner) start() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			s.scanOnce()
			select {
			case <-done:
				s.scanOnce()
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (s *cmdlineScanner) scanOnce() {
	for _, pid := range s.pids() {
		cl := s.read(pid, "cmdline")
		if len(cl) == 0 {
			continue
		}
		if path, ok := pathTag(cl); ok {
			s.remember(pid, path)
		}
		labels := s.c.find(string(cl))
		if len(labels) == 0 {
			continue
		}
		path := s.trace(pid, cl)
		s.mu.Lock()
		if s.hits[path] == nil {
			s.hits[path] = map[string]bool{}
		}
		for _, l := range labels {
			s.hits[path][l] = true
		}
		s.mu.Unlock()
	}
}

// remember records that pid runs a script tagged with path.
func (s *cmdlineScanner) remember(pid int, path string) {
	if s.tagged[pid].path == path {
		return
	}
	if _, start, ok := s.stat(pid); ok {
		s.tagged[pid] = taggedProc{start: start, path: path}
	}
}

// stat returns pid's parent and start time.
func (s *cmdlineScanner) stat(pid int) (ppid int, start string, ok bool) {
	st := s.read(pid, "stat")
	i := bytes.LastIndexByte(st, ')')
	if i < 0 {
		return 0, "", false
	}
	// After the command's ")": state, ppid, ... starttime (field 22).
	f := strings.Fields(string(st[i+1:]))
	if len(f) < 20 {
		return 0, "", false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, f[19], err == nil
}

// trace returns the path of the first tagged process among pid, whose
// command line is cl, and its ancestors; "other" when there is none.
func (s *cmdlineScanner) trace(pid int, cl []byte) string {
	for i := 0; i < 16 && pid > 1; i++ {
		if i > 0 {
			cl = s.read(pid, "cmdline")
		}
		if path, ok := pathTag(cl); ok {
			return path
		}
		ppid, start, ok := s.stat(pid)
		if !ok {
			break
		}
		if t, ok := s.tagged[pid]; ok && t.start == start {
			return t.path
		}
		pid = ppid
	}
	return "other"
}

// pathTag returns the path a command line is tagged with: a script's tag,
// or the audit's probe MCP server.
func pathTag(cl []byte) (string, bool) {
	if i := bytes.Index(cl, []byte("hush-audit-path=")); i >= 0 {
		rest := cl[i+len("hush-audit-path="):]
		if j := bytes.IndexAny(rest, "; \x00"); j >= 0 {
			return string(rest[:j]), true
		}
	}
	if bytes.Contains(cl, []byte("__probe\x00--mcp")) {
		return PathMCP, true
	}
	return "", false
}

func (s *cmdlineScanner) byPath() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for p, set := range s.hits {
		for l := range set {
			out[p] = append(out[p], l)
		}
		sort.Strings(out[p])
	}
	// A hit that cannot be traced counts against every path.
	if other := out["other"]; len(other) > 0 {
		for _, p := range []string{PathBash, PathBackground, PathMCP, PathDocker} {
			out[p] = append(out[p], other...)
		}
	}
	return out
}

func envMap(kv []string) map[string]string {
	m := map[string]string{}
	for _, e := range kv {
		if k, v, ok := strings.Cut(e, "="); ok {
			m[k] = v
		}
	}
	return m
}

func readAll(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if !fi.IsDir() {
		b, _ := os.ReadFile(path)
		return string(b)
	}
	var b strings.Builder
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(path, e.Name()))
		b.Write(data)
	}
	return b.String()
}

// mcpWarnings picks the lines of an agent's stderr that speak of an MCP
// server (hush says there why one did not start).
func mcpWarnings(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(strings.ToLower(line), "mcp server") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// copyFile copies the hush binary into a world. It is written under
// syscall.ForkLock's read lock: a child forked meanwhile (by os/exec or
// the sandbox, which both hold its write side) would hold the copy open
// for writing until it execs, and running the copy then fails with "text
// file busy" (golang/go#22315).
func copyFile(src, dst string, mode os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func chownTree(root string, uid, gid int) error {
	return filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}
