package selftest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// procTable is a process table for the cmdlines scanner: each process's
// command line can be read reads times (-1: always); after that it reads
// empty, as an exiting process's does, while its stat stays.
type procTable map[int]*fakeProc

type fakeProc struct {
	ppid  int
	start string
	argv  []string
	reads int
}

func (pt procTable) scanner(c canaries) *cmdlineScanner {
	s := newCmdlineScanner(c)
	s.pids = func() []int {
		var pids []int
		for pid := 1; pid < 1000; pid++ {
			if pt[pid] != nil {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	s.read = func(pid int, file string) []byte {
		p := pt[pid]
		if p == nil {
			return nil
		}
		if file == "stat" {
			return []byte(fmt.Sprintf("%d (x) S %d%s %s 0 0", pid, p.ppid, strings.Repeat(" 0", 17), p.start))
		}
		if p.reads == 0 {
			return nil
		}
		if p.reads > 0 {
			p.reads--
		}
		return []byte(strings.Join(p.argv, "\x00") + "\x00")
	}
	return s
}

// A bash call that puts the granted value in its argv, as the
// secrets_in_argv fault does: hush-sandbox (outside the PID namespace),
// the namespace's init and bash all carry the tagged script and the value.
func sandboxedBash(c canaries, reads int) procTable {
	argv := []string{"hush-sandbox", "/bin/bash", "bash", "-c", tag(PathBash) + "probe; env", "bash", c[cGranted]}
	return procTable{
		10:  {ppid: 1, start: "100", argv: []string{"hush", "audit", "--json"}, reads: -1},
		20:  {ppid: 10, start: "200", argv: []string{"hush", "--dir", "/p", "run", "--json", "--yes", "audit every spawn path"}, reads: -1},
		300: {ppid: 20, start: "300", argv: argv, reads: reads},
		301: {ppid: 300, start: "301", argv: argv, reads: reads},
		302: {ppid: 301, start: "302", argv: argv[2:], reads: reads},
	}
}

func TestCmdlineHitOfAnExitingProcessStaysWithItsPath(t *testing.T) {
	c := newCanaries()
	// Each command line reads once: the scan finds the value in it, and
	// the process has exited by the time the hit is traced.
	s := sandboxedBash(c, 1).scanner(c)
	s.scanOnce()
	want := map[string][]string{PathBash: {cGranted}}
	if got := s.byPath(); !reflect.DeepEqual(got, want) {
		t.Errorf("cmdlines = %v, want %v", got, want)
	}
}

func TestCmdlineHitTracesThroughAnExitedAncestor(t *testing.T) {
	c := newCanaries()
	pt := sandboxedBash(c, 1)
	pt[302].argv = []string{"bash", "-c", tag(PathBash) + "probe"} // no value of its own
	s := pt.scanner(c)
	s.scanOnce() // sees the sandbox processes and bash while they run
	// A child of bash with the value in argv, seen once bash and the
	// sandbox processes above it are exiting (their command lines empty).
	pt[303] = &fakeProc{ppid: 302, start: "303", argv: []string{"curl", "-H", "Authorization: " + c[cGranted]}, reads: -1}
	s.scanOnce()
	// The sandbox processes' hits were found in the first scan.
	want := map[string][]string{PathBash: {cGranted}}
	if got := s.byPath(); !reflect.DeepEqual(got, want) {
		t.Errorf("cmdlines = %v, want %v", got, want)
	}

	// Only the child's own ancestry counts: once bash's pid is another
	// process's (another start time), the hit cannot be traced, and an
	// untraced hit counts against every path.
	pt = sandboxedBash(c, 0)
	s = pt.scanner(c)
	s.tagged[302] = taggedProc{start: "1", path: PathBackground}
	pt[303] = &fakeProc{ppid: 302, start: "303", argv: []string{"curl", c[cGranted]}, reads: -1}
	s.scanOnce()
	got := s.byPath()
	for _, p := range []string{PathBash, PathBackground, PathMCP, PathDocker} {
		if !reflect.DeepEqual(got[p], []string{cGranted}) {
			t.Errorf("%s/cmdlines = %v, want the untraced hit %v", p, got[p], []string{cGranted})
		}
	}
}

// Positive control of the tracing: each path's hit stays in its own row.
func TestCmdlineHitsStayInTheirRows(t *testing.T) {
	c := newCanaries()
	pt := sandboxedBash(c, -1)
	pt[400] = &fakeProc{ppid: 20, start: "400", argv: []string{"bash", "-c", tag(PathBackground) + "probe"}, reads: -1}
	pt[401] = &fakeProc{ppid: 400, start: "401", argv: []string{"sleep", c[cVault]}, reads: -1}
	pt[500] = &fakeProc{ppid: 20, start: "500", argv: []string{"/bin/hush", "__probe", "--mcp", c[cDotEnv]}, reads: -1}
	s := pt.scanner(c)
	s.scanOnce()
	want := map[string][]string{PathBash: {cGranted}, PathBackground: {cVault}, PathMCP: {cDotEnv}}
	if got := s.byPath(); !reflect.DeepEqual(got, want) {
		t.Errorf("cmdlines = %v, want %v", got, want)
	}
}
