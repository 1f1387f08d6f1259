//go:build linux && cgo

// The .env layer's mount: see envfs_linux.go.

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "envfs.h"

// hush_sb_envfs_mount runs in the sandbox's set-up, in the child's own
// user and mount namespaces, before the tool. The kernel takes a FUSE
// device only from a process of the mount's user namespace, so the child
// opens it here, mounts it, and hands it to hush over the socket (whose
// goroutine serves it: hush's calling thread is suspended until this child
// execs). The mount's INIT request waits in the device for hush, and so
// does the set-up's next lookup below dst.
int hush_sb_envfs_mount(const char *dst, const char *arg) {
	char *end = NULL;
	long sock = strtol(arg, &end, 10);
	if (end == arg || *end != ':' || sock < 0) {
		errno = EINVAL;
		return -1;
	}
	const char *dev = end + 1;
	int fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		return -1;
	}
	char opts[128];
	// rootmode: a directory; user_id and group_id: this user, as the
	// namespace maps it, the only one the kernel lets in (no allow_other);
	// default_permissions: the kernel checks the modes and owners, as on
	// the host's own file system.
	snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=%ld,group_id=%ld,default_permissions", fd, (long)getuid(),
	         (long)getgid());
	int rc = mount("hush-envfs", dst, "fuse.hush", MS_NOSUID | MS_NODEV, opts);
	int err = errno;
	if (rc == 0) {
		char byte = 'F';
		struct iovec iov = {.iov_base = &byte, .iov_len = 1};
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} u;
		memset(&u, 0, sizeof u);
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
		if (sendmsg((int)sock, &msg, MSG_NOSIGNAL) != 1) {
			rc = -1;
			err = errno;
		}
	}
	close(fd);
	close((int)sock);
	errno = err;
	return rc;
}

int hush_sb_envfs_place(int sock) {
	if (sock < 0) {
		return -1;
	}
	// Above any descriptor dup3 clobbers, then into place.
	int s = fcntl(sock, F_DUPFD_CLOEXEC, 10);
	if (s < 0 || dup3(s, 3, O_CLOEXEC) < 0) {
		return -1;
	}
	close(s);
	return 4;
}
