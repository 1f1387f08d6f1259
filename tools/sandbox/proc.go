package sandbox

// What hush asks of /proc about other processes and sockets, read in one
// place: the TCP sockets of a network, which process holds a socket, a
// process's parent and session — for the Landlock proxy's owner check
// (proxyowner_linux.go), the session's local-service forwards
// (tools.Listeners) and the check of who listens where hush sends a
// secret (session/ownconn.go).

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// TCP states as /proc/net/tcp writes them.
const (
	TCPEstablished = "01"
	TCPListen      = "0A"
)

// TCPSocket is one TCP socket of a network.
type TCPSocket struct {
	State      string // TCPEstablished, TCPListen, …
	LocalAddr  string // as the kernel writes it: "0100007F" is 127.0.0.1
	LocalPort  int
	RemotePort int
	Inode      string // as in a /proc/PID/fd link "socket:[INODE]"
}

// ReadTCP reads the TCP sockets, IPv4 and IPv6, of the network netDir shows
// ("/proc/net" for hush's own, "/proc/PID/net" for a process's) and calls
// visit with each until visit returns true; it returns that socket, or
// false when visit never did.
func ReadTCP(netDir string, visit func(TCPSocket) (stop bool)) (TCPSocket, bool) {
	for _, f := range []string{"tcp", "tcp6"} {
		fh, err := os.Open(netDir + "/" + f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 {
				continue
			}
			addr, lport, ok1 := cutPort(fields[1])
			_, rport, ok2 := cutPort(fields[2])
			if !ok1 || !ok2 {
				continue
			}
			s := TCPSocket{State: fields[3], LocalAddr: addr, LocalPort: lport, RemotePort: rport, Inode: fields[9]}
			if visit(s) {
				fh.Close()
				return s, true
			}
		}
		fh.Close()
	}
	return TCPSocket{}, false
}

// cutPort splits "ADDR:PORT" (hex) into the address and the port.
func cutPort(s string) (string, int, bool) {
	addr, port, ok := strings.Cut(s, ":")
	p, err := strconv.ParseUint(port, 16, 16)
	return addr, int(p), ok && err == nil
}

// HoldsFile says pid has one of links (a "socket:[INODE]", say) among its
// open files.
func HoldsFile(pid int, links ...string) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		l, err := os.Readlink(dir + fd.Name())
		if err != nil {
			continue
		}
		for _, want := range links {
			if l == want {
				return true
			}
		}
	}
	return false
}

// ProcStat is pid's parent and session, from /proc/PID/stat; ok is false when
// it cannot be read.
func ProcStat(pid int) (ppid, sid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp session …: comm may hold spaces and
	// parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	fs := strings.Fields(s[i+1:])
	if len(fs) < 4 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(fs[1])
	sid, err2 := strconv.Atoi(fs[3])
	return ppid, sid, err1 == nil && err2 == nil
}
