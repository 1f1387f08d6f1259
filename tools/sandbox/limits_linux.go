package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// totalMemory is this machine's RAM in bytes (0: unknown).
func totalMemory() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// kernelAtLeast reports whether the running kernel is major.minor or later.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, _ := strconv.Atoi(parts[0])
	mi, _ := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return ma > major || ma == major && mi >= minor
}

// Names of the limits in LimitStatus.
const (
	LimitProcesses = "max-processes"
	LimitMemory    = "max-memory"
)

// LimitStatus says how this machine enforces l for a host tool, one
// Protection per limit (Why: what holds, or why it does not), for `hush
// sandbox show` and docs/sandbox.md. st is Status().
func LimitStatus(l Limits, st State) []Protection {
	setting := l.Setting
	if setting == "" {
		setting = "the tool's section"
	}
	procs := Protection{Name: LimitProcesses}
	mem := Protection{Name: LimitMemory}
	refused := "not enforced: it is set inside the tool's own namespaces, which this machine refuses (" + st.Reason + ")"
	switch {
	case l.Processes <= 0:
		procs.Why = "off: max_processes = 0 in " + setting
	case !st.Namespaces:
		procs.Why = refused
	default:
		var how []string
		if kernelAtLeast(6, 14) {
			how = append(how, "the pid_max of the call's own PID namespace")
		}
		if os.Getuid() != 0 {
			how = append(how, "RLIMIT_NPROC in the call's own user namespace, which counts only the call's processes")
		}
		if len(how) == 0 {
			procs.Why = "not enforced: the kernel never applies RLIMIT_NPROC to root, and this kernel is older than 6.14, " +
				"whose PID namespaces have a pid_max of their own; hush still stops a call it sees reach " + thousands(int64(l.Processes)) + " processes"
			break
		}
		procs.On = true
		procs.Why = fmt.Sprintf("%s processes at once per call (max_processes in %s): %s; a call that reaches it is stopped with everything it started",
			thousands(int64(l.Processes)), setting, strings.Join(how, ", and "))
	}
	switch {
	case l.Memory <= 0:
		mem.Why = "off: max_memory = \"off\" in " + setting
	case !st.Namespaces:
		mem.Why = refused
	default:
		mem.On = true
		mem.Why = fmt.Sprintf("%s per process of the call (max_memory in %s): RLIMIT_DATA, so an allocation past it fails; "+
			"per process, not the call's sum, which would take a cgroup of the call's own, and hush does not make cgroups",
			FormatBytes(l.Memory), setting)
	}
	return []Protection{procs, mem}
}

// LimitWatch stops a running call that reaches its process limit: the
// kernel's limits (limits.c) make further forks fail, which a fork bomb
// ignores, retrying until its call times out; hush ends the call instead,
// with one sentence (LimitError).
type LimitWatch struct {
	stop, done chan struct{}
	hit        atomic.Pointer[LimitError]
}

// limitPoll is how often a call's processes are counted: one getdents on
// the call's own /proc, a few microseconds for a few processes.
const limitPoll = 100 * time.Millisecond

// WatchLimits counts the processes of the sandboxed child pid (the init
// of its PID namespace, or the process above it) while it runs, through
// that namespace's /proc, and calls kill once they reach cfg's limit. It
// returns nil when there is nothing to watch.
func WatchLimits(pid int, cfg *Config, kill func()) *LimitWatch {
	if cfg == nil || cfg.Limits.Processes <= 0 || !Status().Namespaces || Status().LandlockOnly {
		return nil
	}
	var host unix.Stat_t
	if unix.Stat("/proc", &host) != nil {
		return nil
	}
	w := &LimitWatch{stop: make(chan struct{}), done: make(chan struct{})}
	limit := cfg.Limits.Processes
	go func() {
		defer close(w.done)
		fd := -1
		defer func() {
			if fd >= 0 {
				unix.Close(fd)
			}
		}()
		buf := make([]byte, 16<<10)
		t := time.NewTicker(limitPoll)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			if fd < 0 {
				// Until the namespace's /proc is mounted (a child
				// started through the init mounts it after Start
				// returned), the path leads to hush's own: not counted.
				f, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/root/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				if err != nil {
					continue
				}
				var st unix.Stat_t
				if unix.Fstat(f, &st) != nil || st.Dev == host.Dev {
					unix.Close(f)
					continue
				}
				fd = f
			}
			if countPids(fd, buf) >= limit {
				w.hit.Store(&LimitError{Limits: cfg.Limits, What: "processes"})
				kill()
				return
			}
		}
	}()
	return w
}

// Stop ends the watch, once the call has ended, and returns the
// LimitError that stopped the call, or err.
func (w *LimitWatch) Stop(err error) error {
	if w == nil {
		return err
	}
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	if e := w.hit.Load(); e != nil {
		return e
	}
	return err
}

// countPids counts the processes a /proc lists (its numeric entries).
func countPids(fd int, buf []byte) int {
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return 0
	}
	n := 0
	for {
		got, err := unix.Getdents(fd, buf)
		if err != nil || got <= 0 {
			return n
		}
		for off := 0; off+19 < got; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 {
				break
			}
			if c := buf[off+19]; c >= '1' && c <= '9' {
				n++
			}
			off += reclen
		}
	}
}
