//go:build linux && cgo

package tools

// The sandbox init: the steps between hush's fork and the tool's exec, in C,
// run before the Go runtime exists.
//
// The spawn layer (sandbox_linux.go) starts every sandboxed child as
// /proc/self/exe — hush itself, or the test binary — with argv[0]
// sandboxInitArg0 and the plan on fd 3. This constructor, of higher
// priority than any other, sees that argv[0] and never returns to the Go
// runtime. It unshares new user, mount and PID namespaces (and network,
// when the tool's network is off) with the user mapped to itself, hides each masked
// path, gives root a /dev without disks, brings up lo, drops root's
// capabilities to Docker's default set,
// sets no_new_privs and a Landlock scope, and forks the namespace's init,
// which mounts the namespace's /proc, forks and execs the tool, reaps
// orphans and exits with the tool's status — which kills everything left
// in the namespace (a `setsid sleep &` too). This process waits outside
// the PID namespace and exits with the same status.
//
// Why not clone flags on os/exec: with CLONE_NEWUSER Go forks hush's
// whole address space instead of vfork'ing, and the mounts need code in
// the child anyway. Why C: a Go runtime costs milliseconds to start, and
// a tool call's budget is a fraction of that. Why not bubblewrap, which
// does the same: measured interleaved with the same masks (scripts/bench,
// BenchmarkSandboxedCall, 2 shared cores under load 8-12), `bash -c true`
// took 2.4-6.0 ms in this sandbox, 4.6-13.4 ms through bwrap, 0.9-1.2 ms
// bare: bwrap costs about twice as much, is one more package to install,
// and its errors are not hush's sentences. What the design still pays over
// a bare exec, in order: one exec of hush's binary (about half a bare
// call), three processes where a bare call has one, and the namespaces'
// set-up and teardown; reaching 1.5x needs the set-up done in a vfork'd
// child of hush itself (no second exec), which os/exec cannot host.
//
// The plan on fd 3 is NUL-separated: the magic, a flags word, then one
// "F<path>" (bind an empty read-only file over it) or "D<path>" (an empty
// read-only tmpfs over it) per mask, after one "P<path>" (bind the
// directory onto itself, recursively: it stays as it was, but a mount
// point cannot be renamed or removed) per directory above hush's own dirs,
// outermost first. Flags: N a network namespace with
// only lo; T probe: stop once the namespace's /proc is mounted, exit 0;
// L Landlock only, where the kernel refuses the namespaces: no_new_privs
// and the Landlock scope, then exec the tool in place.

