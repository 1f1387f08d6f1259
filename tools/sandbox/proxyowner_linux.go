//go:build linux

package sandbox

import (
	"encoding/binary"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// In the Landlock world a call's egress proxy listens on the host's
// loopback (landlockStart), where any process of this machine may connect
// to it — and the proxy would take it for the call, with the call's
// secrets' bindings and the session's answers. ownedListener accepts a
// connection only from a process of the call: its client socket, found in
// /proc/net/tcp{,6} by its two ports, must be held open by a process in
// the call's session (the tool is its session's leader: hush starts every
// tool with setsid). A process the tool moved to a session of its own
// (setsid cmd) is refused too: it fails closed.

// ownedListener is a call's proxy listener that drops every connection
// not made by the call's own processes.
type ownedListener struct {
	net.Listener
	sid atomic.Int64 // the tool's pid, its session's id, once started (0 before)
}

func (l *ownedListener) setOwner(pid int) { l.sid.Store(int64(pid)) }

// Accept returns the next connection from the call's processes; others
// are closed unread.
func (l *ownedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if sid := int(l.sid.Load()); sid > 0 && connFromSession(c, sid) {
			return c, nil
		}
		c.Close()
	}
}

// connFromSession says c's client end is held by a process of session sid.
func connFromSession(c net.Conn, sid int) bool {
	la, ok1 := c.LocalAddr().(*net.TCPAddr)
	ra, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return false
	}
	inode := diagInode(ra, la)
	if inode == 0 {
		inode = clientInode(ra.Port, la.Port)
	}
	if inode == 0 {
		return false
	}
	return sessionHolds(sid, "socket:["+strconv.FormatUint(uint64(inode), 10)+"]")
}

// diagInode is the inode of the TCP socket whose local end is local and
// remote end remote, asked of the kernel by its four-tuple over sock_diag
// (one hash lookup), or 0. /proc/net/tcp walks the whole hash table: 5 ms
// a read on a machine with a large one (clientInode, the fallback).
func diagInode(local, remote *net.TCPAddr) uint32 {
	l4, r4 := local.IP.To4(), remote.IP.To4()
	if l4 == nil || r4 == nil {
		return 0
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	// nlmsghdr (16 bytes), then inet_diag_req_v2: family, protocol, ext,
	// pad, states, and the socket id: sport, dport (big-endian), src[4],
	// dst[4], if, cookie[2] (INET_DIAG_NOCOOKIE).
	req := make([]byte, 16+56)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST)
	r := req[16:]
	r[0], r[1] = unix.AF_INET, unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(r[4:], ^uint32(0))
	binary.BigEndian.PutUint16(r[8:], uint16(local.Port))
	binary.BigEndian.PutUint16(r[10:], uint16(remote.Port))
	copy(r[12:], l4)
	copy(r[28:], r4)
	binary.NativeEndian.PutUint32(r[48:], ^uint32(0))
	binary.NativeEndian.PutUint32(r[52:], ^uint32(0))
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil || n < 16+72 {
		return 0
	}
	if binary.NativeEndian.Uint16(buf[4:]) != unix.SOCK_DIAG_BY_FAMILY {
		return 0 // NLMSG_ERROR: no such socket
	}
	// inet_diag_msg: family, state, timer, retrans, the id (48 bytes),
	// expires, rqueue, wqueue, uid, inode.
	return binary.NativeEndian.Uint32(buf[16+68:])
}

// clientInode is the inode of the established TCP socket of this
// network whose local port is local and remote port remote, or 0.
func clientInode(local, remote int) uint32 {
	sock, ok := ReadTCP("/proc/net", func(s TCPSocket) bool {
		return s.State == TCPEstablished && s.LocalPort == local && s.RemotePort == remote && s.Inode != "0"
	})
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(sock.Inode, 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// sessionHolds says a process of the call whose tool is sid has link (a
// socket:[inode]) among its open files: first the tool and its
// descendants (/proc/PID/task/TID/children: a few reads, where the tool's
// shell runs curl), then every process of its session, for one whose
// parent has exited (a few hundred /proc reads on a busy machine).
func sessionHolds(sid int, link string) bool {
	seen := map[int]bool{}
	queue := []int{sid}
	for len(queue) > 0 && len(seen) < 256 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if HoldsFile(pid, link) {
			return true
		}
		queue = append(queue, children(pid)...)
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || seen[pid] {
			continue
		}
		if _, s, ok := ProcStat(pid); !ok || s != sid {
			continue
		}
		if HoldsFile(pid, link) {
			return true
		}
	}
	return false
}

// children are pid's child processes, from each of its threads.
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
