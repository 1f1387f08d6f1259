package selftest

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

const sessKeyChild = "HUSH_TEST_SESSKEY_CHILD"

// TestFreshSessionKeyringLeavesTheInheritedOneAlone: the key the audit
// plants on its fresh keyring's thread is not in the session keyring hush
// was started in (a login session's, shared by every process of that
// session). The test runs itself again in a session keyring of its own
// making, which all of that process's threads inherit, as a login
// session's; the control plants in it directly and finds the key there.
func TestFreshSessionKeyringLeavesTheInheritedOneAlone(t *testing.T) {
	if os.Getenv(sessKeyChild) != "" {
		inheritedKeyringChild(t)
		return
	}
	runtime.LockOSThread() // no unlock: the thread exits with this test
	if _, err := unix.KeyctlJoinSessionKeyring("hush-test-login-" + newMark()); err != nil {
		t.Fatalf("join a named session keyring: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFreshSessionKeyringLeavesTheInheritedOneAlone$", "-test.v")
	cmd.Env = append(os.Environ(), sessKeyChild+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

func inheritedKeyringChild(t *testing.T) {
	name, canary := "hush-audit-test-"+newMark(), canaryPrefix+"sesskey-"+newMark()
	var planted error
	onFreshSessionKeyring(func() {
		// The key goes with the thread's keyring when the thread ends.
		if _, planted = plantSessionKey(name, canary); planted == nil {
			if _, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", name, 0); err != nil {
				t.Errorf("the planted key is not in the fresh keyring: %v", err)
			}
		}
	})
	if planted != nil {
		t.Fatalf("plant a key on a fresh session keyring: %v", planted)
	}
	if _, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", name, 0); err == nil {
		t.Errorf("the audit's key sits in the session keyring hush was started in")
	}
	// The control: a key planted in the inherited keyring is found there.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	id, err := plantSessionKey(name+"-control", canary)
	if err != nil {
		t.Fatalf("control: plant in the inherited keyring: %v", err)
	}
	defer removeSessionKey(id)
	if _, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", name+"-control", 0); err != nil {
		t.Errorf("control: a key planted in the inherited keyring is not found there: %v", err)
	}
}
