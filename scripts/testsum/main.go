// Command testsum reads `go test -json` events and says what the suite did:
// each package's result as it finishes (the full output of whatever failed),
// then a table of tests passed, failed and skipped per package, every skip
// with its reason, the slowest tests, and last the closing line
// "N passed, N failed, N skipped" alone on a line.
//
// scripts/test records its other checks (gofmt, vet, staticcheck, each fuzz
// target) as events of the pseudo-package "checks" in the same stream, so the
// closing line counts them too.
//
// With -require, a skip whose reason starts with "needs COMPONENT" for a
// listed component counts as a failure: in CI the components scripts/provision
// sets up must be there, and a test that skips for want of one proves nothing.
//
// It exits 1 when anything failed, 0 otherwise. It reads only its input and
// flags, and starts nothing.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output, build-fail
	FailedBuild string
}

type testResult struct {
	pkg, name string
	action    string // pass, fail, skip, or "" when it never finished
	elapsed   float64
	output    []string
}

type pkgResult struct {
	name                 string
	action               string // pass, fail, skip ("no test files")
	elapsed              float64
	passed, failed, skip int
	output               []string // package-level output (build errors, panics, timeouts)
}

type summary struct {
	require  map[string]bool
	live     io.Writer              // each package's line as it ends
	out      io.Writer              // the closing report
	tests    map[string]*testResult // pkg + "\x00" + test
	order    []*testResult
	pkgs     map[string]*pkgResult
	pkgOrder []string
	builds   map[string][]string // import path -> build output
}

func main() {
	require := flag.String("require", "", "comma-separated components (as scripts/provision names them) whose absence fails a test that skips for it")
	progress := flag.Bool("progress", false, "print each package's result as it ends, and no closing report")
	quiet := flag.Bool("report", false, "print only the closing report")
	flag.Parse()
	s := newSummary(os.Stdout, *require)
	if *quiet {
		s.live = io.Discard
	}
	if *progress {
		s.out = io.Discard
	}
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(1)
	}
	if s.report() > 0 {
		os.Exit(1)
	}
}

func newSummary(out io.Writer, require string) *summary {
	s := &summary{require: map[string]bool{}, live: out, out: out, tests: map[string]*testResult{},
		pkgs: map[string]*pkgResult{}, builds: map[string][]string{}}
	for _, c := range strings.Split(require, ",") {
		if c = strings.TrimSpace(c); c != "" {
			s.require[c] = true
		}
	}
	return s
}

// read consumes the event stream, printing each package's result as it ends.
// Lines that are not JSON (a go command's own complaint) are printed as they are.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(s.live, string(line))
			continue
		}
		s.add(e)
	}
	return sc.Err()
}

func (s *summary) pkg(name string) *pkgResult {
	p := s.pkgs[name]
	if p == nil {
		p = &pkgResult{name: name}
		s.pkgs[name] = p
		s.pkgOrder = append(s.pkgOrder, name)
	}
	return p
}

func (s *summary) add(e event) {
	switch e.Action {
	case "build-output":
		s.builds[e.ImportPath] = append(s.builds[e.ImportPath], e.Output)
		return
	case "build-fail":
		return
	}
	if e.Package == "" {
		return
	}
	p := s.pkg(e.Package)
	if e.Test == "" {
		switch e.Action {
		case "output":
			p.output = append(p.output, e.Output)
		case "pass", "fail", "skip":
			p.action, p.elapsed = e.Action, e.Elapsed
			s.packageDone(p, e.FailedBuild)
		}
		return
	}
	key := e.Package + "\x00" + e.Test
	t := s.tests[key]
	if t == nil {
		t = &testResult{pkg: e.Package, name: e.Test}
		s.tests[key] = t
		s.order = append(s.order, t)
	}
	switch e.Action {
	case "output":
		t.output = append(t.output, e.Output)
	case "pass", "fail", "skip":
		t.action, t.elapsed = e.Action, e.Elapsed
		if e.Action == "skip" && s.required(t) != "" {
			t.action = "fail"
		}
	}
}

// packageDone counts a finished package's tests and prints its line, with the
// output of each failed test (or the package's own output when it failed
// without a failed test: a build error, a panic, a timeout).
func (s *summary) packageDone(p *pkgResult, failedBuild string) {
	var failed []*testResult
	for _, t := range s.order {
		if t.pkg != p.name {
			continue
		}
		switch t.action {
		case "pass":
			p.passed++
		case "skip":
			p.skip++
		default: // fail, or never finished (the binary died under it)
			p.failed++
			failed = append(failed, t)
		}
	}
	switch p.action {
	case "skip":
		fmt.Fprintf(s.live, "?    %s [no test files]\n", p.name)
		return
	case "fail":
		if len(failed) == 0 {
			p.failed++ // the package failed on its own: count it once
		}
	}
	word := "ok  "
	if p.failed > 0 {
		word = "FAIL"
	}
	fmt.Fprintf(s.live, "%s %s %.1fs (%d passed, %d failed, %d skipped)\n", word, p.name, p.elapsed, p.passed, p.failed, p.skip)
	for _, t := range failed {
		if t.action == "" {
			fmt.Fprintf(s.live, "--- %s did not finish\n", t.name)
		}
		if why := s.required(t); why != "" {
			fmt.Fprintf(s.live, "--- %s skipped, but %s is provisioned here (CI), so the skip is a failure\n", t.name, why)
		}
		for _, l := range t.output {
			fmt.Fprint(s.live, l)
		}
	}
	if p.action == "fail" && len(failed) == 0 {
		if failedBuild != "" {
			for _, l := range s.builds[failedBuild] {
				fmt.Fprint(s.live, l)
			}
		}
		for _, l := range p.output {
			fmt.Fprint(s.live, l)
		}
	}
}

