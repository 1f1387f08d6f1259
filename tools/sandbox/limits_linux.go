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
		mem.Why = fmt.Sprintf("%s per call (max_memory in %s): hush adds up the memory of the call's processes "+
			"(ten times a second, in the call's own /proc) and stops the call with everything it started once they pass it; "+
			"each process also has an RLIMIT_DATA of %s, so an allocation that would take it past that at once fails",
			FormatBytes(l.Memory), setting, FormatBytes(l.dataLimit()))
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
// that namespace's /proc, and adds up their memory, and calls kill once
// either reaches cfg's limit. It returns nil when there is nothing to
// watch.
//
// The memory is each process's resident memory less what it shares with
// files (statm's resident − shared: its heap, stacks and private
// mappings that are in RAM), summed over the call: RLIMIT_DATA (limits.c)
// bounds one process's allocations but not a call's many processes, and
// no cgroup of the call's own counts them for hush.
func WatchLimits(pid int, cfg *Config, kill func()) *LimitWatch {
	if cfg == nil || cfg.Limits.Processes <= 0 && cfg.Limits.Memory <= 0 || !Status().Namespaces || Status().LandlockOnly {
		return nil
	}
	var host unix.Stat_t
	if unix.Stat("/proc", &host) != nil {
		return nil
	}
	w := &LimitWatch{stop: make(chan struct{}), done: make(chan struct{})}
	limit, memLimit := cfg.Limits.Processes, cfg.Limits.Memory
	go func() {
		defer close(w.done)
		fd := -1
		defer func() {
			if fd >= 0 {
				unix.Close(fd)
			}
		}()
		buf := make([]byte, 16<<10)
		var pids []int
		t := time.NewTicker(limitPoll)
		defer t.Stop()
		for tick := 0; ; tick++ {
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
			pids = listPids(fd, buf, pids[:0])
			if limit > 0 && len(pids) >= limit {
				w.hit.Store(&LimitError{Limits: cfg.Limits, What: "processes"})
				kill()
				return
			}
			// A call of many processes is weighed less often: reading
			// each one's statm is a few microseconds.
			if memLimit > 0 && (len(pids) <= 256 || tick%5 == 0) && privateMemory(fd, pids, buf) >= memLimit {
				w.hit.Store(&LimitError{Limits: cfg.Limits, What: "memory"})
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

// listPids appends the pids a /proc lists (its numeric entries) to pids.
func listPids(fd int, buf []byte, pids []int) []int {
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return pids
	}
	for {
		got, err := unix.Getdents(fd, buf)
		if err != nil || got <= 0 {
			return pids
		}
		for off := 0; off+19 < got; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen == 0 {
				break
			}
			if c := buf[off+19]; c >= '1' && c <= '9' {
				n := 0
				for _, c := range buf[off+19 : off+reclen] {
					if c < '0' || c > '9' {
						break
					}
					n = n*10 + int(c-'0')
				}
				pids = append(pids, n)
			}
			off += reclen
		}
	}
}

// privateMemory is the sum, in bytes, of resident − shared memory (statm)
// over pids, read through the /proc at fd; a process that has gone
// meanwhile counts nothing.
func privateMemory(fd int, pids []int, buf []byte) int64 {
	page := int64(unix.Getpagesize())
	var sum int64
	for _, pid := range pids {
		f, err := unix.Openat(fd, strconv.Itoa(pid)+"/statm", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		n, err := unix.Read(f, buf[:128])
		unix.Close(f)
		if err != nil || n <= 0 {
			continue
		}
		// size resident shared text lib data dt
		fields := strings.Fields(string(buf[:n]))
		if len(fields) < 3 {
			continue
		}
		resident, err1 := strconv.ParseInt(fields[1], 10, 64)
		shared, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 == nil && err2 == nil && resident > shared {
			sum += (resident - shared) * page
		}
	}
	return sum
}
