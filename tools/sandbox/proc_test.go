package sandbox

import (
	"net"
	"os"

	"testing"

	"golang.org/x/sys/unix"
)

// TestProcReadsTCPHoldersAndStat: a listener and a connection this test makes are
// read back from the kernel's table by their ports, this process holds the
// client's socket (and not a made-up one), and Stat gives this process's
// parent and session as the kernel does.
func TestProcReadsTCPHoldersAndStat(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	local := c.LocalAddr().(*net.TCPAddr).Port

	l, ok := ReadTCP("/proc/net", func(s TCPSocket) bool { return s.State == TCPListen && s.LocalPort == port })
	if !ok || l.LocalAddr != "0100007F" || l.Inode == "" || l.Inode == "0" {
		t.Fatalf("the listener on %d: %+v, %v", port, l, ok)
	}
	est, ok := ReadTCP("/proc/net", func(s TCPSocket) bool {
		return s.State == TCPEstablished && s.LocalPort == local && s.RemotePort == port
	})
	if !ok {
		t.Fatalf("no established socket %d -> %d", local, port)
	}
	if !HoldsFile(os.Getpid(), "socket:["+est.Inode+"]") {
		t.Errorf("this process does not hold its own client socket %s", est.Inode)
	}
	if HoldsFile(os.Getpid(), "socket:[1]") {
		t.Error("control: this process holds a socket it never made")
	}
	if _, ok := ReadTCP("/proc/net", func(s TCPSocket) bool { return s.State == TCPListen && s.LocalPort == 0 }); ok {
		t.Error("control: a listener on port 0")
	}

	ppid, sid, ok := ProcStat(os.Getpid())
	want, _ := unix.Getsid(0)
	if !ok || ppid != os.Getppid() || sid != want {
		t.Errorf("ProcStat(self) = %d, %d, %v; want %d, %d", ppid, sid, ok, os.Getppid(), want)
	}
	if _, _, ok := ProcStat(1 << 30); ok {
		t.Error("control: Stat of no process")
	}
}
