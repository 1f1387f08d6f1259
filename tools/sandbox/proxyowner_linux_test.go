//go:build linux && cgo

package sandbox

import (
	"golang.org/x/sys/unix"
	"net"
	"os"
	"testing"
)

// TestOwnedListener: a connection from this process is found in its own
// session and in no other.
func TestOwnedListener(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	la, ra := s.LocalAddr().(*net.TCPAddr), s.RemoteAddr().(*net.TCPAddr)
	if d, p := diagInode(ra, la), clientInode(ra.Port, la.Port); d == 0 || d != p {
		t.Errorf("sock_diag found inode %d for the client socket, /proc/net/tcp %d", d, p)
	}
	sid, _ := unix.Getsid(os.Getpid())
	if !connFromSession(s, sid) {
		t.Errorf("a connection of this process's session (%d) was not found in it", sid)
	}
	if connFromSession(s, sid+100000) {
		t.Errorf("a connection was found in a session that does not exist")
	}
}

// BenchmarkOwnerLookup is the owner check of one connection to a call's
// proxy in the Landlock world: sock_diag for the client socket's inode,
// then "tree": the holder is the tool itself or a descendant (the usual
// case), or "session": every process of this machine read for its
// session (a holder whose parent has exited).
func BenchmarkOwnerLookup(b *testing.B) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := l.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sid, _ := unix.Getsid(os.Getpid())
	b.Run("tree", func(b *testing.B) {
		for b.Loop() {
			if !connFromSession(s, os.Getpid()) {
				b.Fatal("not found")
			}
		}
	})
	b.Run("session", func(b *testing.B) {
		for b.Loop() {
			if !connFromSession(s, sid) {
				b.Fatal("not found")
			}
		}
	})
}

// BenchmarkProxyLayer is what a "proxy" call adds to a start in the
// Landlock world before the tool runs: its listener on the host's loopback
// and its Landlock layer (both closed again).
func BenchmarkProxyLayer(b *testing.B) {
	for b.Loop() {
		l, err := listenProxy()
		if err != nil {
			b.Fatal(err)
		}
		fd, err := proxyRuleset(l.Addr().(*net.TCPAddr).Port)
		if err != nil {
			b.Fatal(err)
		}
		if fd >= 0 {
			unix.Close(fd)
		}
		l.Close()
	}
}
