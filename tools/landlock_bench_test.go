//go:build linux && cgo

package tools

import (
	"context"
	"net"
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
// per-iteration ratios; the target is ≤ 1.2× (scripts/bench). The third
// side, proxy, is the same call whose network is "proxy": a listener on
// the host's loopback and a Landlock layer of its own per call.
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
	proxied := spec
	proxied.Egress = func(ctx context.Context, l net.Listener) { <-ctx.Done() }
	run := func(spec Spec) time.Duration {
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
	boxed := func() time.Duration { return run(spec) }
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
	var tb, tl, tp []time.Duration
	var r, rp []float64
	for b.Loop() {
		x := bare()
		y := boxed()
		z := run(proxied)
		tb, tl, tp = append(tb, x), append(tl, y), append(tp, z)
		r = append(r, float64(y)/float64(x))
		rp = append(rp, float64(z)/float64(x))
	}
	b.ReportMetric(float64(medianD(tb).Nanoseconds()), "bare-ns/op")
	b.ReportMetric(float64(medianD(tl).Nanoseconds()), "landlock-ns/op")
	b.ReportMetric(float64(medianD(tp).Nanoseconds()), "proxy-ns/op")
	b.ReportMetric(medianF(r), "ratio")
	b.ReportMetric(medianF(rp), "proxy-ratio")
}
