//go:build linux && cgo

package tools

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/hushcli/hush/tools/sandbox"
)

// BenchmarkLandlockCall runs, in each iteration and interleaved, `bash -c
// true` as a bare exec (os/exec) and in the Landlock sandbox, with a
// session's policy, where the kernel refuses the namespaces: it runs only
// there (scripts/bench starts it inside a user namespace whose limit
// forbids another). It reports each side's median and the median of
// per-iteration ratios; the target is ≤ 1.2× (scripts/bench).
func BenchmarkLandlockCall(b *testing.B) {
	if st := sandbox.Status(); !st.LandlockOnly {
		b.Skipf("not the Landlock sandbox here: %s", st.Reason)
	}
	w := newWorld(b, attacker{})
	p, err := sandbox.NewPolicy(sandbox.PolicyOptions{Dir: w.project, Home: w.home, PathEnv: "/usr/local/bin:/usr/bin:/bin",
		HushDirs: []string{w.data, w.config}, Executable: w.home + "/go/bin/hush"})
	if err != nil {
		b.Fatal(err)
	}
	sb := &sandbox.Config{Masks: w.masks, Policy: p}
	env := Env{{Name: "PATH", Value: "/usr/local/bin:/usr/bin:/bin"}, {Name: "HOME", Value: w.home}}
	spec := Spec{Path: "bash", Args: []string{"-c", "true"}, Dir: w.project, Env: env, Sandbox: sb}
	boxed := func() time.Duration {
		start := time.Now()
		cmd, err := Command(context.Background(), spec)
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	bare := func() time.Duration {
		start := time.Now()
		cmd := exec.Command("/usr/bin/bash", "-c", "true")
		cmd.Dir, cmd.Env = w.project, env.Environ()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	boxed() // the view's ruleset and the private home, made once per session
	var tb, tl []time.Duration
	var r []float64
	for b.Loop() {
		x := bare()
		y := boxed()
		tb, tl = append(tb, x), append(tl, y)
		r = append(r, float64(y)/float64(x))
	}
	b.ReportMetric(float64(medianD(tb).Nanoseconds()), "bare-ns/op")
	b.ReportMetric(float64(medianD(tl).Nanoseconds()), "landlock-ns/op")
	b.ReportMetric(medianF(r), "ratio")
}
