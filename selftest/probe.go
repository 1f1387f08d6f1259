package selftest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The probe is hush itself, run as `hush __probe` by a tool under test. It
// reports what that tool could see, encoded (encode.go) so the redactor
// between the tool and the audit does not hide a leak (it scrubs a value's
// literal, base64, URL and hex forms): the audit decodes the report and
// looks for its canaries. The probe never learns a canary; it only copies bytes.

// probeMarker starts the report line in a tool's output.
const probeMarker = "HUSH-PROBE "

// canaryPrefix starts every canary; the probe searches the agent's memory
// for it, so a readable memory is reported with the canaries it holds.
const canaryPrefix = "hushcanary-"

// ProbeReport is what one probe saw. Each field is the raw bytes encoded
// by encodeRaw, or "!" followed by why they could not be read.
type ProbeReport struct {
	UID          int               `json:"uid"`
	Env          string            `json:"env"`
	Files        map[string]string `json:"files"`
	AgentEnviron string            `json:"agent_environ"`
	AgentMem     string            `json:"agent_mem"`
	// Granted is the SHA-256 of the granted variable: the positive control,
	// comparable without the value ever being printed.
	Granted string `json:"granted"`
}

// ProbeOptions say what to look at.
type ProbeOptions struct {
	// Env is the environment the probe was started with. The probe is hush,
	// whose start-up guard hides its environment from /proc/self/environ,
	// so the caller passes the guard's snapshot.
	Env        map[string]string
	AgentPID   int
	Files      []string
	GrantedVar string
}

// RunProbe looks at everything a tool process can read.
func RunProbe(o ProbeOptions) ProbeReport {
	r := ProbeReport{UID: os.Getuid(), Files: map[string]string{}}
	var env bytes.Buffer
	for k, v := range o.Env {
		env.WriteString(k + "=" + v + "\x00")
	}
	r.Env = encodeRaw(env.Bytes())
	if v, ok := o.Env[o.GrantedVar]; ok && o.GrantedVar != "" {
		sum := sha256.Sum256([]byte(v))
		r.Granted = hex.EncodeToString(sum[:])
	}
	for _, f := range o.Files {
		data, err := os.ReadFile(f)
		r.Files[f] = hexOr(data, err)
	}
	if o.AgentPID > 0 {
		o.AgentPID = pastReaper(o.AgentPID)
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", o.AgentPID))
		r.AgentEnviron = hexOr(data, err)
		found, err := scanMemory(o.AgentPID, []byte(canaryPrefix), 64, 16)
		r.AgentMem = hexOr(found, err)
	}
	return r
}

// pastReaper is pid, or, when pid is the reaper the spawn layer runs a
// tool under where there is no sandbox (argv[0] "hush-reaper"), the
// process that started it: hush, whose environ and memory are the ones
// the agent columns are about.
func pastReaper(pid int) int {
	cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	argv0, _, _ := strings.Cut(string(cl), "\x00")
	if filepath.Base(argv0) != "hush-reaper" {
		return pid
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return pid
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 2 {
		return pid
	}
	if ppid, err := strconv.Atoi(f[1]); err == nil && ppid > 1 {
		return ppid
	}
	return pid
}

// Line renders the report as one output line.
func (r ProbeReport) Line() string {
	b, _ := json.Marshal(r)
	return probeMarker + string(b)
}

// ParseProbeLines finds every probe report in a tool's output.
func ParseProbeLines(output string) []ProbeReport {
	var out []ProbeReport
	for _, line := range strings.Split(output, "\n") {
		i := strings.Index(line, probeMarker)
		if i < 0 {
			continue
		}
		var r ProbeReport
		if json.Unmarshal([]byte(line[i+len(probeMarker):]), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

func hexOr(data []byte, err error) string {
	if err != nil {
		return "!" + err.Error()
	}
	return encodeRaw(data)
}

// scanMemory reads the writable mappings of pid through /proc/pid/mem and
// returns, for each occurrence of needle, the needle and the n bytes after
// it, at most max of them (a few prove the point, and the report must fit
// in what a tool result carries). PR_SET_DUMPABLE 0 makes the open fail for a same-user, unprivileged
// reader: that failure is the pass.
func scanMemory(pid int, needle []byte, n, max int) ([]byte, error) {
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer maps.Close()
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	var found []byte
	// Each mapping is read in chunks, so a large one (a Go heap grown past
	// 64 MiB) is read too, up to a bound on the whole.
	const maxTotal = 1 << 30
	total := int64(0)
	sc := bufio.NewScanner(maps)
	readable := false
	hits := 0
	buf := make([]byte, 1<<20)
	for sc.Scan() && hits < max && total < maxTotal {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !strings.HasPrefix(f[1], "rw") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		for a := start; a < end && hits < max && total < maxTotal; a += uint64(len(buf)) {
			size := min(uint64(len(buf)), end-a)
			k, err := mem.ReadAt(buf[:size], int64(a))
			if err != nil && err != io.EOF && k == 0 {
				break
			}
			readable = true
			total += int64(k)
			chunk := buf[:k]
			for off := 0; hits < max; hits++ {
				i := bytes.Index(chunk[off:], needle)
				if i < 0 {
					break
				}
				j := off + i
				e := min(len(chunk), j+len(needle)+n)
				found = append(found, chunk[j:e]...)
				found = append(found, '\n')
				off = j + len(needle)
			}
		}
	}
	if !readable {
		return nil, fmt.Errorf("no mapping of pid %d could be read", pid)
	}
	return found, nil
}

// ServeProbeMCP runs a minimal stdio MCP server with one tool, "probe",
// whose result is the probe report of this server process: how hush's MCP
// spawn path launched it, and what it can read of the agent (its parent).
func ServeProbeMCP(ctx context.Context, o ProbeOptions) error {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hush-audit-probe", Version: "1"}, nil)
	type none struct{}
	mcp.AddTool(srv, &mcp.Tool{Name: "probe", Description: "report what this MCP server process can see"},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			opts := o
			opts.AgentPID = os.Getppid()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: RunProbe(opts).Line()}}}, nil, nil
		})
	return srv.Run(ctx, &mcp.StdioTransport{})
}