/*
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

#define HUSH_SB_ARG0 "hush-sandbox-init"
#define HUSH_SB_MAGIC "HUSHSB1"
#define HUSH_SB_FAIL 125

struct hush_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

struct hush_ll_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};

static void hush_sb_die(const char *what, const char *path) {
	int e = errno;
	char buf[4400];
	int n = snprintf(buf, sizeof buf, "hush sandbox: %s%s%s: %s\n", what, path ? " " : "", path ? path : "", strerror(e));
	if (n > 0) {
		ssize_t w = write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
		(void)w;
	}
	_exit(HUSH_SB_FAIL);
}

static int hush_sb_write_file(const char *path, const char *text) {
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		return -1;
	}
	size_t n = strlen(text);
	ssize_t w = write(fd, text, n);
	int e = errno;
	close(fd);
	errno = e;
	return w == (ssize_t)n ? 0 : -1;
}

// hush_sb_skippable: a path the init cannot reach (gone since the plan, or
// behind a directory this user cannot search) is one the tool cannot reach
// either: it runs with the same ids and, in its own namespace, no more.
static int hush_sb_skippable(int e) { return e == ENOENT || e == EACCES || e == ENOTDIR || e == ELOOP; }

static int hush_sb_readonly(const char *path) {
	struct hush_mount_attr a = {0};
	a.attr_set = 0x1 | 0x2 | 0x4 | 0x8; // RDONLY NOSUID NODEV NOEXEC
	return (int)syscall(SYS_mount_setattr, -1, path, 0x100, &a, sizeof a); // AT_SYMLINK_NOFOLLOW
}

static char *hush_sb_read_plan(size_t *len) {
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (buf == NULL) {
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		ssize_t r = pread(3, buf + n, cap - n, (off_t)n);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0) {
			break;
		}
		n += (size_t)r;
	}
	*len = n;
	return buf;
}

// hush_sb_keep_caps are Docker's default capabilities for a container's
// root: file ownership and permission, kill, setuid/setgid, chroot, mknod,
// raw and low-port sockets, audit writes.
static int hush_sb_keep_cap(int cap) {
	switch (cap) {
	case 0:  // CAP_CHOWN
	case 1:  // CAP_DAC_OVERRIDE
	case 3:  // CAP_FOWNER
	case 4:  // CAP_FSETID
	case 5:  // CAP_KILL
	case 6:  // CAP_SETGID
	case 7:  // CAP_SETUID
	case 8:  // CAP_SETPCAP
	case 10: // CAP_NET_BIND_SERVICE
	case 13: // CAP_NET_RAW
	case 18: // CAP_SYS_CHROOT
	case 27: // CAP_MKNOD
	case 29: // CAP_AUDIT_WRITE
	case 31: // CAP_SETFCAP
		return 1;
	}
	return 0;
}

static void hush_sb_drop_caps(void) {
	for (int cap = 0; cap < 64; cap++) {
		if (hush_sb_keep_cap(cap)) {
			continue;
		}
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
			hush_sb_die("drop capabilities", NULL);
		}
	}
}


// hush_sb_landlock_scope applies the Landlock scope (ABI 6): no connecting
// to an abstract unix socket made outside the sandbox (a session bus at an
// abstract address) and no signals out of it. An older kernel does without.
// no_new_privs must be set.
static void hush_sb_landlock_scope(void) {
	int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, 1U);
	if (abi >= 6) {
		struct hush_ll_attr la = {0, 0, 0x1 | 0x2};
		int lfd = (int)syscall(SYS_landlock_create_ruleset, &la, sizeof la, 0U);
		if (lfd < 0 || syscall(SYS_landlock_restrict_self, lfd, 0U) != 0) {
			hush_sb_die("apply the Landlock scope", NULL);
		}
		close(lfd);
	}
}

static void hush_sb_noop(int sig) { (void)sig; }

// hush_sb_minimal_dev replaces /dev, for root, with a tmpfs holding only
// what programs need: null, zero, full, random, urandom and tty bound from
// the host, a devpts of its own, a tmpfs /dev/shm and the usual links. A
// root tool keeps root's ownership of the host's device nodes, so the
// host's /dev would let it read a disk — and the vault file on it — raw.
// It is built on the scratch tmpfs (/proc here) and moved into place.
static void hush_sb_minimal_dev(void) {
	if (mkdir("/proc/dev", 0755) != 0 ||
	    mount("tmpfs", "/proc/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") != 0) {
		hush_sb_die("make a minimal /dev", NULL);
	}
	const char *nodes[] = {"null", "zero", "full", "random", "urandom", "tty", 0};
	char src[64], dst[64];
	for (int i = 0; nodes[i]; i++) {
		snprintf(src, sizeof src, "/dev/%s", nodes[i]);
		snprintf(dst, sizeof dst, "/proc/dev/%s", nodes[i]);
		int fd = open(dst, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
		if (fd < 0) {
			hush_sb_die("make a minimal /dev", dst);
		}
		close(fd);
		if (mount(src, dst, NULL, MS_BIND, NULL) != 0) {
			hush_sb_die("make a minimal /dev", src);
		}
	}
	if (mkdir("/proc/dev/pts", 0755) != 0 ||
	    mount("devpts", "/proc/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") != 0) {
		hush_sb_die("make a minimal /dev", "/dev/pts");
	}
	if (mkdir("/proc/dev/shm", 01777) != 0 ||
	    mount("tmpfs", "/proc/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
		hush_sb_die("make a minimal /dev", "/dev/shm");
	}
	const char *links[][2] = {{"pts/ptmx", "/proc/dev/ptmx"}, {"/proc/self/fd", "/proc/dev/fd"},
		{"/proc/self/fd/0", "/proc/dev/stdin"}, {"/proc/self/fd/1", "/proc/dev/stdout"}, {"/proc/self/fd/2", "/proc/dev/stderr"}, {0, 0}};
	for (int i = 0; links[i][0]; i++) {
		if (symlink(links[i][0], links[i][1]) != 0) {
			hush_sb_die("make a minimal /dev", links[i][1]);
		}
	}
	if (mount("/proc/dev", "/dev", NULL, MS_MOVE, NULL) != 0) {
		hush_sb_die("make a minimal /dev", "/dev");
	}
}

// hush_sb_wait waits for pid and exits with its status; other children
// (orphans of the namespace, for its init) are reaped on the way.
static void hush_sb_wait(pid_t pid) {
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, 0);
		if (w < 0) {
			if (errno == EINTR) {
				continue;
			}
			_exit(HUSH_SB_FAIL);
		}
		if (w == pid) {
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
	}
}

__attribute__((constructor(101))) static void hush_sandbox_init(int argc, char **argv, char **envp) {
	if (argc < 1 || argv == NULL || argv[0] == NULL || strcmp(argv[0], HUSH_SB_ARG0) != 0) {
		return;
	}
	size_t len = 0;
	char *plan = hush_sb_read_plan(&len);
	if (plan == NULL) {
		hush_sb_die("read the plan", NULL);
	}
	close(3);
	if (len < sizeof HUSH_SB_MAGIC || memcmp(plan, HUSH_SB_MAGIC, sizeof HUSH_SB_MAGIC) != 0 || plan[len - 1] != 0) {
		errno = EINVAL;
		hush_sb_die("read the plan", NULL);
	}
	const char *flags = plan + sizeof HUSH_SB_MAGIC;
	const char *masks = flags + strlen(flags) + 1;
	const char *end = plan + len;
	int net = 0, probe = 0, landlock_only = 0;
	for (const char *f = flags; *f; f++) {
		switch (*f) {
		case 'N': net = 1; break;
		case 'T': probe = 1; break;
		case 'L': landlock_only = 1; break;
		}
	}
	if (!probe && argc < 3) {
		errno = EINVAL;
		hush_sb_die("no program to run", NULL);
	}
	if (landlock_only) {
		// The kernel refused the namespaces: the second layer only.
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
			hush_sb_die("set no_new_privs", NULL);
		}
		hush_sb_landlock_scope();
		if (probe) {
			_exit(0);
		}
		execve(argv[1], argv + 2, envp);
		hush_sb_die("run", argv[1]);
	}
	uid_t uid = getuid();
	gid_t gid = getgid();
	int root = uid == 0;
	// New user, mount and PID namespaces (and network, when the tool's
	// network is off), the user mapped to itself and no other id. The
	// creator of a user namespace holds every capability in it until it
	// execs, so this init may mount without being root there; the tool,
	// which execs as the user it is, holds none (root keeps Docker's
	// default set, below). The PID namespace takes effect for the
	// children: the first is its init.
	//
	// Root is mapped alone too: a map of every id needs a helper process
	// in the parent namespace, and that hand-off cost a tool call more
	// than all the rest of the sandbox on a busy machine. So a root tool
	// cannot override the permissions of files other users own.
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (net ? CLONE_NEWNET : 0)) != 0) {
		hush_sb_die("create the namespaces", NULL);
	}
	char map[64];
	snprintf(map, sizeof map, "%ld %ld 1\n", (long)uid, (long)uid);
	if (hush_sb_write_file("/proc/self/uid_map", map) != 0) {
		hush_sb_die("write", "uid_map");
	}
	if (hush_sb_write_file("/proc/self/setgroups", "deny") != 0) {
		hush_sb_die("write", "setgroups");
	}
	snprintf(map, sizeof map, "%ld %ld 1\n", (long)gid, (long)gid);
	if (hush_sb_write_file("/proc/self/gid_map", map) != 0) {
		hush_sb_die("write", "gid_map");
	}
	// Nothing mounted here may reach the parent's namespace.
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		hush_sb_die("make / private", NULL);
	}
	// The empty file bound over masked files lives on a private scratch
	// tmpfs over /proc, which the namespace's own /proc then covers.
	if (mount("tmpfs", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k") != 0) {
		hush_sb_die("mount a tmpfs for the empty file", NULL);
	}
	int efd = open("/proc/empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
	if (efd < 0) {
		hush_sb_die("create the empty file", NULL);
	}
	close(efd);
	for (const char *m = masks; m < end && *m; m += strlen(m) + 1) {
		const char *p = m + 1;
		if (*m == 'F') {
			if (mount("/proc/empty", p, NULL, MS_BIND, NULL) != 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("hide", p);
			}
			if (hush_sb_readonly(p) != 0) {
				hush_sb_die("make read-only", p);
			}
		} else if (*m == 'P') {
			if (mount(p, p, NULL, MS_BIND | MS_REC, NULL) != 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("pin", p);
			}
		} else if (*m == 'D') {
			if (mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k,nr_inodes=2") != 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("hide", p);
			}
		}
	}
	// The working directory was entered before any of these mounts: left
	// as it is, it stays on the mount underneath a pinned directory above
	// it, where relative paths see none of the masks on top. Enter it again
	// by its path, through the mounts as they are now.
	{
		char cwd[4096];
		if (getcwd(cwd, sizeof cwd) == NULL || chdir(cwd) != 0) {
			hush_sb_die("enter the working directory again", NULL);
		}
	}
	if (root) {
		hush_sb_minimal_dev();
	}
	// The scratch tmpfs stays under the namespace's /proc, which the init
	// below mounts over it: unmounting it here would wait for an RCU grace
	// period on every call, and the namespace's end frees it with the rest.
	if (net) {
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		struct ifreq ifr;
		memset(&ifr, 0, sizeof ifr);
		strcpy(ifr.ifr_name, "lo");
		if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
			hush_sb_die("bring up the loopback interface", NULL);
		}
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) {
			hush_sb_die("bring up the loopback interface", NULL);
		}
		close(s);
	}
	if (root) {
		// Root: the tool stays root of this namespace, with root's file
		// access, but only Docker's default capabilities — no
		// CAP_SYS_ADMIN to unmount a mask, no CAP_SYS_PTRACE — and
		// those only over this namespace. A user namespace it makes
		// itself gets all capabilities, but there every mount is locked.
		hush_sb_drop_caps();
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		hush_sb_die("set no_new_privs", NULL);
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	hush_sb_landlock_scope();
	// This process stays outside the PID namespace and waits for its init.
	// hush's SIGTERM reaches the tool directly (it is in this process
	// group); here it must not end the wait, so it gets a handler that
	// does nothing — which exec resets, unlike SIG_IGN.
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = hush_sb_noop;
	sigemptyset(&sa.sa_mask);
	const int quiet[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, 0};
	for (int i = 0; quiet[i]; i++) {
		sigaction(quiet[i], &sa, NULL);
	}
	pid_t nsinit = fork();
	if (nsinit < 0) {
		hush_sb_die("fork the namespace's init", NULL);
	}
	if (nsinit == 0) {
		// PID 1 of the namespace. It dies with the process above (which
		// dies with hush), and the namespace dies with it.
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
			hush_sb_die("mount /proc for the new PID namespace", NULL);
		}
		if (probe) {
			_exit(0);
		}
		pid_t tool = fork();
		if (tool < 0) {
			hush_sb_die("fork the tool", NULL);
		}
		if (tool == 0) {
			for (int i = 0; quiet[i]; i++) {
				signal(quiet[i], SIG_DFL);
			}
			prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
			execve(argv[1], argv + 2, envp);
			hush_sb_die("run", argv[1]);
		}
		// Leaving, once the tool has, kills what is left in the namespace.
		hush_sb_wait(tool);
	}
	free(plan);
	hush_sb_wait(nsinit);
}
*/
import "C"

// sandboxInitBuilt: the C init above is linked into this binary.
const sandboxInitBuilt = true
