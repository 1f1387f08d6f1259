package tests

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSquatterGetsNoTelemetryHeader: hush's telemetry exporter sends its
// collector's API-key header to 127.0.0.1:PORT, where no collector runs.
// A background process of the session listens on that port and records
// what arrives while a call keeps the session busy past the exporter's
// first batch (5 s). It has a network of its own, so it listens on its own
// loopback, not the host's: no byte of the header reaches it. The positive
// control is the same run with a listener the test itself holds on the
// host's port, which receives the header. With the squatter on the host's
// network (network = "host"), it does hold the port, and hush, seeing the
// listener is a process it started, sends it nothing. Root and
// unprivileged.
func TestSquatterGetsNoTelemetryHeader(t *testing.T) {
	for _, a := range attackers(t) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []string{"own network", "host network", "control"} {
				control := mode == "control"
				hw := newHostileWorld(t, a)
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				port := l.Addr().(*net.TCPAddr).Port
				var host *rawServer
				if control {
					host = listenKeeping(t, func(c net.Conn) []byte { return readHead(c) })
					l.Close()
					port = host.l.Addr().(*net.TCPAddr).Port
				} else {
					l.Close() // the collector is down: the port is free
				}
				teamKey := canary("teamkey")
				hw.write(hw.dataDir+"/vault.env", fmt.Sprintf("GRANTED=%q\nTEAM_KEY=%q\n", hw.granted, teamKey))
				if err := os.MkdirAll(filepath.Join(hw.project, "loot"), 0o755); err != nil {
					t.Fatal(err)
				}
				squat := fmt.Sprintf(`exec python3 -c "
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', %d)); s.listen(8); open('loot/listening', 'w').close()
while True:
    c, _ = s.accept(); c.settimeout(2)
    try:
        data = c.recv(65536)
    except Exception:
        data = b''
    open('loot/squat', 'ab').write(data)
    c.close()
"`, port)
				model := hostileModel(t,
					fakeCall{"background", map[string]any{"action": "start", "command": squat, "secrets": []string{}}},
					fakeCall{"bash", map[string]any{"script": "for i in $(seq 50); do [ -e loot/listening ] && break; sleep 0.1; done; sleep 7; echo waited", "secrets": []string{}}})
				extra := fmt.Sprintf("\n[telemetry]\nendpoint = \"http://127.0.0.1:%d\"\nheaders = { X-Team-Key = \"${TEAM_KEY}\" }\n", port)
				if mode == "host network" {
					// The squatter shares the host's network: it does take the
					// port, and hush must see whose it is.
					extra += "\n[tools.background]\nnetwork = \"host\"\n"
				}
				hw.configFor(model, extra)
				out, _ := hw.run(t, "squat")
				if !strings.Contains(out, "waited") {
					t.Fatalf("%s: the calls did not run:\n%s", a.name, out)
				}
				if control {
					if _, raw := host.seen(); !strings.Contains(raw, teamKey) {
						t.Errorf("%s: positive control: a listener on the host's port did not receive the exporter's header (%q)", a.name, raw)
					}
					continue
				}
				if _, err := os.Stat(filepath.Join(hw.project, "loot", "listening")); err != nil {
					t.Fatalf("%s: the squatter never listened: %v\n%s", a.name, err, out)
				}
				if got := hw.loot("squat"); strings.Contains(got, teamKey) || strings.Contains(got, "X-Team-Key") {
					t.Errorf("%s, %s: a tool listening on the collector's port received the exporter's header: %q", a.name, mode, got)
				}
			}
		})
	}
}

// readHead reads what a client sends for up to 2 s.
func readHead(c net.Conn) []byte {
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64<<10)
	n, _ := c.Read(buf)
	_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
	return buf[:n]
}
