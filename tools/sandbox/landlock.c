//go:build linux && cgo
// The Landlock world's start (landlock_linux.go): where the kernel refuses
// the namespaces, a vfork'd child of hush restricts itself to the tool's
// ruleset — built by hush, in Go, once per view — and to a seccomp filter,
// then execs the tool. One exec, as a bare start: no second exec of hush,
// no Go runtime in the child.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "landlock.h"

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

#define HUSH_LL_FAIL 125

struct hush_ll_args {
	const char *path;
	char *const *argv;
	char *const *envp;
	const char *dir;
	int fds[3];
	int pdeathsig;
	int ruleset;
	unsigned int llflags;
	int netruleset; // a second layer: the call's TCP rule, or -1
	const struct sock_filter *filter;
	unsigned short nfilter;
	int root;
	int setid;
	uid_t uid;
	gid_t gid;
};

static void hush_ll_die(const char *what, const char *path) {
	int e = errno;
	char buf[4400];
	int n = snprintf(buf, sizeof buf, "hush sandbox (Landlock): %s%s%s: %s\n", what, path ? " " : "", path ? path : "", strerror(e));
	if (n > 0) {
		ssize_t w = write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
		(void)w;
	}
	_exit(HUSH_LL_FAIL);
}

// hush_ll_keep_cap: Docker's default capabilities, as the namespace
// sandbox keeps for a root tool (hush_sb_keep_cap).
static int hush_ll_keep_cap(int cap) {
	switch (cap) {
	case 0: case 1: case 3: case 4: case 5: case 6: case 7: case 8:
	case 10: case 13: case 18: case 27: case 29: case 31:
		return 1;
	}
	return 0;
}

// hush_ll_child runs in a child that shares hush's memory until it execs
// (vfork) and starts with every signal blocked: it touches only its stack
// and the arguments, and calls nothing that locks or allocates.
static int hush_ll_child(void *p) {
	struct hush_ll_args *a = p;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < 65; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP) {
			sigaction(sig, &dfl, NULL);
		}
	}
	int fds[3];
	int rs = fcntl(a->ruleset, F_DUPFD_CLOEXEC, 10);
	if (rs < 0) {
		_exit(HUSH_LL_FAIL);
	}
	int nrs = -1;
	if (a->netruleset >= 0 && (nrs = fcntl(a->netruleset, F_DUPFD_CLOEXEC, 10)) < 0) {
		_exit(HUSH_LL_FAIL);
	}
	for (int i = 0; i < 3; i++) {
		// Above 2 first, so that dup2 below cannot clobber one it needs.
		fds[i] = fcntl(a->fds[i], F_DUPFD_CLOEXEC, 10);
		if (fds[i] < 0) {
			_exit(HUSH_LL_FAIL);
		}
	}
	for (int i = 0; i < 3; i++) {
		if (dup2(fds[i], i) < 0) {
			_exit(HUSH_LL_FAIL);
		}
	}
	// The ruleset stays open as fd 3 (close-on-exec) until it is applied,
	// the call's network ruleset as fd 4; no other descriptor of hush's
	// is left.
	if ((rs = dup3(rs, 3, O_CLOEXEC)) < 0) {
		_exit(HUSH_LL_FAIL);
	}
	if (nrs >= 0 && (nrs = dup3(nrs, 4, O_CLOEXEC)) < 0) {
		_exit(HUSH_LL_FAIL);
	}
	syscall(436, nrs >= 0 ? 5U : 4U, ~0U, 0U); // close_range
	if (setsid() < 0) {
		hush_ll_die("setsid", NULL);
	}
	if (a->pdeathsig) {
		prctl(PR_SET_PDEATHSIG, a->pdeathsig, 0, 0, 0);
	}
	if (chdir(a->dir) != 0) {
		hush_ll_die("chdir", a->dir);
	}
	// A session keyring of its own, as in the namespace sandbox; the
	// filter below then refuses every keyring call. A kernel without
	// keyrings, or a container whose own filter refuses keyctl, has none
	// to give.
	if (syscall(SYS_keyctl, 1, NULL) < 0 && errno != ENOSYS && errno != EPERM) { // KEYCTL_JOIN_SESSION_KEYRING
		hush_ll_die("join a session keyring of its own", NULL);
	}
	if (a->setid) {
		// Spec.Credential: this user, with no supplementary groups. Raw
		// system calls: libc's set*id would signal every thread of the
		// process it believes this is — hush's.
		if (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setresgid, a->gid, a->gid, a->gid) != 0 ||
		    syscall(SYS_setresuid, a->uid, a->uid, a->uid) != 0) {
			hush_ll_die("change user", NULL);
		}
	}
	if (a->root && (!a->setid || a->uid == 0)) {
		// root: Docker's default capabilities and no others (the
		// bounding set bounds what root's exec gets).
		for (int cap = 0; cap < 64; cap++) {
			if (hush_ll_keep_cap(cap)) {
				continue;
			}
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
				if (errno == EINVAL) {
					break;
				}
				hush_ll_die("drop capabilities", NULL);
			}
		}
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		hush_ll_die("set no_new_privs", NULL);
	}
	// The call's own layer first: TCP connect only to its egress proxy's
	// port. Each restrict_self copies the domain it stacks on, so the
	// one-rule layer goes below the view's, which has a rule per path.
	if (nrs >= 0) {
		if (syscall(SYS_landlock_restrict_self, 4, 0U) != 0) {
			hush_ll_die("apply the Landlock network ruleset", NULL);
		}
		close(4);
	}
	if (syscall(SYS_landlock_restrict_self, 3, a->llflags) != 0) {
		hush_ll_die("apply the Landlock ruleset", NULL);
	}
	close(3);
	struct sock_fprog prog = {.len = a->nfilter, .filter = (struct sock_filter *)a->filter};
	if (a->nfilter > 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
		hush_ll_die("apply the seccomp filter", NULL);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(a->path, a->argv, a->envp);
	hush_ll_die("run", a->path);
	return 0;
}

// hush_ll_spawn starts path restricted to the Landlock ruleset and the
// seccomp filter, in a session of its own. It returns the child's pid, or
// -errno when clone failed; a set-up that fails later says why on the
// tool's stderr and exits 125. One start at a time (the caller holds
// spawnLock): the child's stack is made once.
int hush_ll_spawn(const char *path, char *const *argv, char *const *envp, const char *dir,
	int fd0, int fd1, int fd2, int pdeathsig, int ruleset, unsigned int llflags, int netruleset,
	const void *filter, unsigned short nfilter, int setid, unsigned int uid, unsigned int gid) {
	struct hush_ll_args a;
	memset(&a, 0, sizeof a);
	a.path = path;
	a.argv = argv;
	a.envp = envp;
	a.dir = dir;
	a.fds[0] = fd0;
	a.fds[1] = fd1;
	a.fds[2] = fd2;
	a.pdeathsig = pdeathsig;
	a.ruleset = ruleset;
	a.llflags = llflags;
	a.netruleset = netruleset;
	a.filter = filter;
	a.nfilter = nfilter;
	a.root = getuid() == 0;
	a.setid = setid;
	a.uid = uid;
	a.gid = gid;
	static char *stack;
	const size_t stack_size = 256 << 10;
	if (stack == NULL) {
		char *s = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (s == MAP_FAILED) {
			return -errno;
		}
		stack = s;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int pid = clone(hush_ll_child, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	int e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pid < 0 ? -e : pid;
}
