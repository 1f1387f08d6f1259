package selftest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSquatCell: the squatter row is LEAK when the squatter read the
// header, and a pass only when the squatter listened and the collector
// back on its port read the header; otherwise FAIL. Squat keeps what a
// client sends, raw, and stops at its stop file.
func TestSquatCell(t *testing.T) {
	project := t.TempDir()
	key := canaryPrefix + "squat-0123456789abcdef"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	file := filepath.Join(project, fSquat)
	done := make(chan error, 1)
	go func() { done <- Squat(port, file) }()
	var c net.Conn
	for i := 0; i < 200; i++ {
		if c, err = net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("POST /v1/traces HTTP/1.1\r\n" + atkTelHeader + ": " + key + "\r\n\r\n"))
	c.Read(make([]byte, 1)) // the squatter closes once it has the header
	c.Close()
	os.WriteFile(file+".stop", nil, 0o644)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file + ".done"); err != nil {
		t.Fatal("Squat did not say it stopped")
	}

	r := &attackResult{w: &attackWorld{world: &world{project: project}, c: canaries{aNetTelemetry: key}}, net: &netWorld{}}
	if got := r.squatCell(); got.Status != "LEAK" {
		t.Errorf("the squatter read the header: %+v", got)
	}
	os.WriteFile(file, []byte("nothing"), 0o644)
	if got := r.squatCell(); got.Status != "FAIL" {
		t.Errorf("no collector came back: %+v", got)
	}
	col, err := listenRaw("")
	if err != nil {
		t.Fatal(err)
	}
	defer col.l.Close()
	r.net.collector = col
	if got := r.squatCell(); got.Status != "FAIL" {
		t.Errorf("the collector read nothing: %+v", got)
	}
	cc, err := net.Dial("tcp", col.l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cc.Write([]byte("POST / HTTP/1.1\r\n" + atkTelHeader + ": " + key + "\r\n\r\n"))
	cc.Read(make([]byte, 64))
	cc.Close()
	for i := 0; i < 200; i++ {
		if _, raw := col.seen(); len(raw) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := r.squatCell(); got.Status != "pass" {
		t.Errorf("the collector read the header, the squatter nothing: %+v", got)
	}
	os.WriteFile(file+".listening", []byte("!address in use"), 0o644)
	if got := r.squatCell(); got.Status != "FAIL" {
		t.Errorf("the squatter never listened: %+v", got)
	}
}
