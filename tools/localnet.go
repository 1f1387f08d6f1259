package tools

import (
	"io"
	"net"
	"slices"
	"strconv"
	"sync"

	"github.com/hushcli/hush/tools/sandbox"
)

// LocalServices are a session's local services. Each call behind the
// egress proxy has a network of its own, so a dev server a background
// process started listens in that network only; a later call of the same
// session reaches it at 127.0.0.1 all the same: its network gets a
// listener on each port the session's running calls listen on, and hush
// forwards what connects there to the network the service runs in. The
// host's own loopback stays out of every call's network.
//
// A port is forwarded when a call starts: a service started after it is
// reached by calls started after that.
type LocalServices struct {
	mu   sync.Mutex
	nets map[*sandbox.NetNS]int // a running call's network → its pid, to read what listens there
}

// maxForwarded bounds the ports forwarded into one call's network.
const maxForwarded = 32

func (ls *LocalServices) add(n *sandbox.NetNS, pid int) {
	if ls == nil || n == nil {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.nets == nil {
		ls.nets = map[*sandbox.NetNS]int{}
	}
	ls.nets[n] = pid
}

func (ls *LocalServices) remove(n *sandbox.NetNS) {
	if ls == nil || n == nil {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.nets, n)
}

// listening maps each port listening on loopback or every address in
// the session's running calls' networks to the network it is in.
func (ls *LocalServices) listening() map[int]*sandbox.NetNS {
	out := map[int]*sandbox.NetNS{}
	if ls == nil {
		return out
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for n, pid := range ls.nets {
		for _, p := range listeningPorts(pid) {
			if _, ok := out[p]; !ok && p != sandbox.ProxyPort {
				out[p] = n
			}
		}
	}
	return out
}

// ports are the ports to forward into a new call's network.
func (ls *LocalServices) ports() []int {
	ps := slices.Sorted(func(yield func(int) bool) {
		for p := range ls.listening() {
			if !yield(p) {
				return
			}
		}
	})
	if len(ps) > maxForwarded {
		ps = ps[:maxForwarded]
	}
	return ps
}

// serve forwards what connects to l (a forwarded port in a call's
// network) to the service listening on that port now.
func (ls *LocalServices) serve(l net.Listener) {
	_, ps, _ := net.SplitHostPort(l.Addr().String())
	port, _ := strconv.Atoi(ps)
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			n := ls.listening()[port]
			if n == nil {
				return // the service is gone: the connection is refused as if nothing listened
			}
			up, err := n.Connect(port)
			if err != nil {
				return
			}
			defer up.Close()
			splice(c, up)
		}()
	}
}

// splice copies both ways until both directions are done.
func splice(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(b, a)
		closeWrite(b)
		close(done)
	}()
	_, _ = io.Copy(a, b)
	closeWrite(a)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		_ = c.Close()
	}
}

// listeningPorts reads the TCP ports listening on loopback or on every
// address in pid's network.
func listeningPorts(pid int) []int {
	var out []int
	for _, l := range Listeners("/proc/" + strconv.Itoa(pid) + "/net") {
		switch l.Addr {
		case "0100007F", "00000000", // 127.0.0.1, 0.0.0.0
			"00000000000000000000000001000000", "00000000000000000000000000000000": // ::1, ::
		default:
			continue
		}
		if !slices.Contains(out, l.Port) {
			out = append(out, l.Port)
		}
	}
	return out
}

// Listener is one TCP socket in the LISTEN state.
type Listener struct {
	Addr  string // the local address as the kernel writes it: "0100007F" is 127.0.0.1
	Port  int
	Inode string // the socket's inode, as in a /proc/PID/fd link "socket:[INODE]"
}

// Listeners reads the listening TCP sockets, IPv4 and IPv6, of the
// network netDir shows ("/proc/net" for hush's own, "/proc/PID/net" for
// a process's).
func Listeners(netDir string) []Listener {
	var out []Listener
	sandbox.ReadTCP(netDir, func(s sandbox.TCPSocket) bool {
		if s.State == sandbox.TCPListen {
			out = append(out, Listener{Addr: s.LocalAddr, Port: s.LocalPort, Inode: s.Inode})
		}
		return false
	})
	return out
}
