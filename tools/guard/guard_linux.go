package guard

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Guard protects hush's own process and returns the environment hush was
// started with, as an in-memory map. Call it first thing in main.
//
// /proc/<pid>/environ shows the environment a process was exec'd with, to
// every same-user process (a tool reads it as /proc/$PPID/environ) and to
// root whatever PR_SET_DUMPABLE says. So when hush's environment holds more
// than the core allowlist, Guard copies it into an anonymous memfd, re-execs
// hush (same pid) with only the core allowlist plus the descriptor number,
// and the new image reads the original back and closes the memfd. In the
// hush executable a C constructor (early.c) normally hides the
// environment before the Go runtime starts, in place and without an exec;
// Guard then only reads the original back and checks the reduction.
// Everything hush needs from its environment (HUSH_*, DOCKER_HOST, proxy
// settings, API keys) comes from the returned map and is handed to
// libraries explicitly.
//
// It also sets PR_SET_DUMPABLE 0 (no ptrace or /proc/<pid>/mem for same-user
// processes) and RLIMIT_CORE 0 (no core file holding secrets).
//
// On failure Guard returns the current environment and an error the caller
// prints as a warning; hush still works, but its environ is not reduced.
func Guard() (map[string]string, error) {
	harden()
	if fd := earlyEnvFD(); fd >= 0 {
		// The early guard (early.c) rewrote the environment in
		// place with its own copy of the allowlist; the original is in fd.
		env, err := readEnvFD(fd)
		if err != nil {
			// The original is gone from environ already: carry on with
			// what is left (the core variables) rather than stop.
			guardedBy = GuardedInPlace
			return environMap(), fmt.Errorf("read the environment back from the early guard: %w; only the core variables are available", err)
		}
		return checkReduced(env, GuardedInPlace)
	}
	if fdText, ok := syscall.Getenv(envFDVar); ok {
		fd, err := strconv.Atoi(fdText)
		if err != nil || fd < 3 {
			err = fmt.Errorf("bad %s", envFDVar)
		}
		var env map[string]string
		if err == nil {
			env, err = readEnvFD(fd)
		}
		if err == nil {
			return checkReduced(env, GuardedByReexec) // after reexec below
		}
		// Not a descriptor the guard left (a stray HUSH_ENV_FD in the
		// caller's environment, say): what this process holds is all
		// there is, so hide it as if the guard had not run.
		env = environMap()
		delete(env, envFDVar)
		if rerr := reexec(env); rerr != nil {
			return env, fmt.Errorf("read the environment back from the guard: %w; %w", err, rerr)
		}
		return env, nil
	}
	env := environMap()
	if len(reduce(env)) == len(env) {
		guardedBy = GuardedNothingToHide
		return env, nil // nothing outside the allowlist to hide
	}
	return env, reexec(env)
}

// checkReduced returns env, the original environment, once the process
// environment is known to hold no more than reduce(env) allows; reduce owns
// the rules, so a reduction that kept too much is redone by reexec.
func checkReduced(env map[string]string, how string) (map[string]string, error) {
	if !keepsOnly(environMap(), reduce(env)) {
		return env, reexec(env)
	}
	guardedBy = how
	return env, nil
}

// How Guard hid the environment, for GuardedBy.
const (
	GuardedInPlace       = "in place before the Go runtime started"
	GuardedByReexec      = "by re-executing hush"
	GuardedNothingToHide = "nothing to hide"
)

var guardedBy string

// GuardedBy says how the last Guard call hid the environment ("" before
// one succeeded), for the early guard's test.
func GuardedBy() string { return guardedBy }

// keepsOnly reports whether every variable of current, other than the
// descriptor number, is in allowed with the same value.
func keepsOnly(current, allowed map[string]string) bool {
	for k, v := range current {
		if a, ok := allowed[k]; k != envFDVar && (!ok || a != v) {
			return false
		}
	}
	return true
}

// reexec replaces the process image with hush itself (same pid), its
// environment reduced to reduce(env) plus the number of a memfd holding
// env, which the new image reads back. It returns only on failure.
func reexec(env map[string]string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("re-exec to hide the environment: %w", err)
	}
	fd, err := unix.MemfdCreate("hush-env", 0) // no CLOEXEC: it must survive the exec
	if err != nil {
		return fmt.Errorf("re-exec to hide the environment: memfd: %w", err)
	}
	all := make([]string, 0, len(env))
	for k, v := range env {
		all = append(all, k+"="+v)
	}
	if err := writeAll(fd, encodeEnv(all)); err != nil {
		_ = unix.Close(fd)
		return fmt.Errorf("re-exec to hide the environment: %w", err)
	}
	reduced := reduce(env)
	next := make([]string, 0, len(reduced)+1)
	for k, v := range reduced {
		next = append(next, k+"="+v)
	}
	next = append(next, envFDVar+"="+strconv.Itoa(fd))
	err = syscall.Exec(exe, os.Args, next)
	_ = unix.Close(fd)
	return fmt.Errorf("re-exec to hide the environment: %w", err)
}

func harden() {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0})
}

// readEnvFD reads the NUL-separated environment in fd and closes it.
func readEnvFD(fd int) (map[string]string, error) {
	defer unix.Close(fd)
	var buf bytes.Buffer
	chunk := make([]byte, 64<<10)
	for off := int64(0); ; {
		n, err := unix.Pread(fd, chunk, off)
		if n > 0 {
			buf.Write(chunk[:n])
			off += int64(n)
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(buf.Bytes(), []byte{0}) {
		if i := bytes.IndexByte(kv, '='); i > 0 {
			env[string(kv[:i])] = string(kv[i+1:])
		}
	}
	return env, nil
}

func encodeEnv(environ []string) []byte {
	var b bytes.Buffer
	for _, kv := range environ {
		b.WriteString(kv)
		b.WriteByte(0)
	}
	return b.Bytes()
}

func writeAll(fd int, p []byte) error {
	for len(p) > 0 {
		n, err := unix.Write(fd, p)
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}