// skipReason is the message the test gave t.Skip: its last log entry, the
// framing lines (=== RUN, --- SKIP) left out.
func skipReason(t *testResult) string {
	var entries []string
	for _, l := range t.output {
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == "",
			strings.HasPrefix(trimmed, "=== "),
			strings.HasPrefix(trimmed, "--- "):
			continue
		case strings.HasPrefix(l, "        ") && len(entries) > 0:
			// a continuation line of a multi-line log entry
			entries[len(entries)-1] += " " + trimmed
		default:
			entries = append(entries, trimmed)
		}
	}
	if len(entries) == 0 {
		return "(no reason given)"
	}
	r := entries[len(entries)-1]
	// "file_test.go:64: reason" -> "reason (file_test.go:64)"
	if i := strings.Index(r, ": "); i > 0 && strings.Contains(r[:i], ".go:") {
		r = r[i+2:] + " (" + r[:i] + ")"
	}
	return r
}

// required names the provisioned component a skipped test says it needed, or
// "" when the skip is not one -require turns into a failure.
func (s *summary) required(t *testResult) string {
	if len(s.require) == 0 {
		return ""
	}
	r := skipReason(t)
	if !strings.HasPrefix(r, "needs ") {
		return ""
	}
	c := strings.TrimPrefix(r, "needs ")
	if i := strings.IndexAny(c, ": ("); i >= 0 {
		c = c[:i]
	}
	if s.require[c] {
		return c
	}
	return ""
}

// report prints the table, the skips, the slowest tests and the closing line,
// and returns the number of failures.
func (s *summary) report() int {
	// A package whose binary was killed (a -timeout, a crash) may end with no
	// event of its own: count what it finished and what it left running.
	// (scripts/test's "checks" end that way too, each check finished.)
	for _, name := range s.pkgOrder {
		p := s.pkgs[name]
		if p.action != "" {
			continue
		}
		p.action = "pass"
		for _, t := range s.order {
			if t.pkg == name && (t.action == "" || t.action == "fail") {
				p.action = "fail"
			}
		}
		if p.action == "fail" {
			fmt.Fprintf(s.live, "--- %s ended without a result of its own\n", name)
		}
		s.packageDone(p, "")
	}
	names := append([]string(nil), s.pkgOrder...)
	sort.Strings(names)
	width := len("package")
	for _, n := range names {
		width = max(width, len(n))
	}
	fmt.Fprintf(s.out, "\n%-*s %7s %7s %7s %9s\n", width, "package", "passed", "failed", "skipped", "time")
	var passed, failed, skipped int
	for _, n := range names {
		p := s.pkgs[n]
		if p.action == "skip" {
			continue
		}
		fmt.Fprintf(s.out, "%-*s %7d %7d %7d %8.1fs\n", width, n, p.passed, p.failed, p.skip, p.elapsed)
		passed, failed, skipped = passed+p.passed, failed+p.failed, skipped+p.skip
	}

	var skips []*testResult
	for _, t := range s.order {
		if t.action == "skip" {
			skips = append(skips, t)
		}
	}
	if len(skips) > 0 {
		fmt.Fprintf(s.out, "\nskipped (%d):\n", len(skips))
		for _, t := range skips {
			fmt.Fprintf(s.out, "  %s %s: %s\n", t.pkg, t.name, skipReason(t))
		}
	}

	slow := make([]*testResult, 0, len(s.order))
	for _, t := range s.order {
		if t.pkg != "checks" && !strings.Contains(t.name, "/") && t.action != "" {
			slow = append(slow, t)
		}
	}
	sort.SliceStable(slow, func(i, j int) bool { return slow[i].elapsed > slow[j].elapsed })
	if len(slow) > 10 {
		slow = slow[:10]
	}
	if len(slow) > 0 {
		fmt.Fprintln(s.out, "\nslowest tests:")
		for _, t := range slow {
			fmt.Fprintf(s.out, "  %8s  %s %s\n", (time.Duration(t.elapsed*1000) * time.Millisecond).String(), t.pkg, t.name)
		}
	}
	fmt.Fprintf(s.out, "\n%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	return failed
}
