//go:build linux && cgo

// The limits of one host tool call (Limits, limits.go), set by the
// sandbox's init after its namespaces exist and before the tool runs
// (hush_sb_mount_proc in sandbox.c calls it in both ways in). The plan's
// flags word carries them: "p<n>" at most n processes, "m<n>" at most n
// bytes of memory per process. The flag letters the rest of the set-up
// reads are capitals, so these lower-case ones and their digits pass
// through it unseen.
//
// Processes, two ways, each where the kernel gives it:
//   - pid_max of the call's own PID namespace (Linux 6.14 made it a
//     per-namespace setting): no task of the call, a thread or a process of
//     a namespace it nests, gets a pid past it. It is set to n + 301: the
//     kernel keeps the first 300 pids of a namespace for its start and does
//     not hand them out again once it has gone past them, so n + 301 leaves
//     n for a call that has run a long time (a dev server, an MCP server),
//     and hush's watch (limits_linux.go) stops the call at n processes.
//     It holds for root too.
//   - RLIMIT_NPROC, set inside the call's new user namespace: since Linux
//     5.14 it counts the tasks of that user in that namespace, which is
//     this call alone (and whatever it nests), not the user's processes
//     elsewhere. The kernel never applies it to root (uid 0 of the host,
//     which root's sandbox maps to itself).
// Memory: RLIMIT_DATA, per process (a process's heap and private writable
// mappings), which every descendant inherits, set a quarter above the
// call's max_memory (Limits.dataLimit): the call's sum is hush's watch
// (WatchLimits), which stops the call; this fails an allocation that would
// pass it at once (docs/sandbox.md).

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "limits.h"

// hush_sb_flag_number returns the number after letter in flags, or 0.
static unsigned long long hush_sb_flag_number(const char *flags, char letter) {
	const char *p = strchr(flags, letter);
	if (p == NULL) {
		return 0;
	}
	return strtoull(p + 1, NULL, 10);
}

void hush_sb_limits(const char *flags) {
	unsigned long long procs = hush_sb_flag_number(flags, 'p');
	unsigned long long mem = hush_sb_flag_number(flags, 'm');
	// Only the init of a namespace of the call's own may set pid_max: the
	// setting is the caller's PID namespace's, and hush's is the host's.
	if (procs > 0 && getpid() == 1) {
		char n[32];
		int len = snprintf(n, sizeof n, "%llu", procs + 301);
		int fd = open("/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			// Refused before Linux 6.14 (the setting is the host's):
			// RLIMIT_NPROC below still holds for a user other than root.
			ssize_t w = write(fd, n, (size_t)len);
			(void)w;
			close(fd);
		}
	}
	if (procs > 0) {
		struct rlimit rl = {procs, procs};
		setrlimit(RLIMIT_NPROC, &rl);
	}
	if (mem > 0) {
		struct rlimit rl = {mem, mem};
		setrlimit(RLIMIT_DATA, &rl);
	}
}
