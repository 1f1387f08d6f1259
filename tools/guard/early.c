//go:build linux && cgo && !hush_no_early_guard

// The early guard: see early_linux.go.

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif

// hush_early_core must equal coreNames in tools/classify.go, which owns the list;
// TestEarlyGuardListIsCoreNames compares them. An entry ending in '*' is a
// prefix.
static const char *const hush_early_core[] = {
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR",
	"LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "EDITOR", "VISUAL", "PAGER",
	0,
};

// hush_early_env_fd is the memfd holding the original environment once the
// constructor has hidden it, and -1 otherwise. Guard reads it.
int hush_early_env_fd = -1;

// hush_early_keep reports whether kv stays in hush's own environment: a
// core name whose value does not look like a URL with user info (reduce
// drops a URL with a password; dropping any user info is stricter, and
// stricter is fine: Guard only re-checks that nothing extra was kept).
static int hush_early_keep(const char *kv) {
	const char *eq = strchr(kv, '=');
	if (eq == NULL || eq == kv) {
		return 0;
	}
	size_t n = (size_t)(eq - kv);
	int core = 0;
	for (int i = 0; !core && hush_early_core[i] != NULL; i++) {
		const char *c = hush_early_core[i];
		size_t cl = strlen(c);
		if (c[cl - 1] == '*') {
			core = n >= cl - 1 && strncmp(kv, c, cl - 1) == 0 && memchr(kv, '/', n) == NULL;
		} else {
			core = n == cl && strncmp(kv, c, n) == 0;
		}
	}
	if (!core) {
		return 0;
	}
	const char *scheme = strstr(eq + 1, "://");
	return scheme == NULL || strchr(scheme, '@') == NULL;
}

static int hush_early_is_hush(void) {
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) {
		return 0;
	}
	exe[n] = 0;
	const char *base = strrchr(exe, '/');
	return strcmp(base != NULL ? base + 1 : exe, "hush") == 0;
}

__attribute__((constructor)) static void hush_early_guard(int argc, char **argv, char **envp) {
#ifdef __GLIBC__
	// envp must be the array the kernel set up, which Go's runtime reads
	// (after argv); a constructor before this one may have moved environ.
	if (argv == NULL || envp == NULL || envp != argv + argc + 1 || envp[0] == NULL) {
		return;
	}
	size_t total = 0, kept = 0;
	char *end = envp[0]; // one past the last string's NUL
	for (char **e = envp; *e != NULL; e++) {
		if (strncmp(*e, "HUSH_ENV_FD=", 12) == 0) {
			return; // Guard's own re-exec: it reads the environment back itself
		}
		if (*e != end && e != envp) {
			return; // not one block of strings, as execve leaves them
		}
		end = *e + strlen(*e) + 1;
		total++;
		kept += (size_t)hush_early_keep(*e);
	}
	if (kept == total || !hush_early_is_hush()) {
		return; // nothing to hide, or not hush
	}
	// Non-dumpable before the memfd exists: until Go's Guard has read and
	// closed it, another process of the same user could otherwise open it
	// through /proc/<pid>/fd (Guard's harden sets this too, but only once
	// the Go runtime and every package have initialised).
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	// The strings are one block [envp[0], end), NUL-separated, exactly
	// what Guard's readEnvFD parses: one write saves them whole.
	int fd = (int)syscall(SYS_memfd_create, "hush-env", MFD_CLOEXEC);
	if (fd < 0) {
		return;
	}
	for (const char *p = envp[0]; p < end;) {
		ssize_t w = write(fd, p, (size_t)(end - p));
		if (w <= 0) {
			close(fd);
			return;
		}
		p += w;
	}
	// Compact the kept strings to the front of the block, in order. The
	// write position never passes the string being read, and memmove
	// allows the overlap.
	char *to = envp[0];
	size_t j = 0;
	for (size_t i = 0; i < total; i++) {
		char *kv = envp[i];
		size_t n = strlen(kv) + 1;
		if (hush_early_keep(kv)) {
			memmove(to, kv, n);
			envp[j++] = to;
			to += n;
		}
	}
	// What /proc/<pid>/environ shows past the kept strings: one entry
	// naming what happened, padded with spaces to the block's old end, so
	// `tr '\0' '\n'` prints one line rather than a blank line per byte
	// dropped. envp does not point at it: hush's own environment does
	// not hold it. A gap too short for it is zeroed.
	static const char pad[] = "HUSH_ENV_HIDDEN=";
	size_t gap = (size_t)(end - to);
	explicit_bzero(to, gap);
	if (gap >= sizeof pad) {
		memcpy(to, pad, sizeof pad - 1);
		memset(to + sizeof pad - 1, ' ', gap - sizeof pad);
	}
	for (size_t i = j; i < total; i++) {
		envp[i] = NULL;
	}
	hush_early_env_fd = fd;
#else
	(void)argc;
	(void)argv;
	(void)envp;
#endif
}
