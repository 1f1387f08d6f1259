//go:build linux && cgo

package tools

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hushcli/hush/tools/sandbox"
)

// dockerTestImage is the image scripts/provision imports: busybox, with sh.
const dockerTestImage = "hush-test/busybox:latest"

// landlockRefusedEnv marks the test binary run in a container whose
// seccomp profile refuses Landlock too (the engine's own default before 23).
const landlockRefusedEnv = "HUSH_LANDLOCK_TEST_REFUSED"

// dockerSeccompWithLandlock is Docker's default seccomp profile (moby's
// profiles/seccomp/default.json: every call allowed by name, clone without
// namespace flags, no unshare, mount, keyctl, add_key or request_key, no
// ptrace before 4.8) plus landlock_create_ruleset, landlock_add_rule and
// landlock_restrict_self, as engines from 23 on ship it. Debian's engine
// (20.10) lacks the three.
func dockerSeccompWithLandlock() []byte {
	allow := strings.Fields(`accept accept4 access adjtimex alarm bind brk capget capset chdir chmod chown chown32
	clock_adjtime clock_adjtime64 clock_getres clock_getres_time64 clock_gettime clock_gettime64 clock_nanosleep
	clock_nanosleep_time64 close close_range connect copy_file_range creat dup dup2 dup3 epoll_create epoll_create1
	epoll_ctl epoll_ctl_old epoll_pwait epoll_pwait2 epoll_wait epoll_wait_old eventfd eventfd2 execve execveat exit
	exit_group faccessat faccessat2 fadvise64 fadvise64_64 fallocate fanotify_mark fchdir fchmod fchmodat fchown
	fchown32 fchownat fcntl fcntl64 fdatasync fgetxattr flistxattr flock fork fremovexattr fsetxattr fstat fstat64
	fstatat64 fstatfs fstatfs64 fsync ftruncate ftruncate64 futex futex_time64 futex_waitv futimesat getcpu getcwd
	getdents getdents64 getegid getegid32 geteuid geteuid32 getgid getgid32 getgroups getgroups32 getitimer
	getpeername getpgid getpgrp getpid getppid getpriority getrandom getresgid getresgid32 getresuid getresuid32
	getrlimit get_robust_list getrusage getsid getsockname getsockopt get_thread_area gettid gettimeofday getuid
	getuid32 getxattr inotify_add_watch inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl io_destroy
	io_getevents io_pgetevents io_pgetevents_time64 ioprio_get ioprio_set io_setup io_submit io_uring_enter
	io_uring_register io_uring_setup ipc kill lchown lchown32 lgetxattr link linkat listen listxattr llistxattr
	_llseek lremovexattr lseek lsetxattr lstat lstat64 madvise membarrier memfd_create memfd_secret mincore mkdir
	mkdirat mknod mknodat mlock mlock2 mlockall mmap mmap2 mprotect mq_getsetattr mq_notify mq_open mq_timedreceive
	mq_timedreceive_time64 mq_timedsend mq_timedsend_time64 mq_unlink mremap msgctl msgget msgrcv msgsnd msync
	munlock munlockall munmap name_to_handle_at nanosleep newfstatat _newselect open openat openat2 pause
	pidfd_open pidfd_send_signal pipe pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll ppoll_time64 prctl
	pread64 preadv preadv2 prlimit64 process_mrelease pselect6 pselect6_time64 pwrite64 pwritev pwritev2 read
	readahead readlink readlinkat readv recv recvfrom recvmmsg recvmmsg_time64 recvmsg remap_file_pages
	removexattr rename renameat renameat2 restart_syscall rmdir rseq rt_sigaction rt_sigpending rt_sigprocmask
	rt_sigqueueinfo rt_sigreturn rt_sigsuspend rt_sigtimedwait rt_sigtimedwait_time64 rt_tgsigqueueinfo
	sched_getaffinity sched_getattr sched_getparam sched_get_priority_max sched_get_priority_min
	sched_getscheduler sched_rr_get_interval sched_rr_get_interval_time64 sched_setaffinity sched_setattr
	sched_setparam sched_setscheduler sched_yield seccomp select semctl semget semop semtimedop
	semtimedop_time64 send sendfile sendfile64 sendmmsg sendmsg sendto setfsgid setfsgid32 setfsuid setfsuid32
	setgid setgid32 setgroups setgroups32 setitimer setpgid setpriority setregid setregid32 setresgid
	setresgid32 setresuid setresuid32 setreuid setreuid32 setrlimit set_robust_list setsid setsockopt
	set_thread_area set_tid_address setuid setuid32 setxattr shmat shmctl shmdt shmget shutdown sigaltstack
	signalfd signalfd4 sigprocmask sigreturn socketcall socketpair splice stat stat64 statfs statfs64 statx
	symlink symlinkat sync sync_file_range syncfs sysinfo tee tgkill time timer_create timer_delete
	timer_getoverrun timer_gettime timer_gettime64 timer_settime timer_settime64 timerfd_create timerfd_gettime
	timerfd_gettime64 timerfd_settime timerfd_settime64 times tkill truncate truncate64 ugetrlimit umask uname
	unlink unlinkat utime utimensat utimensat_time64 utimes vfork vmsplice wait4 waitid waitpid write writev`)
	type arg struct {
		Index int    `json:"index"`
		Value uint64 `json:"value"`
		Op    string `json:"op"`
	}
	type rule struct {
		Names    []string       `json:"names"`
		Action   string         `json:"action"`
		ErrnoRet *int           `json:"errnoRet,omitempty"`
		Args     []arg          `json:"args,omitempty"`
		Includes map[string]any `json:"includes,omitempty"`
		Excludes map[string]any `json:"excludes,omitempty"`
	}
	enosys := 38
	rules := []rule{
		{Names: allow, Action: "SCMP_ACT_ALLOW"},
		// What engines from 23 on add to the list above.
		{Names: []string{"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"}, Action: "SCMP_ACT_ALLOW"},
		{Names: []string{"process_vm_readv", "process_vm_writev", "ptrace"}, Action: "SCMP_ACT_ALLOW", Includes: map[string]any{"minKernel": "4.8"}},
		{Names: []string{"socket"}, Action: "SCMP_ACT_ALLOW", Args: []arg{{0, 40, "SCMP_CMP_NE"}}}, // not AF_VSOCK
		{Names: []string{"arch_prctl"}, Action: "SCMP_ACT_ALLOW", Includes: map[string]any{"arches": []string{"amd64", "x32"}}},
		{Names: []string{"modify_ldt"}, Action: "SCMP_ACT_ALLOW", Includes: map[string]any{"arches": []string{"amd64", "x32", "x86"}}},
		// clone without any namespace flag (CLONE_NEWNS|NEWUTS|NEWIPC|
		// NEWUSER|NEWPID|NEWNET|NEWCGROUP), clone3 not at all.
		{Names: []string{"clone"}, Action: "SCMP_ACT_ALLOW", Args: []arg{{0, 2114060288, "SCMP_CMP_MASKED_EQ"}},
			Excludes: map[string]any{"caps": []string{"CAP_SYS_ADMIN"}}},
		{Names: []string{"clone3"}, Action: "SCMP_ACT_ERRNO", ErrnoRet: &enosys, Excludes: map[string]any{"caps": []string{"CAP_SYS_ADMIN"}}},
		{Names: []string{"chroot"}, Action: "SCMP_ACT_ALLOW", Includes: map[string]any{"caps": []string{"CAP_SYS_CHROOT"}}},
	}
	for _, v := range []uint64{0, 8, 131072, 131080, 4294967295} {
		rules = append(rules, rule{Names: []string{"personality"}, Action: "SCMP_ACT_ALLOW", Args: []arg{{0, v, "SCMP_CMP_EQ"}}})
	}
	b, _ := json.MarshalIndent(map[string]any{
		"defaultAction":   "SCMP_ACT_ERRNO",
		"defaultErrnoRet": 1,
		"archMap": []map[string]any{
			{"architecture": "SCMP_ARCH_X86_64", "subArchitectures": []string{"SCMP_ARCH_X86", "SCMP_ARCH_X32"}},
			{"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": []string{"SCMP_ARCH_ARM"}},
		},
		"syscalls": rules,
	}, "", "\t")
	return b
}

