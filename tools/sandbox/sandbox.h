// What the sandbox's C (sandbox.c) offers its Go side (start_linux.go).
#ifndef HUSH_SANDBOX_H
#define HUSH_SANDBOX_H

#include <stddef.h>

// hush_sb_template makes, once per hush run as root, the read-only scratch
// each of its sandboxes starts from; it returns the mount's descriptor, or
// -errno where the kernel refuses it.
int hush_sb_template(void);

// hush_sb_spawn starts path in a sandbox of its own (vfork'd, cloned into
// its namespaces) following plan; it returns the child's pid or -errno, and
// *nsfd, a reference to the child's mount namespace, or -1. With pport > 0
// the child gets a network namespace of its own and *pfd is a listener on
// 127.0.0.1:pport inside it, for hush's egress proxy (or -errno).
// *userfd and *netfd are then references to its user and network
// namespaces, and fwdfds[i] a listener on 127.0.0.1:fwd[i] there (for the
// session's local services), or -errno. envfs is the socket to hush's .env
// layer server (envfs.c), or -1.
int hush_sb_spawn(const char *path, char *const *argv, char *const *envp, const char *dir,
	int fd0, int fd1, int fd2, int pdeathsig, const char *plan, size_t len, int tmpl, int pport, int envfs, int *nsfd, int *pfd,
	int *userfd, int *netfd, const int *fwd, int *fwdfds, int nfwd, int tuser, int tmnt, int procfd);

// hush_sb_world_template builds a world's root (the plan's records) once,
// for hush_sb_spawn to start tools in copies of (tuser, tmnt, with procfd a
// descriptor of hush's /proc), and starts one probe through it: 0 and
// references to its user and mount namespaces, or -errno, with why on
// errfd.
int hush_sb_world_template(const char *plan, size_t len, int errfd, int procfd, int *userfd, int *mntfd);

// hush_sb_netns_connect connects to 127.0.0.1:port inside the network
// namespace netfd (owned by the user namespace userfd), returning the
// socket or -errno.
int hush_sb_netns_connect(int userfd, int netfd, int port);

#endif
