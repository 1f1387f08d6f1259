//go:build linux && cgo

package tools

// The reaper: what takes a tool's whole process tree down with hush where
// the sandbox's PID namespace does not (the kernel refused namespaces, or
// [unsafe] no_sandbox).
//
// The kernel's parent-death signal reaches only direct children: SIGKILL
// of hush during a call left 2 processes of a bash call, 4 with a
// background process and 3 with an MCP server, re-parented to pid 1. So an
// unsandboxed child is started as /proc/self/exe with argv[0]
// reaperArg0: this C constructor, before any Go runtime exists, makes
// itself a child subreaper (PR_SET_CHILD_SUBREAPER: every orphan of the
// tree below it is re-parented to it, not to pid 1), asks for SIGTERM when
// hush dies (PR_SET_PDEATHSIG, replacing the spawn layer's SIGKILL, which
// it could not act on), forks and execs the tool, and waits. When the tool
// exits, what it left running is killed (everything dies with the call, as
// in the sandbox's namespace) and the reaper exits with the tool's status
// (dying of the same signal if the tool did), so hush sees what it saw
// before. When hush dies first — or
// stops the tool: KillGroup asks the reaper (SIGUSR1) before it kills the
// group — it kills every child it has or adopts, round after round, until
// it has none left, and only then exits: grandchildren in other sessions
// and process groups (`setsid sleep &`) are reaped too.
//
// Cost: one exec of hush and one fork, in C (no Go runtime start), only
// on the path without a sandbox; the sandbox's own init reaps its
// namespace. argv carries hush's pid, so a reaper whose hush is already
// gone when it starts runs nothing.

/*
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HUSH_REAPER_ARG0 "hush-reaper"

// hush_reaper_kill_all kills each child of the reaper (and the group each
// leads) until waitpid says none is left. Killing a child hands its own
// children to the reaper (a subreaper adopts every orphan below it), so
// round by round the whole tree is reached, whatever session or group its
// processes moved to. Never kill(-getpid()): the reaper leads the tool's
// group, and would kill itself before it was done.
static void hush_reaper_kill_all(void) {
	pid_t self = getpid();
	for (int round = 0; round < 500; round++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)self);
		FILE *f = fopen(path, "re");
		if (f != NULL) {
			int pid;
			while (fscanf(f, "%d", &pid) == 1) {
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
			}
			fclose(f);
		}
		int reaped = 0;
		pid_t p;
		while ((p = waitpid(-1, NULL, WNOHANG)) > 0) {
			reaped = 1;
		}
		if (p < 0 && errno == ECHILD) {
			return;
		}
		if (!reaped) {
			struct timespec ts = {0, 2 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
}

// hush_reaper_exit ends the reaper the way the tool ended.
static void hush_reaper_exit(int status) {
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		signal(sig, SIG_DFL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); // no core of the reaper
		kill(getpid(), sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

__attribute__((constructor(102))) static void hush_reaper(int argc, char **argv, char **envp) {
	if (argc < 4 || argv == NULL || argv[0] == NULL || strcmp(argv[0], HUSH_REAPER_ARG0) != 0) {
		return;
	}
	// argv: hush-reaper HUSH_PID PROGRAM ARGV0 ARGS...
	pid_t hush = (pid_t)atoi(argv[1]);
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 || prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0) {
		fprintf(stderr, "hush reaper: %s\n", strerror(errno));
		_exit(125);
	}
	if (getppid() != hush) {
		_exit(137); // hush died before the tool could start
	}
	pid_t child = fork();
	if (child < 0) {
		fprintf(stderr, "hush reaper: fork: %s\n", strerror(errno));
		_exit(125);
	}
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
		prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0); // the reaper outlives the tool
		execve(argv[2], argv + 3, envp);
		fprintf(stderr, "hush: %s: %s\n", argv[2], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	for (;;) {
		int status;
		pid_t p;
		while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
			if (p == child) {
				// Everything the tool left behind dies with the call, as
				// in the sandbox's namespace.
				hush_reaper_kill_all();
				hush_reaper_exit(status);
			}
		}
		struct timespec ts = {1, 0};
		siginfo_t info;
		int sig = sigtimedwait(&set, &info, &ts);
		if (getppid() != hush || (sig == SIGUSR1 && info.si_pid == hush)) {
			// hush died, or is stopping the tool (KillGroup): take the
			// whole tree down, then go.
			hush_reaper_kill_all();
			_exit(137);
		}
		if (sig == SIGTERM || sig == SIGHUP || sig == SIGINT) {
			// From hush (its group kill reaches the tool by itself) or from
			// someone who signalled only this pid: pass it on.
			if (info.si_pid != hush) {
				kill(child, sig);
			}
		}
	}
}
*/
import "C"

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// reaperBuilt says the reaper is in this binary.
const reaperBuilt = true

// reaperArg0 is the argv[0] the C reaper answers to.
const reaperArg0 = "hush-reaper"

// selfExe is this very binary: the reaper is hush re-run (the sandbox's
// init is too, tools/sandbox).
const selfExe = "/proc/self/exe"

// reapTree makes cmd, set up by Command for prog, start under the reaper
// when nothing else takes its tree down with hush: not for a sandboxed
// child (its namespace does), nor for one meant to outlive hush.
func reapTree(cmd *exec.Cmd, prog string, spec Spec) {
	if spec.Outlive || cmd.Path == selfExe {
		return
	}
	cmd.Args = append([]string{reaperArg0, strconv.Itoa(os.Getpid()), prog}, cmd.Args...)
	cmd.Path = selfExe
}

// reaperTakeDown asks the reaper leading group pid, if it is one, to kill
// its whole tree — adopted orphans in other sessions included, which a
// group kill misses — and waits, boundedly, until it has.
func reaperTakeDown(pid int) {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !bytes.HasPrefix(cmdline, []byte(reaperArg0+"\x00")) {
		return
	}
	if unix.Kill(pid, unix.SIGUSR1) != nil {
		return
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		var info unix.Siginfo
		if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil || info.Signo == int32(unix.SIGCHLD) {
			return // exited (a zombie for its Wait) or already reaped
		}
	}
}
