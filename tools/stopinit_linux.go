package tools

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// termDropped reports whether a SIGTERM to pid can do nothing at all: pid is
// the init of a PID namespace below hush's (a sandboxed tool exec'd as its
// namespace's first process), it has no handler for SIGTERM — so the kernel
// drops the signal, since the namespace's init is spared every signal it did
// not ask for — and it has no child that the signal could reach instead.
// Stopping such a tool by SIGTERM would only wait out the grace period
// before the SIGKILL; KillGroup sends the SIGKILL at once instead.
//
// A tool with a TERM handler keeps its graceful stop, and so does an init
// with children (a shell waiting for a program that may handle TERM and
// clean up, after which the shell exits too). Anything unreadable counts as
// "may be delivered": the grace period stays.
func termDropped(pid int) bool {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	nsInit, handled := false, true
	for _, line := range strings.Split(string(status), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		switch key {
		case "State":
			// A zombie has nothing to stop.
			if len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				return false
			}
		case "NSpid":
			// "NSpid: <pid here> … <pid in its own namespace>": 1 at the
			// end of more than one level is a child namespace's init.
			nsInit = len(f) > 1 && f[len(f)-1] == "1"
		case "SigCgt":
			if len(f) == 1 {
				mask, err := strconv.ParseUint(f[0], 16, 64)
				// Bit n-1 of SigCgt is signal n.
				handled = err != nil || mask&(1<<(syscall.SIGTERM-1)) != 0
			}
		}
	}
	if !nsInit || handled {
		return false
	}
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, t := range tasks {
		kids, err := os.ReadFile(t)
		if err != nil || len(strings.TrimSpace(string(kids))) > 0 {
			return false
		}
	}
	return true
}
