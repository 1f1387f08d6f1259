package mcp

import "golang.org/x/sys/unix"

// exitedUnreaped reports whether the child pid has exited: it is a zombie
// (waitid with WNOWAIT, which leaves the status for hush's own Wait) or
// already reaped (no such process). It closes the moment between a
// server's exit and hush's reaper and watcher saying so.
func exitedUnreaped(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err == nil && info.Signo == int32(unix.SIGCHLD) {
		return true
	}
	return unix.Kill(pid, 0) == unix.ESRCH
}
