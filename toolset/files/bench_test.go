package files

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/tools/sandbox"
)

// The tree the search benchmarks walk: HUSH_BENCH_TREE_FILES files
// (default 2,000) of HUSH_BENCH_TREE_KB KiB on average (default 10), in
// 100-file directories two levels deep, a third of them .go, with a
// .gitignore'd vendor/ directory and a .git directory so ripgrep honours
// the .gitignore too. scripts/bench asks for the 50,000 files /
// 500 MB, made once in HUSH_BENCH_TREE (a directory it removes itself);
// without it the tree lives in the benchmark's temporary directory.
func benchTree(b *testing.B) string {
	b.Helper()
	files := envInt("HUSH_BENCH_TREE_FILES", 2000)
	kb := envInt("HUSH_BENCH_TREE_KB", 10)
	root := os.Getenv("HUSH_BENCH_TREE")
	done := filepath.Join(root, ".hush-bench-tree-"+strconv.Itoa(files)+"x"+strconv.Itoa(kb))
	if root == "" {
		root = b.TempDir()
	} else if _, err := os.Stat(done); err == nil {
		return root
	}
	rng := rand.New(rand.NewPCG(uint64(files), 16))
	words := strings.Fields("func return if else for range var const type struct interface map string int error nil " +
		"ctx context err value name path file read write buffer bytes len append make new select case default go defer")
	line := func(buf *bytes.Buffer) {
		n := 4 + rng.IntN(10)
		buf.WriteString(strings.Repeat("\t", rng.IntN(3)))
		for i := 0; i < n; i++ {
			if i > 0 {
				buf.WriteByte(' ')
			}
			buf.WriteString(words[rng.IntN(len(words))])
		}
		buf.WriteByte('\n')
	}
	exts := []string{".go", ".txt", ".md"}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	must(os.WriteFile(filepath.Join(root, ".gitignore"), []byte("vendor/\n*.tmp\n"), 0o644))
	var buf bytes.Buffer
	for i := 0; i < files; i++ {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", i/1000), fmt.Sprintf("s%02d", (i/100)%10))
		if i%50 == 0 {
			dir = filepath.Join(root, "vendor", fmt.Sprintf("v%03d", i/1000))
		}
		if i%100 == 0 {
			must(os.MkdirAll(dir, 0o755))
		}
		buf.Reset()
		size := kb*1024/2 + rng.IntN(kb*1024)
		for buf.Len() < size {
			line(&buf)
			if rng.IntN(40000) == 0 {
				buf.WriteString("\t// TODO(hush): look here\n")
			}
		}
		if i%50 != 0 {
			_ = os.MkdirAll(dir, 0o755)
		}
		must(os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d%s", i, exts[i%3])), buf.Bytes(), 0o644))
	}
	if os.Getenv("HUSH_BENCH_TREE") != "" {
		must(os.WriteFile(done, nil, 0o644))
	}
	return root
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// benchCheck is the real mask list's check, as a session builds it.
func benchCheck(b *testing.B, project string) (Check, Check) {
	home := b.TempDir()
	m, err := sandbox.NewMaskSet(sandbox.MaskOptions{Home: home, ConfigDir: filepath.Join(home, ".config/hush"),
		DataDir: filepath.Join(home, ".local/share/hush"), RuntimeDir: "/run/user/1000", Project: project})
	if err != nil {
		b.Fatal(err)
	}
	return m.Masked, m.MaskedResolved
}

// versus times hush's tool and ripgrep on the same work, interleaved, and
// reports both medians and the median of per-iteration ratios.
func versus(b *testing.B, hush func() int, rgArgs []string, dir string) {
	versus2(b, hush, rgArgs, nil, dir)
}

// versus2 also times a second ripgrep command (reported as rg2-ns/op,
// not in the ratio).
func versus2(b *testing.B, hush func() int, rgArgs, rg2Args []string, dir string) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep is not installed (apt-get install ripgrep)")
	}
	rgRun := func(args []string) int {
		cmd := exec.Command(rg, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
			err = nil // no match
		}
		if err != nil {
			b.Fatalf("rg: %v", err)
		}
		return bytes.Count(out, []byte{'\n'})
	}
	rgLines := func() int { return rgRun(rgArgs) }
	// Warm the page cache and check both find the same.
	if h, r := hush(), rgLines(); h != r {
		b.Fatalf("hush found %d, ripgrep %d", h, r)
	}
	var hs, rs, r2s, ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if rg2Args != nil {
			t := time.Now()
			rgRun(rg2Args)
			r2s = append(r2s, time.Since(t).Seconds())
		}
		t0 := time.Now()
		rgLines()
		t1 := time.Now()
		hush()
		t2 := time.Now()
		r, h := t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds()
		rs, hs, ratios = append(rs, r), append(hs, h), append(ratios, h/r)
	}
	b.StopTimer()
	b.ReportMetric(median(hs)*1e9, "hush-ns/op")
	b.ReportMetric(median(rs)*1e9, "rg-ns/op")
	b.ReportMetric(median(ratios), "ratio")
	if rg2Args != nil {
		b.ReportMetric(median(r2s)*1e9, "rg2-ns/op")
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func runTool(b *testing.B, tool executor.Tool, dir string, args any) string {
	out, _ := runToolStatus(b, tool, dir, args)
	return out
}

func runToolStatus(b *testing.B, tool executor.Tool, dir string, args any) (string, string) {
	raw, _ := json.Marshal(args)
	var out bytes.Buffer
	tc := &executor.ToolContext{Dir: dir, Output: &out}
	res, err := tool.Run(context.Background(), tc, raw)
	if err != nil {
		b.Fatal(err)
	}
	return out.String(), res.Status
}

// BenchmarkGrepTree: grep against `rg PATTERN` on the same tree.
func BenchmarkGrepTree(b *testing.B) {
	dir := benchTree(b)
	check, walk := benchCheck(b, dir)
	g := Grep{Check: check, WalkCheck: walk}
	pattern := `TODO\(hush\)`
	versus(b, func() int {
		return strings.Count(runTool(b, g, dir, GrepParams{Pattern: pattern, MaxMatches: MaxGrepMatches}), "\n")
	}, []string{"-n", "--no-heading", pattern}, dir)
}

// BenchmarkGlobTree: glob `**/*.go` against `rg --files -g '*.go'`.
func BenchmarkGlobTree(b *testing.B) {
	dir := benchTree(b)
	check, walk := benchCheck(b, dir)
	g := Glob{Check: check, WalkCheck: walk}
	// rg2: ripgrep sorting newest first, as glob does (one stat per file).
	versus2(b, func() int {
		// glob lists the newest 1000; the count is in its status.
		_, status := runToolStatus(b, g, dir, GlobParams{Pattern: "**/*.go"})
		n, _ := strconv.Atoi(strings.Fields(status)[0])
		return n
	}, []string{"--files", "-g", "*.go"}, []string{"--files", "-g", "*.go", "--sortr", "modified"}, dir)
}

// BenchmarkReadNearEnd: read 100 lines near the end of a 100 MB file.
func BenchmarkReadNearEnd(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "big.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	line := strings.Repeat("x", 90)
	w := io.Writer(f)
	var lines int
	var buf bytes.Buffer
	for buf.Len() < 100<<20 {
		fmt.Fprintf(&buf, "%08d %s\n", lines, line)
		lines++
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		b.Fatal(err)
	}
	f.Close()
	check, _ := benchCheck(b, dir)
	r := Read{Check: check}
	args := ReadParams{Path: "big.log", Offset: lines - 150, Limit: 100}
	if out := runTool(b, r, dir, args); !strings.Contains(out, fmt.Sprintf("%08d", lines-150-1)) {
		b.Fatalf("read the wrong lines:\n%.200s", out)
	}
	var ts []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		runTool(b, r, dir, args)
		ts = append(ts, time.Since(t0).Seconds())
	}
	b.ReportMetric(median(ts)*1e9, "med-ns/op")
}
