package selftest

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// The session keyring row (AtkSessionKey): a child inherits the kernel
// session keyring of whoever started it and may read every key its
// possessor may — a login session's holds Kerberos tickets and other
// programs' keys. The audit plants a key there before it starts the agent
// under test; the hostile tool searches its session keyring for it and
// reads its payload raw.

// onFreshSessionKeyring runs f on an OS thread of its own that first joins
// a new anonymous session keyring, so that what the audit plants never
// sits in the keyring of the session it was started from. The thread is
// never handed back (it ends with the goroutine), so its keyring goes with
// it. A kernel that refuses the join leaves f in the inherited keyring,
// where plantSessionKey's key is removed again afterwards.
func onFreshSessionKeyring(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // no unlock: the thread exits with this goroutine
		_ = joinAnonymousSessionKeyring()
		f()
	}()
	<-done
}

// joinAnonymousSessionKeyring gives the calling thread a new, anonymous
// session keyring: KEYCTL_JOIN_SESSION_KEYRING with a NULL name. It is not
// unix.KeyctlJoinSessionKeyring(""), which passes an empty name, which the
// kernel refuses (EINVAL): the audit's key then went into the inherited
// keyring — the login session's, where every process of that session could
// search for it while the audit ran.
func joinAnonymousSessionKeyring() error {
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// plantSessionKey adds a user key name holding value to the calling
// thread's session keyring and reads it back: the row's first control,
// that the key is there to be found.
func plantSessionKey(name, value string) (int, error) {
	id, err := unix.AddKey("user", name, []byte(value), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		return 0, fmt.Errorf("add a key to the session keyring: %w", err)
	}
	got, err := readKey(id)
	if err == nil && !bytes.Equal(got, []byte(value)) {
		err = errors.New("the key read back differs from what was planted")
	}
	if err != nil {
		removeSessionKey(id)
		return 0, err
	}
	return id, nil
}

// removeSessionKey takes a planted key out of the session keyring and
// revokes it, so nothing that still holds the keyring can read it.
func removeSessionKey(id int) {
	_, _ = unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_SESSION_KEYRING, 0, 0)
	_, _ = unix.KeyctlInt(unix.KEYCTL_REVOKE, id, 0, 0, 0)
}

// readKey reads a key's payload.
func readKey(id int) ([]byte, error) {
	buf := make([]byte, 512)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil {
		return nil, err
	}
	if n > len(buf) {
		n = len(buf)
	}
	return buf[:n], nil
}

// attackSessionKey is the hostile tool's side: search the session, user
// and user-session keyrings for the user key name and read its payload
// (session-key); then, as the positive control, add mark as a key of its
// own to its session keyring and read that back (session-key-control).
func attackSessionKey(name, mark string) []string {
	var found []byte
	var errs []string
	for _, ring := range []int{unix.KEY_SPEC_SESSION_KEYRING, unix.KEY_SPEC_USER_KEYRING, unix.KEY_SPEC_USER_SESSION_KEYRING} {
		id, err := unix.KeyctlSearch(ring, "user", name, 0)
		if err == nil {
			var data []byte
			if data, err = readKey(id); err == nil {
				found = append(found, data...)
				found = append(found, '\n')
				continue
			}
		}
		errs = append(errs, err.Error())
	}
	var out []string
	if len(found) > 0 {
		out = append(out, attackLine("session-key", hits(found), nil))
	} else {
		out = append(out, attackLine("session-key", nil, errors.New(dedupe(errs)[0])))
	}
	id, err := unix.AddKey("user", name+"-own", []byte(mark), unix.KEY_SPEC_SESSION_KEYRING)
	var data []byte
	if err == nil {
		data, err = readKey(id)
		removeSessionKey(id)
	}
	return append(out, attackLine("session-key-control", data, err))
}
