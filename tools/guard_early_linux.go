//go:build linux && cgo && !hush_no_early_guard

package tools

// The early guard makes hush's self re-exec (see Guard) cost one more
// exec of the file (1–2 ms here) instead of a second start-up of the whole
// program (6–8 ms).
//
// Guard runs in main, after the Go runtime and every package's
// initialisation — the model SDKs, the Docker client and the terminal
// libraries take several milliseconds of it — and its re-exec then pays
// all of that again. A real shell always exports something outside the
// core allowlist (PWD, SHLVL, OLDPWD), so that second start-up was the
// common case, doubling `hush --version`. It also doubled, in a terminal,
// the colour query bubbletea's init sends (a round trip each, a 5 s
// timeout each on a terminal that does not answer).
//
// This C constructor runs in the hush executable before the Go runtime
// exists and does the same re-exec there: the original environment into
// an anonymous memfd, then execve of the same file with only the core
// allowlist plus HUSH_ENV_FD. Go's Guard then finds HUSH_ENV_FD, reads the
// environment back, and checks the reduction against reduce — Go's rules
// stay the owner of what hush keeps: should this copy of the list ever
// keep more than reduce would, Guard hides it again the slow way. On any
// failure here the constructor simply returns and Guard does the whole job.
//
// It acts only in an executable named "hush", so test binaries and other
// programs that link this package keep their environment; only glibc
// passes a constructor argv and envp. Build with -tags hush_no_early_guard
// (or CGO_ENABLED=0) to leave everything to Guard. Go's own settings
// (GODEBUG, GOGC …) are off the allowlist, so they never reach the
// runtime of the guarded image — as before, when only the discarded first
// image saw them; to trace hush's start-up, run a copy under another name.

/*
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

// hush_early_core must equal coreNames in classify.go, which owns the list;
// TestEarlyGuardListIsCoreNames compares them. An entry ending in '*' is a
// prefix.
static const char *const hush_early_core[] = {
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "NO_COLOR",
	"LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "EDITOR", "VISUAL", "PAGER",
	0,
};

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
	(void)argc;
#ifdef __GLIBC__
	if (argv == NULL || envp == NULL) {
		return;
	}
	size_t total = 0, kept = 0, bytes = 0;
	for (char **e = envp; *e != NULL; e++) {
		if (strncmp(*e, "HUSH_ENV_FD=", 12) == 0) {
			return; // already the guarded image
		}
		total++;
		kept += (size_t)hush_early_keep(*e);
		bytes += strlen(*e) + 1; // with its NUL, as Guard's encodeEnv writes it
	}
	if (kept == total || !hush_early_is_hush()) {
		return; // nothing to hide, or not hush
	}
	// One buffer and one write rather than a write per variable.
	char *buf = malloc(bytes);
	char **next = calloc(kept + 2, sizeof *next);
	if (buf == NULL || next == NULL) {
		free(buf);
		free(next);
		return;
	}
	char *end = buf;
	for (char **e = envp; *e != NULL; e++) {
		size_t n = strlen(*e) + 1;
		memcpy(end, *e, n);
		end += n;
	}
	int fd = (int)syscall(SYS_memfd_create, "hush-env", 0); // no CLOEXEC: it must survive the exec
	if (fd < 0) {
		free(buf);
		free(next);
		return;
	}
	for (const char *p = buf; p < end;) {
		ssize_t w = write(fd, p, (size_t)(end - p));
		if (w <= 0) {
			close(fd);
			free(buf);
			free(next);
			return;
		}
		p += w;
	}
	free(buf);
	static char fdvar[32];
	snprintf(fdvar, sizeof fdvar, "HUSH_ENV_FD=%d", fd);
	size_t j = 0;
	for (char **e = envp; *e != NULL; e++) {
		if (hush_early_keep(*e)) {
			next[j++] = *e;
		}
	}
	next[j++] = fdvar;
	next[j] = NULL;
	execve("/proc/self/exe", argv, next);
	// Still here: Guard will try again, the slow way.
	free(next);
	close(fd);
#endif
}
*/
import "C"
