//go:build linux

package tools

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hushcli/hush/tools/sandbox"
)

// BenchmarkSandboxedCall runs, in each iteration and interleaved, `bash -c
// true` four ways from one environment: a bare exec (os/exec), the same
// command in hush's constructed world (the default: a root built from the
// session's policy, with a session /tmp), in hush's sandbox with a realistic mask
// list (hush's dirs, a bus socket, home credential stores, four .env files
// in the project; hush's executable and ~/.ssh read-only), and the same through bubblewrap with the same
// namespaces and masks, when bwrap is installed. It reports each side's
// median and the median of per-iteration ratios over the bare exec just
// before it. The target is world ≤ 1.5× bare (scripts/bench).
func BenchmarkSandboxedCall(b *testing.B) {
	if !sandbox.Status().Namespaces {
		b.Skip(sandbox.Status().Reason)
	}
	w := newWorld(b, attacker{})
	env := Env{{Name: "PATH", Value: "/usr/local/bin:/usr/bin:/bin"}, {Name: "HOME", Value: w.home}}
	sb := w.sandbox()
	masks, err := w.masks.Masks()
	if err != nil {
		b.Fatal(err)
	}
	bwrap, _ := exec.LookPath("bwrap")
	var bwrapArgs []string
	if bwrap != "" {
		// What hush's init does, in bubblewrap's words.
		bwrapArgs = []string{"--unshare-user", "--unshare-pid", "--die-with-parent", "--new-session",
			"--bind", "/", "/", "--proc", "/proc", "--dev-bind", "/dev", "/dev"}
		for _, m := range masks {
			switch {
			case m.ReadOnly:
				bwrapArgs = append(bwrapArgs, "--ro-bind", m.Path, m.Path)
			case m.Dir:
				bwrapArgs = append(bwrapArgs, "--tmpfs", m.Path, "--remount-ro", m.Path)
			default:
				bwrapArgs = append(bwrapArgs, "--ro-bind", "/dev/null", m.Path)
			}
		}
		bwrapArgs = append(bwrapArgs, "bash", "-c", "true")
	}
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
	boxed := Spec{Path: "bash", Args: []string{"-c", "true"}, Dir: w.project, Env: env, Sandbox: sb}
	private := b.TempDir() // the session /tmp's parent: only its owner enters (sandbox.SessionTmp)
	if err := os.Chmod(private, 0o700); err != nil {
		b.Fatal(err)
	}
	policy, err := sandbox.NewPolicy(sandbox.PolicyOptions{Dir: w.project, Home: w.home, PathEnv: "/usr/local/bin:/usr/bin:/bin",
		Tmp: filepath.Join(private, "session"), HushDirs: []string{w.data, w.config}})
	if err != nil {
		b.Fatal(err)
	}
	world := Spec{Path: "bash", Args: []string{"-c", "true"}, Dir: w.project, Env: env,
		Sandbox: &sandbox.Config{Masks: w.masks, Policy: policy, Constructed: true, Required: true}}
	// The bare side is a plain exec, as executor's BenchmarkToolCallOverhead
	// measures it: tools.Command without a sandbox adds a reaper.
	bare := func() time.Duration {
		start := time.Now()
		cmd := exec.Command("/usr/bin/bash", "-c", "true")
		cmd.Dir, cmd.Env = w.project, env.Environ()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var viaBwrap Spec
	if bwrap != "" {
		viaBwrap = Spec{Path: bwrap, Args: bwrapArgs, Dir: w.project, Env: env}
	}
	// The default for a host tool: the world, in a network of its own with
	// the egress proxy's listener and a forwarded port (tools.Spec.Egress).
	// Holding a secret changes only the proxy's policy, not the start.
	proxied := world
	proxied.Egress = func(ctx context.Context, l net.Listener) { <-ctx.Done() }
	proxied.Local = &LocalServices{}
	var tb, ts, tw, tc, tn []time.Duration
	var rs, rw, rc, rn []float64
	for b.Loop() {
		x := bare()
		y := run(boxed)
		tb, ts = append(tb, x), append(ts, y)
		rs = append(rs, float64(y)/float64(x))
		x = bare()
		c := run(world)
		tc, rc = append(tc, c), append(rc, float64(c)/float64(x))
		x = bare()
		n := run(proxied)
		tn, rn = append(tn, n), append(rn, float64(n)/float64(x))
		if bwrap != "" {
			x := bare()
			z := run(viaBwrap)
			tw = append(tw, z)
			rw = append(rw, float64(z)/float64(x))
		}
	}
	b.ReportMetric(float64(medianD(tb).Nanoseconds()), "bare-ns/op")
	b.ReportMetric(float64(medianD(ts).Nanoseconds()), "sandbox-ns/op")
	b.ReportMetric(medianF(rs), "ratio")
	b.ReportMetric(float64(medianD(tc).Nanoseconds()), "world-ns/op")
	b.ReportMetric(medianF(rc), "world-ratio")
	b.ReportMetric(float64(medianD(tn).Nanoseconds()), "net-ns/op")
	b.ReportMetric(medianF(rn), "net-ratio")
	if bwrap != "" {
		b.ReportMetric(float64(medianD(tw).Nanoseconds()), "bwrap-ns/op")
		b.ReportMetric(medianF(rw), "bwrap-ratio")
	}
}

func medianD(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianF(f []float64) float64 {
	s := slices.Clone(f)
	slices.Sort(s)
	return s[len(s)/2]
}
