//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTmpBusWatchFollowsTmp: the inotify watch behind the stray-bus masks
// sees a /tmp/dbus-* socket made, renamed and removed after the first
// plan, the very next plan — without waiting for /tmp's mtime to settle —
// and does not take a plain file of that name for a socket.
func TestTmpBusWatchFollowsTmp(t *testing.T) {
	if _, ok := watchedTmpBuses(); !ok {
		t.Fatal("/tmp could not be watched with inotify on this machine")
	}
	c := canary(t)
	sock, moved, plain := "/tmp/dbus-hushwatch"+c[6:14], "/tmp/dbus-hushwatch"+c[6:14]+"m", "/tmp/dbus-hushwatch"+c[6:14]+"f"
	t.Cleanup(func() { os.Remove(sock); os.Remove(moved); os.Remove(plain) })
	has := func(p string) bool {
		socks, ok := watchedTmpBuses()
		if !ok {
			t.Fatal("the watch on /tmp went away")
		}
		return slices.Contains(socks, p)
	}
	if has(sock) {
		t.Fatalf("%s is listed before it exists", sock)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	defer l.Close()
	if !has(sock) {
		t.Fatalf("a socket made in /tmp after the first plan is not masked: %s", sock)
	}
	if err := os.Rename(sock, moved); err != nil {
		t.Fatal(err)
	}
	if has(sock) || !has(moved) {
		t.Fatalf("a renamed socket is not followed: %s -> %s", sock, moved)
	}
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if has(plain) {
		t.Fatalf("a plain file is taken for a socket: %s", plain)
	}
	if err := os.Remove(moved); err != nil {
		t.Fatal(err)
	}
	if has(moved) {
		t.Fatalf("a removed socket is still listed: %s", moved)
	}
	// The same answer as a full listing of /tmp, before or after it (other
	// programs may make a bus socket meanwhile).
	for i := 0; ; i++ {
		before, _ := watchedTmpBuses()
		list := listTmpBuses()
		after, _ := watchedTmpBuses()
		if slices.Equal(before, list) || slices.Equal(list, after) {
			break
		}
		if i == 4 {
			t.Fatalf("the watch says %q then %q, a listing of /tmp %q", before, after, list)
		}
	}
}

// TestShortRunMakesNoInotifyInstance: a process that plans a few
// sandboxed calls lists /tmp and makes no inotify instance, whose teardown
// would cost it 5–15 ms at exit; one that plans many calls, while /tmp
// keeps changing, watches it (the positive control).
func TestShortRunMakesNoInotifyInstance(t *testing.T) {
	if _, ok := watchedTmpBuses(); !ok {
		t.Skip("/tmp cannot be watched with inotify on this machine")
	}
	for _, tc := range []struct {
		plans int
		want  string
	}{{2, "inotify 0"}, {3 * watchAfter, "inotify 1"}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestTmpBusHelper$")
		cmd.Env = append(os.Environ(), "HUSH_TMPBUS_HELPER="+strconv.Itoa(tc.plans))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), tc.want+"\n") {
			t.Errorf("%d plans: want %q, helper said:\n%s", tc.plans, tc.want, out)
		}
	}
}

// TestTmpBusHelper plans $HUSH_TMPBUS_HELPER calls' stray-bus masks, with
// /tmp changed before each, and says how many inotify instances it holds.
func TestTmpBusHelper(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("HUSH_TMPBUS_HELPER"))
	if err != nil {
		t.Skip("helper process only")
	}
	for i := 0; i < n; i++ {
		f, err := os.CreateTemp("/tmp", "hush-tmpbus-")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		os.Remove(f.Name())
		strayBuses()
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	count := 0
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); l == "anon_inode:inotify" {
			count++
		}
	}
	fmt.Printf("inotify %d\n", count)
}
