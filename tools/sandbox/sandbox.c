//go:build linux && cgo

// The sandbox's set-up: see the comment at the top of start_linux.go.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "envfs.h"
#include "limits.h"
#include "sandbox.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#define HUSH_OPEN_TREE_CLONE 1
#define HUSH_MOVE_MOUNT_F_EMPTY_PATH 0x4
#define HUSH_FSCONFIG_SET_STRING 1
#define HUSH_FSCONFIG_CMD_CREATE 6
#define HUSH_MOUNT_ATTR_RDONLY 0x1
#define HUSH_MOUNT_ATTR_NOSUID 0x2
#define HUSH_MOUNT_ATTR_NODEV 0x4
#define HUSH_MOUNT_ATTR_NOEXEC 0x8
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

// hush_sb_write_file writes text to path, relative to dirfd (AT_FDCWD or a
// directory).
static int hush_sb_write_file(int dirfd, const char *path, const char *text) {
	int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC);
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
	a.attr_set = HUSH_MOUNT_ATTR_RDONLY | HUSH_MOUNT_ATTR_NOSUID | HUSH_MOUNT_ATTR_NODEV | HUSH_MOUNT_ATTR_NOEXEC;
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
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
			if (errno == EINVAL) {
				break; // past the kernel's last capability: none above
			}
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

// hush_sb_own_keyring gives the tool a session keyring of its own, as
// systemd gives each service and runc each container: the one it would
// inherit is hush's — the login session's, where Kerberos tickets and
// other programs' keys live — and every key there that its possessor may
// read, the tool could (keyctl search @s, keyctl read). A kernel without
// keyrings has nothing to inherit.
static void hush_sb_own_keyring(void) {
	// EPERM: a seccomp filter on hush refuses keyctl (Docker's default
	// profile), and so refuses it to the tool too.
	if (syscall(SYS_keyctl, 1, NULL) < 0 && errno != ENOSYS && errno != EPERM) { // KEYCTL_JOIN_SESSION_KEYRING
		hush_sb_die("join a session keyring of its own", NULL);
	}
}

