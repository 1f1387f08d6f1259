//go:build linux

package tools

import (
	"net"
	"os"
	"slices"
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
