// What the Landlock world's C (landlock.c) offers its Go side (landlock_linux.go).
#ifndef HUSH_LANDLOCK_H
#define HUSH_LANDLOCK_H

// hush_ll_spawn starts path restricted to the Landlock ruleset, then to
// netruleset (a second layer; -1: none), and the seccomp filter (and, with
// setid, as uid and gid); it returns the child's pid or -errno.
int hush_ll_spawn(const char *path, char *const *argv, char *const *envp, const char *dir,
	int fd0, int fd1, int fd2, int pdeathsig, int ruleset, unsigned int llflags, int netruleset,
	const void *filter, unsigned short nfilter, int setid, unsigned int uid, unsigned int gid);

#endif
