package tools

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// killWithParent has the kernel SIGKILL the child when hush dies.
func killWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// keepInheritedHome marks every descriptor above stderr close-on-exec.
// Go opens its own files that way, but leaves alone what hush inherited
// from whoever started it (a shell's `exec 3<file`, a CI runner's or an
// IDE's pipes), and os/exec's children — a tool where the kernel refuses
// the sandbox, hush's own helpers — then inherited those too, readable at
// /proc/self/fd/N. A sandboxed start closes them itself.
func keepInheritedHome() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	ents, err := os.ReadDir("/proc/self/fd") // kernels before 5.11
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