// TestLandlockWorldInDocker runs TestLandlockWorldHere inside a Docker
// container on Docker's default seccomp profile with the Landlock calls
// (dockerSeccompWithLandlock), as the container's root and as uid 1000;
// and TestLandlockRefusedHere on the engine's own default profile. The
// test binary is built static (busybox has no C library to link against).
// HUSH_TEST_REQUIRE_DOCKER=1 (CI) fails where Docker or the image is
// missing; otherwise the test is skipped, saying why.
func TestLandlockWorldInDocker(t *testing.T) {
	if os.Getenv(landlockHereEnv) != "" || os.Getenv(landlockRefusedEnv) != "" {
		t.Skip("running inside the container")
	}
	unavailable := func(why string) {
		t.Helper()
		if os.Getenv("HUSH_TEST_REQUIRE_DOCKER") == "1" {
			t.Fatalf("HUSH_TEST_REQUIRE_DOCKER=1 but %s", why)
		}
		t.Skip(why)
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		unavailable("the docker CLI is not installed (scripts/provision installs the engine)")
	}
	if out, err := exec.Command(docker, "image", "inspect", "--format", "{{.Id}}", dockerTestImage).CombinedOutput(); err != nil {
		unavailable("no Docker engine with image " + dockerTestImage + " (scripts/provision imports it): " + strings.TrimSpace(string(out)))
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		unavailable("go is not in PATH, to build the static test binary")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "tools.test")
	build := exec.Command(goBin, "test", "-c", "-o", bin, "-ldflags=-linkmode=external -extldflags=-static", ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building a static test binary: %v\n%s", err, out)
	}
	profile := filepath.Join(dir, "seccomp-default-landlock.json")
	if err := os.WriteFile(profile, dockerSeccompWithLandlock(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, user string, secopt []string, env, test string) {
		t.Helper()
		args := append([]string{"run", "--rm", "--user", user, "-v", dir + ":/hush:ro", "-e", env + "=1", "-e", "TMPDIR=/tmp", "-e", "HOME=/tmp"}, secopt...)
		args = append(args, dockerTestImage, "/hush/tools.test", "-test.run=^"+test+"$", "-test.v", "-test.count=1")
		var out bytes.Buffer
		cmd := exec.Command(docker, args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if err != nil || !strings.Contains(out.String(), "--- PASS: "+test) || strings.Contains(out.String(), "--- SKIP: "+test) {
			t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		t.Logf("in the container:\n%s", out.String())
	}
	for _, user := range []string{"0:0", "1000:1000"} {
		t.Run("default-profile-with-landlock/"+user, func(t *testing.T) {
			run(t, user, []string{"--security-opt", "seccomp=" + profile}, landlockHereEnv, "TestLandlockWorldHere")
		})
		t.Run("engine-default-profile/"+user, func(t *testing.T) {
			run(t, user, nil, landlockRefusedEnv, "TestLandlockRefusedHere")
		})
	}
}

// TestLandlockRefusedHere: in a container on the engine's own default
// profile, the warning names the container's seccomp profile; where that
// profile refuses Landlock too (engines before 23), it says so, and host
// tools run without a sandbox; where it allows it, they get the Landlock
// world.
func TestLandlockRefusedHere(t *testing.T) {
	if os.Getenv(landlockRefusedEnv) == "" {
		t.Skip("helper: run by TestLandlockWorldInDocker")
	}
	st := sandbox.Status()
	t.Logf("uid %d, Landlock ABI %d, Landlock world %v, reason: %s", os.Getuid(), st.LandlockABI, st.LandlockOnly, st.Reason)
	if st.Namespaces {
		t.Fatal("the sandbox says it has namespaces in a container on Docker's default profile")
	}
	if !strings.Contains(st.Reason, "the container's seccomp profile refuses user namespaces (a Docker container: /.dockerenv") {
		t.Errorf("the reason does not name the container's seccomp profile: %q", st.Reason)
	}
	if st.LandlockABI == 0 && !strings.Contains(st.Reason, "the seccomp filter refuses Landlock too") {
		t.Errorf("Landlock is refused but the reason does not say so: %q", st.Reason)
	}
	if st.LandlockABI > 0 && !st.LandlockOnly {
		t.Errorf("Landlock ABI %d but no Landlock world", st.LandlockABI)
	}
}
