//go:build linux

package sandbox

import (
	"runtime"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The Landlock world's seccomp filter: what Landlock does not cover. It is
// classic BPF written out here rather than built with libseccomp (a C
// library and a cgo dependency for a dozen instructions): a check of the
// architecture, then a few system calls refused with EPERM —
//
//   - keyctl, add_key, request_key: the user's kernel keys (a key with
//     user-read permission is read by its serial), as Docker's default
//     profile refuses them;
//   - io_uring_setup/enter/register: io_uring's own socket and open
//     operations do not pass through this filter;
//   - ioctl TIOCSTI and TIOCLINUX: typing into a terminal;
//   - socket(AF_UNIX) unless the view allows the user's sockets: before
//     Landlock ABI 9 nothing else stops a connect(2) to a named socket the
//     user can reach (the X server, an ssh ControlMaster, a session bus,
//     Docker's and containerd's, for root); socketpair(2) stays, and so do
//     pipes;
//   - socket(AF_INET, AF_INET6, AF_PACKET) when the tool's network is
//     off: Landlock's TCP rules do not cover UDP or raw sockets;
//   - when its network is "proxy" (TCP only to hush's egress proxy,
//     through Landlock's connect rule): every socket but a unix one (as
//     above), a netlink one, and a TCP one of AF_INET or AF_INET6 —
//     no UDP (DNS included: the proxy resolves names), no raw socket, no
//     AF_PACKET (root keeps CAP_NET_RAW), no SCTP or MPTCP, which
//     Landlock's TCP rules may not see; and sendto, sendmsg and sendmmsg
//     with MSG_FASTOPEN, a TCP connect that does not pass through
//     connect(2);
//   - and, on x86-64, every x32 call (a second numbering of the same
//     calls).
//
// A call of another architecture (i386 through int 0x80) kills the tool.

// seccomp_data offsets: nr (int), arch (u32), instruction pointer (u64),
// then six u64 arguments; loads read 32-bit words in native order, so an
// argument's low word is at its offset on the little-endian machines hush
// builds the filter for.
const (
	seccompNr   = 0
	seccompArch = 4
	seccompArg0 = 16
	seccompArg1 = 24
	seccompArg2 = 32
	seccompArg3 = 40
	x32Bit      = 0x40000000
)

// seccompArch is this build's AUDIT_ARCH, 0 where hush has no filter.
func seccompAuditArch() uint32 {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64
	}
	return 0
}

// A tool's network in the Landlock world, as the filter sees it.
type netMode int

const (
	netHost  netMode = iota // the host's network, unfiltered
	netNone                 // no internet socket at all
	netProxy                // TCP only (Landlock allows only the proxy's port)
)

// landlockFilter returns the filter for a tool with sockets (named unix
// sockets allowed) and network mode, or nil where hush has no filter for
// this architecture.
func landlockFilter(sockets bool, mode netMode) []bpf.RawInstruction {
	arch := seccompAuditArch()
	if arch == 0 {
		return nil
	}
	var p prog
	p.load(seccompArch)
	p.jumpUnless(arch, "kill")
	p.load(seccompNr)
	if runtime.GOARCH == "amd64" {
		p.add(bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit}, "eperm", "")
	}
	for _, nr := range []uint32{unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER} {
		p.jumpIf(nr, "eperm")
	}
	p.jumpIf(unix.SYS_IOCTL, "ioctl")
	var domains []uint32
	if !sockets {
		domains = append(domains, unix.AF_UNIX)
	}
	if mode == netNone {
		domains = append(domains, unix.AF_INET, unix.AF_INET6, unix.AF_PACKET)
	}
	if len(domains) > 0 || mode == netProxy {
		p.jumpIf(unix.SYS_SOCKET, "socket")
	}
	if mode == netProxy {
		p.jumpIf(unix.SYS_SENDTO, "flags3")
		p.jumpIf(unix.SYS_SENDMMSG, "flags3")
		p.jumpIf(unix.SYS_SENDMSG, "flags2")
	}
	p.ret(unix.SECCOMP_RET_ALLOW)
	p.label("ioctl")
	p.load(seccompArg1)
	p.jumpIf(unix.TIOCSTI, "eperm")
	p.jumpIf(unix.TIOCLINUX, "eperm")
	p.ret(unix.SECCOMP_RET_ALLOW)
	if len(domains) > 0 || mode == netProxy {
		p.label("socket")
		p.load(seccompArg0)
		for _, d := range domains {
			p.jumpIf(d, "eperm")
		}
		if mode == netProxy {
			p.jumpIf(unix.AF_INET, "inet")
			p.jumpIf(unix.AF_INET6, "inet")
			p.jumpIf(unix.AF_UNIX, "allow")
			p.jumpIf(unix.AF_NETLINK, "allow")
			p.add(bpf.Jump{}, "eperm", "")
			// TCP: the type without SOCK_NONBLOCK and SOCK_CLOEXEC
			// is SOCK_STREAM, the protocol 0 or IPPROTO_TCP.
			p.label("inet")
			p.load(seccompArg1)
			p.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xff}, "", "")
			p.jumpUnless(unix.SOCK_STREAM, "eperm")
			p.load(seccompArg2)
			p.jumpIf(0, "allow")
			p.jumpIf(unix.IPPROTO_TCP, "allow")
			p.add(bpf.Jump{}, "eperm", "")
			p.label("flags3")
			p.load(seccompArg3)
			p.add(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.MSG_FASTOPEN}, "eperm", "")
			p.add(bpf.Jump{}, "allow", "")
			p.label("flags2")
			p.load(seccompArg2)
			p.add(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.MSG_FASTOPEN}, "eperm", "")
			p.label("allow")
		}
		p.ret(unix.SECCOMP_RET_ALLOW)
	}
	p.label("eperm")
	p.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	p.label("kill")
	p.ret(unix.SECCOMP_RET_KILL_PROCESS)
	return p.assemble()
}

// prog is a classic BPF program with jumps to labels, resolved by assemble.
type prog struct {
	ins    []bpf.Instruction
	jt, jf []string // per instruction: jump labels ("" = the next one)
	labels map[string]int
}

func (p *prog) add(i bpf.Instruction, jt, jf string) {
	p.ins = append(p.ins, i)
	p.jt = append(p.jt, jt)
	p.jf = append(p.jf, jf)
}

func (p *prog) load(off uint32) { p.add(bpf.LoadAbsolute{Off: off, Size: 4}, "", "") }
func (p *prog) ret(v uint32)    { p.add(bpf.RetConstant{Val: v}, "", "") }
func (p *prog) jumpIf(v uint32, to string) {
	p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: v}, to, "")
}
func (p *prog) jumpUnless(v uint32, to string) {
	p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: v}, "", to)
}

func (p *prog) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

func (p *prog) assemble() []bpf.RawInstruction {
	skip := func(i int, l string) uint8 {
		if l == "" {
			return 0
		}
		t, ok := p.labels[l]
		if !ok || t <= i || t-i-1 > 255 {
			panic("seccomp filter: bad jump to " + l)
		}
		return uint8(t - i - 1)
	}
	out := make([]bpf.Instruction, len(p.ins))
	for i, in := range p.ins {
		switch j := in.(type) {
		case bpf.JumpIf:
			j.SkipTrue, j.SkipFalse = skip(i, p.jt[i]), skip(i, p.jf[i])
			in = j
		case bpf.Jump:
			j.Skip = uint32(skip(i, p.jt[i]))
			in = j
		}
		out[i] = in
	}
	raw, err := bpf.Assemble(out)
	if err != nil {
		panic("seccomp filter: " + err.Error())
	}
	return raw
}
