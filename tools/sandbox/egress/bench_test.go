package egress

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/hushcli/hush/config"
)

// benchProxy serves a proxy that allows the loopback address addr, for a
// call holding no secret.
func benchProxy(b *testing.B, addr string) string {
	b.Helper()
	c, err := config.Parse("config.toml", []byte(fmt.Sprintf("[network]\nallow = [%q]\n", addr)))
	if err != nil {
		b.Fatal(err)
	}
	pol, err := NewPolicy(c)
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(Options{Policy: pol, Audit: func(Record) {}})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Serve(ctx, ln, Call{Tool: "bash"}); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// serveTCP answers every connection on a loopback listener with fn.
func serveTCP(b *testing.B, fn func(net.Conn)) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); fn(c) }()
		}
	}()
	return ln.Addr().String()
}

// dial connects to addr directly or through a CONNECT tunnel.
func dial(viaProxy bool, proxy, addr string) (net.Conn, error) {
	if !viaProxy {
		return net.Dial("tcp", addr)
	}
	ap := netip.MustParseAddrPort(addr)
	return Dial(context.Background(), proxy, ap.Addr().String(), int(ap.Port()))
}

// BenchmarkDownload measures a download from a loopback server through a
// CONNECT tunnel against the same download direct, interleaved (the order
// alternating), 64 MiB each way per iteration: -benchtime 16x is 1 GiB
// per side. Target: proxied ≥ 0.7 × direct throughput. Server, proxy and
// client share this process, so on a busy machine the ratio follows the
// CPU each side costs; cpu-ratio is that (the process's CPU time during
// the proxied downloads over that during the direct ones), which the load
// moves less.
func BenchmarkDownload(b *testing.B) {
	const size = 64 << 20
	chunk := make([]byte, 1<<20)
	src := serveTCP(b, func(c net.Conn) {
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	})
	proxy := benchProxy(b, src)
	buf := make([]byte, 256<<10)
	var directCPU, proxiedCPU time.Duration
	fetch := func(viaProxy bool) time.Duration {
		start, cpu := time.Now(), processCPU()
		defer func() {
			if viaProxy {
				proxiedCPU += processCPU() - cpu
			} else {
				directCPU += processCPU() - cpu
			}
		}()
		c, err := dial(viaProxy, proxy, src)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		// A plain read loop: io.Copy to io.Discard would read 8 KiB at a
		// time, measuring system calls more than the path.
		var n int
		for {
			m, err := c.Read(buf)
			n += m
			if err != nil {
				break
			}
		}
		if n != size {
			b.Fatalf("read %d bytes, want %d", n, size)
		}
		return time.Since(start)
	}
	var direct, proxied time.Duration
	b.SetBytes(2 * size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			direct += fetch(false)
			proxied += fetch(true)
		} else {
			proxied += fetch(true)
			direct += fetch(false)
		}
	}
	mb := float64(b.N) * size / 1e6
	b.ReportMetric(mb/direct.Seconds(), "direct-MB/s")
	b.ReportMetric(mb/proxied.Seconds(), "proxy-MB/s")
	b.ReportMetric(direct.Seconds()/proxied.Seconds(), "ratio")
	if directCPU > 0 {
		b.ReportMetric(proxiedCPU.Seconds()/directCPU.Seconds(), "cpu-ratio")
	}
}

// BenchmarkConnectLatency measures what the proxy adds to one connection:
// connect, one byte there and back, close — direct and through a CONNECT
// tunnel, interleaved. Target: ≤ 1 ms added at the median.
func BenchmarkConnectLatency(b *testing.B) {
	echo := serveTCP(b, func(c net.Conn) {
		var one [1]byte
		if _, err := io.ReadFull(c, one[:]); err == nil {
			c.Write(one[:])
		}
	})
	proxy := benchProxy(b, echo)
	round := func(viaProxy bool) time.Duration {
		start := time.Now()
		c, err := dial(viaProxy, proxy, echo)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		var one [1]byte
		if _, err := c.Write([]byte{'x'}); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, one[:]); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	direct := make([]time.Duration, 0, b.N)
	proxied := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			direct = append(direct, round(false))
			proxied = append(proxied, round(true))
		} else {
			proxied = append(proxied, round(true))
			direct = append(direct, round(false))
		}
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	md, mp := med(direct), med(proxied)
	b.ReportMetric(float64(md.Microseconds()), "direct-µs")
	b.ReportMetric(float64(mp.Microseconds()), "proxy-µs")
	b.ReportMetric(float64((mp - md).Microseconds()), "added-µs")
}