// hush_sb_key_filter refuses the kernel's key calls — keyctl, add_key,
// request_key — with EPERM, as Docker's default profile does: the tool's
// own session keyring (hush_sb_own_keyring) keeps it from the keys hush's
// session holds, but a key of the user's with user-read permission is read
// by its serial from any keyring (keyctl print SERIAL). The same numbers
// through the 32-bit entry (i386 on x86-64, arm on arm64) are refused too,
// and on x86-64 every x32 call. Set after no_new_privs, in the set-up's
// last step; a kernel without seccomp filters gives the tool its keyring
// alone.
#if defined(__x86_64__)
#define HUSH_SB_ARCH AUDIT_ARCH_X86_64
#define HUSH_SB_ARCH32 AUDIT_ARCH_I386
#define HUSH_SB_ADD_KEY32 286
#define HUSH_SB_REQUEST_KEY32 287
#define HUSH_SB_KEYCTL32 288
#elif defined(__aarch64__)
#define HUSH_SB_ARCH AUDIT_ARCH_AARCH64
#define HUSH_SB_ARCH32 AUDIT_ARCH_ARM
#define HUSH_SB_ADD_KEY32 309
#define HUSH_SB_REQUEST_KEY32 310
#define HUSH_SB_KEYCTL32 311
#endif
static void hush_sb_key_filter(void) {
#ifdef HUSH_SB_ARCH
	struct sock_filter f[] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HUSH_SB_ARCH, 0, 6), // else 8
		/* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* 3 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 10, 0), // x32: 14
		/* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_keyctl, 9, 0),
		/* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_add_key, 8, 0),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_request_key, 7, 0),
		/* 7 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HUSH_SB_ARCH32, 0, 4), // else 13
		/* 9 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		/* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HUSH_SB_KEYCTL32, 3, 0),
		/* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HUSH_SB_ADD_KEY32, 2, 0),
		/* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HUSH_SB_REQUEST_KEY32, 1, 0),
		/* 13 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* 14 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0 && errno != EINVAL) {
		hush_sb_die("refuse the kernel's key calls (seccomp)", NULL);
	}
#endif
}

// hush_sb_sys_readonly: root's tool is the host's uid 0 — mapped to
// itself, it passes every owner check on a file uid 0 owns — and the
// kernel's settings are such files: kernel.core_pattern written with a
// pipe to the tool's own script had the kernel run it as the host's root,
// outside every namespace, at the next crash, where it read the vault;
// /sys/kernel/tracing's uprobes read any process's memory, hush's too.
// So, as Docker does for a container's root, root's /sys (with what is
// mounted under it: tracefs, debugfs, cgroups, bpf) and the namespace's
// /proc/sys and /proc/sysrq-trigger are read-only: a mount flag, which a
// tool without CAP_SYS_ADMIN cannot clear here, and which a namespace it
// makes itself copies locked (and, with /proc/sys covered, the kernel
// refuses it a /proc of its own). Reading them stays as it was.
static void hush_sb_sys_readonly(void) {
	struct hush_mount_attr a = {0};
	a.attr_set = HUSH_MOUNT_ATTR_RDONLY | HUSH_MOUNT_ATTR_NOSUID | HUSH_MOUNT_ATTR_NODEV | HUSH_MOUNT_ATTR_NOEXEC;
	// AT_SYMLINK_NOFOLLOW | AT_RECURSIVE; EINVAL: no sysfs mounted there.
	if (syscall(SYS_mount_setattr, -1, "/sys", 0x100 | 0x8000, &a, sizeof a) != 0 && !hush_sb_skippable(errno) && errno != EINVAL) {
		hush_sb_die("make /sys read-only", NULL);
	}
}

// hush_sb_mount_proc mounts the PID namespace's own /proc, applies the
// call's limits (limits.c); for root, its kernel settings read-only
// (hush_sb_sys_readonly above).
static void hush_sb_mount_proc(int root, int world, const char *flags) {
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
		hush_sb_die("mount /proc for the new PID namespace", NULL);
	}
	if (world == 1) {
		// The host's root goes (hush_sb_world).
		if (umount2("/.oldroot", MNT_DETACH) != 0 || rmdir("/.oldroot") != 0) {
			hush_sb_die("detach the host's root", NULL);
		}
	}
	hush_sb_limits(flags);
	if (!root) {
		return;
	}
	const char *const ro[] = {"/proc/sys", "/proc/sysrq-trigger", 0};
	for (int i = 0; ro[i]; i++) {
		if (mount(ro[i], ro[i], NULL, MS_BIND, NULL) != 0) {
			if (hush_sb_skippable(errno)) {
				continue;
			}
			hush_sb_die("make read-only", ro[i]);
		}
		if (hush_sb_readonly(ro[i]) != 0) {
			hush_sb_die("make read-only", ro[i]);
		}
	}
}

// Root's /dev: these device nodes and links, a devpts and a /dev/shm.
static const char *const hush_sb_dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty", 0};
static const char *const hush_sb_dev_links[][2] = {{"pts/ptmx", "ptmx"}, {"/proc/self/fd", "fd"},
	{"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}, {0, 0}};

// hush_sb_dev_own gives root's /dev its own devpts and /dev/shm.
static void hush_sb_dev_own(const char *dev) {
	char p[64];
	snprintf(p, sizeof p, "%s/pts", dev);
	if (mount("devpts", p, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") != 0) {
		hush_sb_die("make a minimal /dev", "/dev/pts");
	}
	snprintf(p, sizeof p, "%s/shm", dev);
	if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
		hush_sb_die("make a minimal /dev", "/dev/shm");
	}
}

// hush_sb_minimal_dev replaces /dev, for root, with a tmpfs holding only
// what programs need: null, zero, full, random, urandom and tty bound from
// the host, a devpts of its own, a tmpfs /dev/shm and the usual links. A
// root tool keeps root's ownership of the host's device nodes, so the
// host's /dev would let it read a disk — and the vault file on it — raw.
// It is built on the scratch tmpfs (/proc here) and moved into place.
static void hush_sb_minimal_dev(void) {
	if (mount("tmpfs", "/proc/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") != 0) {
		hush_sb_die("make a minimal /dev", NULL);
	}
	const char *const *nodes = hush_sb_dev_nodes;
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
	if (mkdir("/proc/dev/pts", 0755) != 0 || mkdir("/proc/dev/shm", 01777) != 0) {
		hush_sb_die("make a minimal /dev", NULL);
	}
	hush_sb_dev_own("/proc/dev");
	for (int i = 0; hush_sb_dev_links[i][0]; i++) {
		snprintf(dst, sizeof dst, "/proc/dev/%s", hush_sb_dev_links[i][1]);
		if (symlink(hush_sb_dev_links[i][0], dst) != 0) {
			hush_sb_die("make a minimal /dev", dst);
		}
	}
	if (mount("/proc/dev", "/dev", NULL, MS_MOVE, NULL) != 0) {
		hush_sb_die("make a minimal /dev", "/dev");
	}
}

// hush_sb_world_dev makes the new root's /dev at dst: a tmpfs holding
// null, zero, full, random, urandom and tty bound from the host, a devpts
// of its own, a tmpfs /dev/shm and the usual links. No disk: a root tool
// keeps root's ownership of the host's device nodes, so the host's /dev
// would let it read a disk — and the vault file on it — raw.
static void hush_sb_world_dev(const char *dst) {
	if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") != 0) {
		hush_sb_die("make a minimal /dev", NULL);
	}
	char src[64], p[4300];
	for (int i = 0; hush_sb_dev_nodes[i]; i++) {
		snprintf(src, sizeof src, "/dev/%s", hush_sb_dev_nodes[i]);
		snprintf(p, sizeof p, "%s/%s", dst, hush_sb_dev_nodes[i]);
		int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
		if (fd < 0) {
			hush_sb_die("make a minimal /dev", p);
		}
		close(fd);
		if (mount(src, p, NULL, MS_BIND, NULL) != 0) {
			hush_sb_die("make a minimal /dev", src);
		}
	}
	snprintf(p, sizeof p, "%s/pts", dst);
	if (mkdir(p, 0755) != 0 || mount("devpts", p, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") != 0) {
		hush_sb_die("make a minimal /dev", "/dev/pts");
	}
	snprintf(p, sizeof p, "%s/shm", dst);
	if (mkdir(p, 01777) != 0 || mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
		hush_sb_die("make a minimal /dev", "/dev/shm");
	}
	for (int i = 0; hush_sb_dev_links[i][0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dst, hush_sb_dev_links[i][1]);
		if (symlink(hush_sb_dev_links[i][0], p) != 0) {
			hush_sb_die("make a minimal /dev", p);
		}
	}
}
// hush_sb_mkdirs makes every missing directory of path (absolute), mode
// 0755; one that cannot be made (inside a read-only bind, say) is left to
// the mount that needs it to fail.
static void hush_sb_mkdirs(const char *path) {
	char p[4096];
	size_t n = strlen(path);
	if (n >= sizeof p) {
		return;
	}
	memcpy(p, path, n + 1);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = 0;
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
}

// hush_sb_mkparent makes every missing directory above path (absolute).
static void hush_sb_mkparent(const char *path) {
	char parent[4200];
	snprintf(parent, sizeof parent, "%s", path);
	char *slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent) {
		*slash = 0;
		hush_sb_mkdirs(parent);
	}
}

// hush_sb_mountpoint_at makes what a mount will be moved or bound onto at
// dst: a directory for a directory (dir), an empty file for anything else.
static void hush_sb_mountpoint_at(int dir, const char *dst) {
	if (dir) {
		hush_sb_mkdirs(dst);
		return;
	}
	hush_sb_mkparent(dst);
	int fd = open(dst, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		close(fd);
	}
}

// hush_sb_mountpoint makes what src will be bound onto at dst.
static int hush_sb_mountpoint(const char *src, const char *dst) {
	struct stat st;
	if (stat(src, &st) != 0) {
		return -1;
	}
	hush_sb_mountpoint_at(S_ISDIR(st.st_mode), dst);
	return 0;
}

// The new root is built on a tmpfs mounted over /proc, where no source of
// a bind can be (the namespace's own /proc comes later, inside the new
// root); then it becomes / with pivot_root.
#define HUSH_SB_NEWROOT "/proc"

// hush_sb_world builds the tool's root from the plan's world records
// (planWorld in sandbox_linux.go): one per entry of the policy's view,
// parents first, each a kind letter, the path inside, NUL, an argument,
// NUL — r/w a bind of the host path (read-only or as it is), l a symbolic
// link, t a fresh tmpfs (the argument its mode), d the minimal /dev, p the
// mount point of the namespace's own /proc, e the .env layer (envfs.c;
// the argument: the socket to hush and the FUSE device), h a path taken
// out of a listed directory (an empty read-only file or directory over it). Nothing of
// the host exists in the new root but what a record binds there.
static void hush_sb_world(const char *rec, const char *end, int root) {
	if (mount("tmpfs", HUSH_SB_NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
		hush_sb_die("mount the new root", NULL);
	}
	// The empty file and directory hidden paths get, in the new root's
	// /proc, which the namespace's own /proc covers later.
	hush_sb_mkdirs(HUSH_SB_NEWROOT "/proc");
	if (mount("tmpfs", HUSH_SB_NEWROOT "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k") != 0) {
		hush_sb_die("mount a tmpfs for the empty file", NULL);
	}
	int efd = open(HUSH_SB_NEWROOT "/proc/empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
	if (efd < 0 || mkdir(HUSH_SB_NEWROOT "/proc/emptydir", 0555) != 0) {
		hush_sb_die("create the empty file", NULL);
	}
	close(efd);
	if (hush_sb_readonly(HUSH_SB_NEWROOT "/proc") != 0) {
		hush_sb_die("make the empty file read-only", NULL);
	}
	char dst[4200];
	for (const char *r = rec; r < end && *r;) {
		char kind = *r;
		const char *path = r + 1;
		const char *arg = path + strlen(path) + 1;
		if (arg >= end) {
			break;
		}
		r = arg + strlen(arg) + 1;
		if (strcmp(path, "/") == 0) {
			continue; // the new root itself
		}
		snprintf(dst, sizeof dst, "%s%s", HUSH_SB_NEWROOT, path);
		switch (kind) {
		case 'r':
		case 'w': {
			if (hush_sb_mountpoint(arg, dst) != 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("make a mount point for", path);
			}
			if (mount(arg, dst, NULL, MS_BIND | MS_REC, NULL) != 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("bind", path);
			}
			if (kind == 'r') {
				struct hush_mount_attr a = {0};
				a.attr_set = HUSH_MOUNT_ATTR_RDONLY | HUSH_MOUNT_ATTR_NOSUID | HUSH_MOUNT_ATTR_NODEV;
				if (syscall(SYS_mount_setattr, -1, dst, 0x100 | 0x8000, &a, sizeof a) != 0) { // AT_SYMLINK_NOFOLLOW | AT_RECURSIVE
					hush_sb_die("make read-only", path);
				}
			}
			break;
		}
		case 'l': {
			hush_sb_mkparent(dst);
			if (symlink(arg, dst) != 0 && errno != EEXIST) {
				hush_sb_die("make the link", path);
			}
			break;
		}
		case 't':
			hush_sb_mkdirs(dst);
			if (mount("tmpfs", dst, "tmpfs", MS_NOSUID | MS_NODEV, arg) != 0) {
				hush_sb_die("mount a tmpfs on", path);
			}
			break;
		case 'd':
			hush_sb_mkdirs(dst);
			hush_sb_world_dev(dst);
			break;
		case 'p':
			break; // made above
		case 'e':
			// The .env layer over the project (envfs.c), before the
			// project's subdirectories bound through on top of it.
			if (hush_sb_envfs_mount(dst, arg) != 0) {
				hush_sb_die("mount the .env layer on", path);
			}
			break;
		case 'h': {
			struct stat st;
			if (lstat(dst, &st) != 0) {
				continue; // not there: nothing to hide
			}
			const char *empty = S_ISDIR(st.st_mode) ? HUSH_SB_NEWROOT "/proc/emptydir" : HUSH_SB_NEWROOT "/proc/empty";
			if (mount(empty, dst, NULL, MS_BIND, NULL) != 0 && !hush_sb_skippable(errno)) {
				hush_sb_die("hide", path);
			}
			break;
		}
		}
	}
	(void)root;
	// The new root becomes /. The host's stays at /.oldroot until the
	// namespace's own /proc is mounted (hush_sb_mount_proc): the kernel
	// lets a user namespace mount a proc only where one is fully visible.
	char cwd[4096];
	if (getcwd(cwd, sizeof cwd) == NULL) {
		hush_sb_die("read the working directory", NULL);
	}
	if (mkdir(HUSH_SB_NEWROOT "/.oldroot", 0700) != 0 || chdir(HUSH_SB_NEWROOT) != 0 ||
	    syscall(SYS_pivot_root, ".", ".oldroot") != 0) {
		hush_sb_die("enter the new root", NULL);
	}
	if (chdir(cwd) != 0) {
		hush_sb_die("enter the working directory (it is not in the tool's world)", cwd);
	}
}

// hush_sb_template makes, once per hush run as root, the scratch each of
// its sandboxes starts from: a tmpfs mounted nowhere (a detached mount, in
// no mount namespace, so nobody else sees it), holding the empty file and
// the empty directory the masks are bound from and root's /dev — device
// nodes of its own, made with the host's numbers, modes and owners (hush
// may mknod; the tool, in its user namespace, may not), the mount points
// of its devpts and shm and the usual links — and then made read-only.
// Each sandbox gets a copy of that mount (open_tree, in hush) moved onto
// its /proc and binds its /dev from it: two mounts in place of two tmpfs,
// six binds and eleven files made per call. Read-only, and so the same for
// every sandbox: no tool can change the /dev of the next. It returns the
// mount's descriptor, or -errno where the kernel refuses any of it, and
// then every sandbox builds its scratch and /dev itself.
int hush_sb_template(void) {
	int fs = (int)syscall(SYS_fsopen, "tmpfs", 1U); // FSOPEN_CLOEXEC
	if (fs < 0) {
		return -errno;
	}
	int mnt = -1;
	if (syscall(SYS_fsconfig, fs, HUSH_FSCONFIG_SET_STRING, "mode", "0555", 0) != 0 ||
	    syscall(SYS_fsconfig, fs, HUSH_FSCONFIG_SET_STRING, "size", "64k", 0) != 0 ||
	    syscall(SYS_fsconfig, fs, HUSH_FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0 ||
	    (mnt = (int)syscall(SYS_fsmount, fs, 1U, HUSH_MOUNT_ATTR_NOSUID | HUSH_MOUNT_ATTR_NOEXEC)) < 0) { // FSMOUNT_CLOEXEC
		int e = errno;
		close(fs);
		return -e;
	}
	close(fs);
	int dev = -1, ok = 0;
	int efd = openat(mnt, "empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
	if (efd < 0) {
		goto out;
	}
	close(efd);
	// Modes set again: hush's umask is not the sandbox's business.
	if (fchmodat(mnt, "empty", 0444, 0) != 0 || mkdirat(mnt, "emptydir", 0555) != 0 || fchmodat(mnt, "emptydir", 0555, 0) != 0 ||
	    mkdirat(mnt, "dev", 0755) != 0 || fchmodat(mnt, "dev", 0755, 0) != 0 ||
	    (dev = openat(mnt, "dev", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		goto out;
	}
	for (int i = 0; hush_sb_dev_nodes[i]; i++) {
		char src[64];
		struct stat st;
		snprintf(src, sizeof src, "/dev/%s", hush_sb_dev_nodes[i]);
		if (stat(src, &st) != 0) {
			goto out;
		}
		if (!S_ISCHR(st.st_mode)) {
			errno = ENODEV;
			goto out;
		}
		if (mknodat(dev, hush_sb_dev_nodes[i], S_IFCHR | 0600, st.st_rdev) != 0 ||
		    fchownat(dev, hush_sb_dev_nodes[i], st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) != 0 ||
		    fchmodat(dev, hush_sb_dev_nodes[i], st.st_mode & 07777, 0) != 0) {
			goto out;
		}
	}
	if (mkdirat(dev, "pts", 0755) != 0 || fchmodat(dev, "pts", 0755, 0) != 0 ||
	    mkdirat(dev, "shm", 0755) != 0 || fchmodat(dev, "shm", 01777, 0) != 0) {
		goto out;
	}
	for (int i = 0; hush_sb_dev_links[i][0]; i++) {
		if (symlinkat(hush_sb_dev_links[i][0], dev, hush_sb_dev_links[i][1]) != 0) {
			goto out;
		}
	}
	struct hush_mount_attr a = {0};
	a.attr_set = HUSH_MOUNT_ATTR_RDONLY;
	if (syscall(SYS_mount_setattr, mnt, "", 0x1000, &a, sizeof a) != 0) { // AT_EMPTY_PATH
		goto out;
	}
	int copy = (int)syscall(SYS_open_tree, mnt, "", HUSH_OPEN_TREE_CLONE | O_CLOEXEC | 0x1000);
	if (copy < 0) {
		goto out;
	}
	close(copy);
	ok = 1;
out:;
	int e = errno ? errno : EINVAL;
	if (dev >= 0) {
		close(dev);
	}
	if (!ok) {
		close(mnt);
		return -e;
	}
	return mnt;
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

// hush_sb_lo_up brings up the network namespace's loopback interface; 0
// or -1 with errno.
static int hush_sb_lo_up(void) {
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		return -1;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	int r = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (r == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	int e = errno;
	close(s);
	errno = e;
	return r;
}

static int hush_sb_listen_lo(int port);

// hush_sb_proxy_listen makes the listener of hush's egress proxy inside
// the new network namespace: 127.0.0.1:port, a port below 1024 that only
// this set-up (which holds every capability in the namespace until it
// execs) could bind, so no tool squats it. It runs while the child still
// shares hush's descriptor table, so the listener is hush's; the tool
// never holds it (close-on-exec, and the child's copy of the table drops
// it). Returns the descriptor or -errno.
static int hush_sb_proxy_listen(int port) {
	if (hush_sb_lo_up() != 0) {
		return -errno;
	}
	return hush_sb_listen_lo(port);
}

// hush_sb_listen_lo listens on 127.0.0.1:port in the namespace's network;
// the descriptor or -errno.
static int hush_sb_listen_lo(int port) {
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		return -errno;
	}
	struct sockaddr_in sin;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(fd, 128) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

// hush_sb_setup is everything after the namespaces exist and before the
// namespace's /proc: the id maps, the masks, root's /dev, lo, root's
// capabilities, no_new_privs and the Landlock scope. Both ways in run it:
// the init below and hush_sb_spawn's child.
static void hush_sb_id_maps(int procfd, uid_t uid, gid_t gid) {
	// procfd: a /proc that shows this process as self (the host's, where
	// the mount namespace's own is a template's, hush_sb_spawn_via).
	int dir = procfd >= 0 ? procfd : AT_FDCWD;
	const char *pre = procfd >= 0 ? "self/" : "/proc/self/";
	char path[64], map[64];
	snprintf(map, sizeof map, "%ld %ld 1\n", (long)uid, (long)uid);
	snprintf(path, sizeof path, "%suid_map", pre);
	if (hush_sb_write_file(dir, path, map) != 0) {
		hush_sb_die("write", "uid_map");
	}
	snprintf(path, sizeof path, "%ssetgroups", pre);
	if (hush_sb_write_file(dir, path, "deny") != 0) {
		hush_sb_die("write", "setgroups");
	}
	snprintf(map, sizeof map, "%ld %ld 1\n", (long)gid, (long)gid);
	snprintf(path, sizeof path, "%sgid_map", pre);
	if (hush_sb_write_file(dir, path, map) != 0) {
		hush_sb_die("write", "gid_map");
	}
}

// hush_sb_below: path lies strictly below dir.
static int hush_sb_below(const char *path, const char *dir) {
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

// hush_sb_fresh_tmpfs gives a call started from a world template a tmpfs
// of its own at each of the world's tmpfs records (the private home, a /tmp
// per call): the template's is every call's, and what one call wrote there
// the next would read. Over the template's, a new tmpfs; into it, what the
// template holds below it: a copy of each mount (a bind of the project, a
// cache, a toolchain, with what is mounted inside it, .env masks included,
// still locked) and each link. rec..end are the plan's world records,
// parents first.
static void hush_sb_fresh_tmpfs(const char *rec, const char *end) {
	for (const char *r = rec; r < end && *r;) {
		char kind = *r;
		const char *path = r + 1;
		const char *arg = path + strlen(path) + 1;
		if (arg >= end) {
			break;
		}
		r = arg + strlen(arg) + 1;
		if (kind != 't' || strcmp(path, "/") == 0) {
			continue; // the root itself is the template's, read-only
		}
		int old = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (old < 0) {
			hush_sb_die("open the template's", path);
		}
		if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, arg) != 0) {
			hush_sb_die("mount a tmpfs on", path);
		}
		// The mounts copied so far: what is below one came with it.
		const char *copied[64];
		int ncopied = 0;
		for (const char *q = r; q < end && *q;) {
			char qkind = *q;
			const char *qpath = q + 1;
			const char *qarg = qpath + strlen(qpath) + 1;
			if (qarg >= end) {
				break;
			}
			q = qarg + strlen(qarg) + 1;
			int inside = 0;
			for (int i = 0; i < ncopied && !inside; i++) {
				inside = hush_sb_below(qpath, copied[i]);
			}
			if (!hush_sb_below(qpath, path) || inside) {
				continue;
			}
			const char *rel = qpath + strlen(path) + 1;
			if (qkind == 'l') {
				hush_sb_mkparent(qpath);
				if (symlink(qarg, qpath) != 0 && errno != EEXIST) {
					hush_sb_die("make the link", qpath);
				}
				continue;
			}
			if (qkind != 'r' && qkind != 'w' && qkind != 't') {
				continue; // 'h' here hid nothing: the template's tmpfs held no file
			}
			int m = (int)syscall(SYS_open_tree, old, rel, HUSH_OPEN_TREE_CLONE | 0x8000 | O_CLOEXEC); // AT_RECURSIVE
			if (m < 0) {
				if (hush_sb_skippable(errno)) {
					continue; // not in the template either
				}
				hush_sb_die("copy the template's", qpath);
			}
			struct stat st;
			if (fstat(m, &st) != 0) {
				hush_sb_die("copy the template's", qpath);
			}
			hush_sb_mountpoint_at(S_ISDIR(st.st_mode), qpath);
			if (syscall(SYS_move_mount, m, "", AT_FDCWD, qpath, HUSH_MOVE_MOUNT_F_EMPTY_PATH) != 0) {
				hush_sb_die("copy the template's", qpath);
			}
			close(m);
			if (ncopied < 64) {
				copied[ncopied++] = qpath;
			}
		}
		close(old);
	}
}

// HUSH_SB_TEMPLATED: hush_sb_setup's world argument for a child whose
// mount namespace is a copy of a world template (hush_sb_world_template):
// the root is built; only what is the call's own is left to make.
#define HUSH_SB_TEMPLATED 2

static void hush_sb_setup(uid_t uid, gid_t gid, int root, int net, int world, const char *masks, const char *end, int tfd, int procfd) {
	hush_sb_id_maps(procfd, uid, gid);
	// From here on nobody may ptrace this process (hush_sb_spawn's child
	// shares hush's memory until it execs).
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	hush_sb_own_keyring();
	if (world == HUSH_SB_TEMPLATED) {
		// The template's mounts are private already. The call's own: a
		// home (and /tmp, when the session has none) of its own, a devpts
		// (no other call's terminals) and a /dev/shm.
		hush_sb_fresh_tmpfs(masks, end);
		hush_sb_dev_own("/dev");
		goto built;
	}
	// Nothing mounted here may reach the parent's namespace.
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		hush_sb_die("make / private", NULL);
	}
	if (world) {
		if (tfd >= 0) {
			close(tfd);
		}
		hush_sb_world(masks, end, root);
		goto built;
	}
	// The empty file bound over masked files lives on a private scratch
	// over /proc, which the namespace's own /proc then covers: for root, a
	// copy of hush's read-only template (hush_sb_template), which holds
	// root's /dev too; otherwise, or where the kernel refuses the copy, a
	// tmpfs made here.
	int templated = 0;
	if (tfd >= 0) {
		templated = root && syscall(SYS_move_mount, tfd, "", AT_FDCWD, "/proc", HUSH_MOVE_MOUNT_F_EMPTY_PATH) == 0;
		close(tfd);
	}
	if (templated) {
		// root's /dev first, while the scratch still allows device
		// nodes; then the scratch is nodev too, like the tmpfs below.
		struct hush_mount_attr a = {0};
		a.attr_set = HUSH_MOUNT_ATTR_NODEV;
		if (mount("/proc/dev", "/dev", NULL, MS_BIND, NULL) != 0) {
			hush_sb_die("make a minimal /dev", "/dev");
		}
		if (syscall(SYS_mount_setattr, -1, "/proc", 0x100, &a, sizeof a) != 0) {
			hush_sb_die("make the empty file read-only", NULL);
		}
	} else if (mount("tmpfs", "/proc", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k") != 0) {
		hush_sb_die("mount a tmpfs for the empty file", NULL);
	} else {
		int efd = open("/proc/empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
		if (efd < 0) {
			hush_sb_die("create the empty file", NULL);
		}
		close(efd);
		// The empty directory bound over masked directories, and root's
		// /dev's mount point (hush_sb_minimal_dev), beside it.
		if (mkdir("/proc/emptydir", 0555) != 0 || (root && mkdir("/proc/dev", 0755) != 0)) {
			hush_sb_die("create the empty directory", NULL);
		}
		// Then the scratch tmpfs turns read-only (and nosuid, nodev,
		// noexec), as the template is: a bind mount keeps its source
		// mount's flags, so each mask below is read-only from the start,
		// with one bind and no tmpfs of its own.
		if (hush_sb_readonly("/proc") != 0) {
			hush_sb_die("make the empty file read-only", NULL);
		}
	}
	for (const char *m = masks; m < end && *m; m += strlen(m) + 1) {
		const char *p = m + 1;
		if (*m == 'F') {
			if (mount("/proc/empty", p, NULL, MS_BIND, NULL) != 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("hide", p);
			}
		} else if (*m == 'P') {
			if (mount(p, p, NULL, MS_BIND | MS_REC, NULL) != 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("pin", p);
			}
		} else if (*m == 'D') {
			if (mount("/proc/emptydir", p, NULL, MS_BIND, NULL) != 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("hide", p);
			}
		} else if (*m == 'R') {
			// Read-only, as /proc/sys is for root (hush_sb_mount_proc):
			// bound onto itself, then the flag, which a tool without
			// CAP_SYS_ADMIN over this namespace cannot clear, and which a
			// namespace it makes itself copies locked. Still executable:
			// hush's own binary runs in the sandbox.
			if (mount(p, p, NULL, MS_BIND | MS_REC, NULL) != 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("make read-only", p);
			}
			struct hush_mount_attr a = {0};
			a.attr_set = HUSH_MOUNT_ATTR_RDONLY | HUSH_MOUNT_ATTR_NOSUID | HUSH_MOUNT_ATTR_NODEV;
			if (syscall(SYS_mount_setattr, -1, p, 0x100 | 0x8000, &a, sizeof a) != 0) { // AT_SYMLINK_NOFOLLOW | AT_RECURSIVE
				hush_sb_die("make read-only", p);
			}
		} else if (*m == 'S') {
			// A symlink to hush's executable (a PATH entry): a read-only
			// copy of the mount of the file it leads to, moved onto the
			// link itself (no MOVE_MOUNT_T_SYMLINKS), which is then a mount
			// point that rename(2) and unlink(2) refuse.
			int fd = (int)syscall(SYS_open_tree, AT_FDCWD, p, HUSH_OPEN_TREE_CLONE | O_CLOEXEC);
			if (fd < 0) {
				if (hush_sb_skippable(errno)) {
					continue;
				}
				hush_sb_die("make read-only", p);
			}
			struct hush_mount_attr a = {0};
			a.attr_set = HUSH_MOUNT_ATTR_RDONLY | HUSH_MOUNT_ATTR_NOSUID | HUSH_MOUNT_ATTR_NODEV;
			if (syscall(SYS_mount_setattr, fd, "", 0x1000, &a, sizeof a) != 0 || // AT_EMPTY_PATH
			    syscall(SYS_move_mount, fd, "", AT_FDCWD, p, HUSH_MOVE_MOUNT_F_EMPTY_PATH) != 0) {
				hush_sb_die("make read-only", p);
			}
			close(fd);
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
	if (templated) {
		hush_sb_dev_own("/dev");
	} else if (root) {
		hush_sb_minimal_dev();
	} else if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") != 0 &&
	           !hush_sb_skippable(errno)) {
		// A devpts of its own: the host's holds the user's terminals,
		// hush's among them, which a tool could write to or read from.
		// /dev/ptmx finds this one through /dev/pts.
		hush_sb_die("mount a devpts of its own", NULL);
	}
built:
	// The scratch tmpfs stays under the namespace's /proc, which the init
	// below mounts over it: unmounting it here would wait for an RCU grace
	// period on every call, and the namespace's end frees it with the rest.
	if (net && hush_sb_lo_up() != 0) {
		hush_sb_die("bring up the loopback interface", NULL);
	}
	if (root) {
		// Root: the tool stays root of this namespace, with root's file
		// access, but only Docker's default capabilities — no
		// CAP_SYS_ADMIN to unmount a mask, no CAP_SYS_PTRACE — and
		// those only over this namespace. A user namespace it makes
		// itself gets all capabilities, but there every mount is locked.
		hush_sb_sys_readonly();
		hush_sb_drop_caps();
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		hush_sb_die("set no_new_privs", NULL);
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	hush_sb_landlock_scope();
	hush_sb_key_filter();
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
	int net = 0, probe = 0, landlock_only = 0, world = 0;
	for (const char *f = flags; *f; f++) {
		switch (*f) {
		case 'W': world = 1; break;
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
		hush_sb_own_keyring();
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
	hush_sb_setup(uid, gid, root, net, world, masks, end, -1, -1);
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
		hush_sb_mount_proc(root, world, flags);
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

// hush_sb_spawn_args is one sandboxed start by hush_sb_spawn.
struct hush_sb_spawn_args {
	const char *path;
	char *const *argv;
	char *const *envp;
	const char *dir;
	int fds[3];
	int pdeathsig;
	int nsfd;   // out: the new mount namespace, opened in hush's descriptor table, or -1
	int pport;  // the egress proxy's port inside the namespace, or 0 (hush_sb_proxy_listen)
	int pfd;    // out: its listener, in hush's descriptor table, or -errno
	int userfd, netfd; // out, with pport: the child's user and network namespaces, or -1
	const int *fwd;    // with pport: ports of the session's local services to listen on
	int *fwdfds;       // out: a listener per fwd port, or -errno
	int nfwd;
	int tfd;    // a copy of hush's template (hush_sb_template), or -1
	int net;
	int world; // the masks part is the world's records (hush_sb_world)
	int envfs; // the socket to hush's .env layer server (envfs.c), or -1
	const char *masks, *end; // the masks part of a plan
	const char *flags;       // the plan's flags word
	uid_t uid;
	gid_t gid;
	// A world template (hush_sb_world_template) to start in, or -1: its
	// user and mount namespaces, and a descriptor of hush's /proc.
	int tuser, tmnt, procfd;
	int pid; // out, through a template: the tool's pid, or -errno
	char *stack2; // the tool's stack, through a template
	int probe; // stop once the namespace's /proc is mounted, exit 0
};

// hush_sb_spawn_child runs in a child that shares hush's memory (vfork:
// hush's calling thread waits until it execs or exits) and is already in
// its new user, mount and PID namespaces — it is the PID namespace's init
// and becomes the tool. It touches only its own stack and the arguments,
// calls nothing that locks or allocates, and starts with every signal
// blocked (hush_sb_spawn), so no Go handler can run here.
static int hush_sb_spawn_child(void *p) {
	struct hush_sb_spawn_args *a = p;
	// A reference to this mount namespace, for hush: the tool's exit then
	// only drops one, and unmounting the namespace's mounts (an RCU grace
	// period, every superblock) happens when hush closes it, after the
	// call has ended and off its path. The child starts in hush's own
	// descriptor table (CLONE_FILES), so the reference opened here is
	// hush's at once; then it takes a copy of the table for itself, before
	// it touches any other descriptor.
	// Through a template, this namespace's /proc is the template's: hush's
	// shows this process as self.
	int pdir = a->procfd >= 0 ? a->procfd : AT_FDCWD;
	const char *pns = a->procfd >= 0 ? "self/ns/" : "/proc/self/ns/";
	char nsp[32];
	snprintf(nsp, sizeof nsp, "%smnt", pns);
	a->nsfd = openat(pdir, nsp, O_RDONLY | O_CLOEXEC);
	if (a->pport > 0) {
		a->pfd = hush_sb_proxy_listen(a->pport);
		// References hush keeps to reach a local service this call starts
		// (hush_sb_netns_connect), and listeners for the services earlier
		// calls of the session started, which hush forwards to them.
		snprintf(nsp, sizeof nsp, "%suser", pns);
		a->userfd = openat(pdir, nsp, O_RDONLY | O_CLOEXEC);
		snprintf(nsp, sizeof nsp, "%snet", pns);
		a->netfd = openat(pdir, nsp, O_RDONLY | O_CLOEXEC);
		for (int i = 0; i < a->nfwd; i++) {
			a->fwdfds[i] = a->pfd >= 0 ? hush_sb_listen_lo(a->fwd[i]) : -EINVAL;
		}
	}
	if (unshare(CLONE_FILES) != 0) {
		_exit(HUSH_SB_FAIL);
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < 65; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP) {
			sigaction(sig, &dfl, NULL);
		}
	}
	int fds[3];
	int tfd = -1;
	if (a->tfd >= 0 && (tfd = fcntl(a->tfd, F_DUPFD_CLOEXEC, 10)) < 0) {
		_exit(HUSH_SB_FAIL);
	}
	for (int i = 0; i < 3; i++) {
		// Above 2 first, so that dup2 below cannot clobber one it needs.
		fds[i] = fcntl(a->fds[i], F_DUPFD_CLOEXEC, 10);
		if (fds[i] < 0) {
			_exit(HUSH_SB_FAIL);
		}
	}
	for (int i = 0; i < 3; i++) {
		if (dup2(fds[i], i) < 0) {
			_exit(HUSH_SB_FAIL);
		}
	}
	// The template's copy, if any, stays open as fd 3 (close-on-exec)
	// until the set-up has moved it into place; no other descriptor of
	// hush's is left.
	if (tfd >= 0 && (tfd = dup3(tfd, 3, O_CLOEXEC)) < 0) {
		_exit(HUSH_SB_FAIL);
	}
	// The socket to hush's .env layer server, at 3, as the plan says
	// (world mode: no template).
	int above = tfd < 0 ? hush_sb_envfs_place(a->envfs) : -1;
	if (a->envfs >= 0 && above < 0) {
		_exit(HUSH_SB_FAIL);
	}
	// Through a template (no template copy, no .env layer): hush's /proc
	// at 3 (close-on-exec), for the id maps.
	int procfd = -1;
	if (a->procfd >= 0) {
		int pf = fcntl(a->procfd, F_DUPFD_CLOEXEC, 10);
		if (pf < 0 || (procfd = dup3(pf, 3, O_CLOEXEC)) < 0) {
			_exit(HUSH_SB_FAIL);
		}
		above = 4;
	}
	syscall(436, above > 0 ? (unsigned)above : tfd >= 0 ? 4U : 3U, ~0U, 0U); // close_range
	if (setsid() < 0) {
		hush_sb_die("setsid", NULL);
	}
	if (a->pdeathsig) {
		prctl(PR_SET_PDEATHSIG, a->pdeathsig, 0, 0, 0);
	}
	if (chdir(a->dir) != 0) {
		hush_sb_die("chdir", a->dir);
	}
	// hush is not dumpable, and neither is this child of it, so its
	// /proc/self files belong to root and a user could not write its own
	// id maps: dumpable for those three writes only. (Only processes of
	// the user outside hush could see this pid meanwhile; no tool can.)
	// The flag is the shared memory's, so hush starts one such child at
	// a time (spawnLock).
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	int world = a->tmnt >= 0 ? HUSH_SB_TEMPLATED : a->world;
	hush_sb_setup(a->uid, a->gid, a->uid == 0, a->net, world, a->masks, a->end, tfd, procfd);
	hush_sb_mount_proc(a->uid == 0, world, a->flags);
	if (a->probe) {
		_exit(0);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(a->path, a->argv, a->envp);
	hush_sb_die("run", a->path);
	return 0;
}

// hush_sb_spawn_via runs in a vfork'd child of hush that is in no new
// namespace: it joins a world template's user and mount namespaces
// (hush_sb_world_template; hush owns the user namespace, so the child may)
// and clones the tool's child from there — new user (a child of the
// template's), mount (a copy of the template, every mount of it locked),
// PID and, for its own network, network namespaces — as hush's child
// (CLONE_PARENT): hush waits for the tool as for any other. It leaves as
// soon as the tool has exec'd, with the tool's pid in a->pid.
static int hush_sb_spawn_via(void *p) {
	struct hush_sb_spawn_args *a = p;
	if (setns(a->tuser, CLONE_NEWUSER) != 0 || setns(a->tmnt, CLONE_NEWNS) != 0) {
		a->pid = -errno;
		_exit(0);
	}
	int cflags = CLONE_PARENT | CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID |
		(a->net ? CLONE_NEWNET : 0);
	int pid = clone(hush_sb_spawn_child, a->stack2, cflags, a);
	a->pid = pid < 0 ? -errno : pid;
	_exit(0);
}

// hush_sb_world_template_child builds a world from the plan's records, as
// a tool's set-up would (hush_sb_world, then its /proc and the host's root
// detached), in namespaces of its own, and leaves: hush holds them by the
// descriptors opened first, in its own table.
static int hush_sb_world_template_child(void *p) {
	struct hush_sb_spawn_args *a = p;
	a->userfd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	a->nsfd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (a->userfd < 0 || a->nsfd < 0 || unshare(CLONE_FILES) != 0) {
		_exit(HUSH_SB_FAIL);
	}
	// Its complaints go to hush (a->fds[2], a pipe), not to hush's stderr.
	if (dup2(a->fds[2], 2) < 0) {
		_exit(HUSH_SB_FAIL);
	}
	syscall(436, 3U, ~0U, 0U); // close_range
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); // for the id maps: see hush_sb_spawn_child
	hush_sb_id_maps(-1, a->uid, a->gid);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		hush_sb_die("make / private", NULL);
	}
	if (chdir("/") != 0) {
		hush_sb_die("chdir", "/");
	}
	hush_sb_world(a->masks, a->end, a->uid == 0);
	// Its /proc: the kernel lets each call's namespace mount its own only
	// where one is fully visible; no mount under it, so none is in the way.
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
		hush_sb_die("mount /proc", NULL);
	}
	if (umount2("/.oldroot", MNT_DETACH) != 0 || rmdir("/.oldroot") != 0) {
		hush_sb_die("detach the host's root", NULL);
	}
	// Every call of the session starts from these mounts: the root's
	// tmpfs and /dev's (the links in it) are read-only, so no call leaves
	// a /bin or a /dev/stdout of its own for the next.
	struct hush_mount_attr ro = {0};
	ro.attr_set = HUSH_MOUNT_ATTR_RDONLY;
	if (syscall(SYS_mount_setattr, -1, "/", 0x100, &ro, sizeof ro) != 0 || // AT_SYMLINK_NOFOLLOW
	    syscall(SYS_mount_setattr, -1, "/dev", 0x100, &ro, sizeof ro) != 0) {
		hush_sb_die("make read-only", "/ and /dev");
	}
	if (a->uid == 0) {
		hush_sb_sys_readonly();
	}
	_exit(0);
}

// hush_sb_world_template builds, once for many calls, the root a world's
// plan describes (its records; no .env layer) in new user, mount and PID
// namespaces, and returns 0 with *userfd and *mntfd, references to the user
// and mount namespaces, or -errno; a set-up that failed writes why to errfd.
// hush_sb_spawn starts a tool in a copy of it (tuser, tmnt): each call
// keeps its own user, PID (and /proc), devpts, /dev/shm, keyring and
// network namespaces, and the mounts it copies are locked, as the host's
// are in a world built per call.
int hush_sb_world_template(const char *plan, size_t len, int errfd, int procfd, int *userfd, int *mntfd) {
	*userfd = -1;
	*mntfd = -1;
	const char *flags = plan + sizeof HUSH_SB_MAGIC;
	struct hush_sb_spawn_args a;
	memset(&a, 0, sizeof a);
	a.masks = flags + strlen(flags) + 1;
	a.end = plan + len;
	a.fds[2] = errfd;
	a.userfd = -1;
	a.nsfd = -1;
	a.uid = getuid();
	a.gid = getgid();
	const size_t stack_size = 256 << 10;
	char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		return -errno;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int pid = clone(hush_sb_world_template_child, stack + stack_size,
		CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID, &a);
	int e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	int st = 0;
	if (pid > 0) {
		while (waitpid(pid, &st, __WCLONE) < 0 && errno == EINTR) {
		}
	}
	munmap(stack, stack_size);
	if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		if (a.userfd >= 0) {
			close(a.userfd);
		}
		if (a.nsfd >= 0) {
			close(a.nsfd);
		}
		return pid < 0 ? -e : -EPERM;
	}
	// One start through it, stopped once its /proc is mounted: a kernel
	// that refuses any step refuses the template, not every call.
	struct hush_sb_spawn_args p;
	memset(&p, 0, sizeof p);
	p.envp = NULL;
	p.dir = "/";
	p.fds[0] = p.fds[1] = p.fds[2] = errfd;
	p.nsfd = p.pfd = p.userfd = p.netfd = p.tfd = p.envfs = -1;
	p.world = 1;
	p.flags = "";
	p.uid = a.uid;
	p.gid = a.gid;
	p.tuser = a.userfd;
	p.tmnt = a.nsfd;
	p.procfd = procfd;
	p.probe = 1;
	p.pid = -EINVAL;
	stack = mmap(NULL, 2 * stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		e = errno;
		close(a.userfd);
		close(a.nsfd);
		return -e;
	}
	p.stack2 = stack + 2 * stack_size;
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int via = clone(hush_sb_spawn_via, stack + stack_size, CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, &p);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	int ok = 0;
	if (via > 0) {
		while (waitpid(via, NULL, 0) < 0 && errno == EINTR) {
		}
		if (p.pid > 0) {
			while (waitpid(p.pid, &st, 0) < 0 && errno == EINTR) {
			}
			ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		}
		e = p.pid < 0 ? -p.pid : EPERM;
	}
	munmap(stack, 2 * stack_size);
	if (p.nsfd >= 0) {
		close(p.nsfd);
	}
	if (!ok) {
		close(a.userfd);
		close(a.nsfd);
		return -e;
	}
	*userfd = a.userfd;
	*mntfd = a.nsfd;
	return 0;
}

// hush_sb_spawn starts path in a sandbox of its own without a second exec:
// a vfork'd child of hush, cloned straight into new user, mount and PID
// namespaces, does the set-up and execs the tool, which is the namespace's
// init. It returns the child's pid, or -errno when clone failed; a set-up
// that fails later says why on the tool's stderr and exits 125. *nsfd is
// a reference to the child's mount namespace (or -1), which the caller
// closes once the child has been waited for.
int hush_sb_spawn(const char *path, char *const *argv, char *const *envp, const char *dir,
	int fd0, int fd1, int fd2, int pdeathsig, const char *plan, size_t len, int tmpl, int pport, int envfs, int *nsfd, int *pfd,
	int *userfd, int *netfd, const int *fwd, int *fwdfds, int nfwd, int tuser, int tmnt, int procfd) {
	*nsfd = -1;
	*pfd = -1;
	*userfd = -1;
	*netfd = -1;
	for (int i = 0; i < nfwd; i++) {
		fwdfds[i] = -1;
	}
	const char *flags = plan + sizeof HUSH_SB_MAGIC;
	struct hush_sb_spawn_args a;
	memset(&a, 0, sizeof a);
	a.path = path;
	a.argv = argv;
	a.envp = envp;
	a.dir = dir;
	a.fds[0] = fd0;
	a.fds[1] = fd1;
	a.fds[2] = fd2;
	a.pdeathsig = pdeathsig;
	a.nsfd = -1;
	a.pport = pport;
	a.pfd = -1;
	a.userfd = -1;
	a.netfd = -1;
	a.fwd = fwd;
	a.fwdfds = fwdfds;
	a.nfwd = pport > 0 ? nfwd : 0;
	a.net = strchr(flags, 'N') != NULL || pport > 0;
	a.world = strchr(flags, 'W') != NULL;
	a.envfs = envfs;
	a.flags = flags;
	a.masks = flags + strlen(flags) + 1;
	a.end = plan + len;
	a.uid = getuid();
	a.gid = getgid();
	a.tuser = tuser;
	a.tmnt = a.world && tuser >= 0 && procfd >= 0 ? tmnt : -1;
	a.procfd = a.tmnt >= 0 ? procfd : -1;
	a.tfd = a.uid == 0 && tmpl >= 0 && !a.world ? (int)syscall(SYS_open_tree, tmpl, "", HUSH_OPEN_TREE_CLONE | O_CLOEXEC | 0x1000) : -1;
	// The child's stack, made once: one child at a time uses it
	// (spawnMu), and only until it execs, before clone returns here. An
	// mmap and munmap per call cost more than that (the munmap stops every
	// other thread of hush's to flush its TLB).
	// Through a template, a second one: the tool's, beside the one that
	// joins the template.
	static char *stack;
	const size_t stack_size = 256 << 10;
	if (stack == NULL) {
		char *s = mmap(NULL, 2 * stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		if (s == MAP_FAILED) {
			int e = errno;
			if (a.tfd >= 0) {
				close(a.tfd);
			}
			return -e;
		}
		stack = s;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int pid, e;
	if (a.tmnt >= 0) {
		// The joining child's exit signal is the tool's too (CLONE_PARENT
		// takes it from there): SIGCHLD, as for any child of hush's.
		a.pid = -EINVAL;
		a.stack2 = stack + 2 * stack_size;
		int via = clone(hush_sb_spawn_via, stack + stack_size, CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, &a);
		e = errno;
		if (via > 0) {
			while (waitpid(via, NULL, 0) < 0 && errno == EINTR) {
			}
			pid = a.pid;
			e = -a.pid;
		} else {
			pid = -1;
		}
	} else {
		int cflags = CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD | CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (a.net ? CLONE_NEWNET : 0);
		pid = clone(hush_sb_spawn_child, stack + stack_size, cflags, &a);
		e = errno;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (a.tfd >= 0) {
		close(a.tfd);
	}
	if (pid > 0) {
		*nsfd = a.nsfd;
		*pfd = a.pfd;
		*userfd = a.userfd;
		*netfd = a.netfd;
	} else {
		int opened[] = {a.nsfd, a.pfd, a.userfd, a.netfd};
		for (int i = 0; i < 4; i++) {
			if (opened[i] >= 0) {
				close(opened[i]);
			}
		}
		for (int i = 0; i < a.nfwd; i++) {
			if (fwdfds[i] >= 0) {
				close(fwdfds[i]);
			}
			fwdfds[i] = -1;
		}
	}
	return pid < 0 ? -e : pid;
}

// hush_sb_netns_connect_args is one connection made inside a tool's network.
struct hush_sb_netns_connect_args {
	int userfd, netfd, port;
	int fd; // out: the connected socket, in hush's descriptor table, or -errno
};

static int hush_sb_netns_connect_child(void *p) {
	struct hush_sb_netns_connect_args *c = p;
	// Joining the tool's user namespace first gives this child the
	// capabilities there that joining its network namespace needs (hush
	// created it, so an unprivileged hush may). It shares hush's
	// descriptor table, so the socket stays hush's when it exits.
	if (setns(c->userfd, CLONE_NEWUSER) != 0 || setns(c->netfd, CLONE_NEWNET) != 0) {
		c->fd = -errno;
		_exit(0);
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		c->fd = -errno;
		_exit(0);
	}
	struct sockaddr_in sin;
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)c->port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
		c->fd = -errno;
		close(fd);
		_exit(0);
	}
	c->fd = fd;
	_exit(0);
}

// hush_sb_netns_connect connects to 127.0.0.1:port inside the network of
// a tool (its namespaces' descriptors from hush_sb_spawn): a local service
// of the session, forwarded to a later call. A vfork'd child of hush does
// it, with no exit signal, so no wait for any child of hush's reaps it.
int hush_sb_netns_connect(int userfd, int netfd, int port) {
	struct hush_sb_netns_connect_args c = {userfd, netfd, port, -EINVAL};
	const size_t stack_size = 64 << 10;
	char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED) {
		return -errno;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int pid = clone(hush_sb_netns_connect_child, stack + stack_size, CLONE_VM | CLONE_VFORK | CLONE_FILES, &c);
	int e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0) {
		int st;
		while (waitpid(pid, &st, __WCLONE) < 0 && errno == EINTR) {
		}
	}
	munmap(stack, stack_size);
	return pid < 0 ? -e : c.fd;
}
