package selftest

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/hushcli/hush/tools/sandbox"
	"golang.org/x/sys/unix"
)

// The rename row: an editor saves .env by writing .env.tmp and renaming it
// over .env (vim, VS Code, JetBrains), which detaches a bind mount hiding
// the old file in every namespace. An ungranted background process rereads
// .env every 100 ms (raw bytes, cat) from the start of the attack turn;
// meanwhile the audit, outside, saves a new .env with a canary by rename
// twenty times. The control is a file of the project saved the same way
// with the marker, which the same loop must read.

// AtkDotEnvRename is the rename row.
const AtkDotEnvRename = "dotenv: .env replaced by rename under a running background process"

// aDotEnvSaved is the canary of the .env the audit saves by rename.
const aDotEnvSaved = ".env saved by rename"

// Files of the rename row, in the project.
const (
	fRenameReady   = ".audit-rename-ready"
	fRenameStop    = ".audit-rename-stop"
	fRenameReport  = ".audit-rename-report"
	fRenameDone    = ".audit-rename-done"
	fRenameControl = "notes-saved.txt"
	renameSaves    = 20
)

// renameWatcher is the background process's command.
func renameWatcher() string {
	return atkShellLib + tag("attack-rename") + `d=; c=; n=0; while [ ! -e ` + fRenameStop + ` ] && [ $n -lt 1200 ]; do ` +
		`d="$d
$(cat .env 2>/dev/null | hits)"; c="$c
$(cat ` + fRenameControl + ` 2>/dev/null | hits)"; n=$((n+1)); [ $n = 2 ] && touch ` + fRenameReady + `; sleep 0.1; done; ` +
		`{ printf %s "$d" | grep . | sort -u | r rename-dotenv; printf %s "$c" | grep . | sort -u | r rename-control; } > ` + fRenameReport +
		`; touch ` + fRenameDone
}

// saveByRename is the editor's save: path.tmp written (given to cred's
// user), then renamed over path.
func saveByRename(path, content string, cred *syscall.Credential) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(tmp, int(cred.Uid), int(cred.Gid)); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return os.Rename(tmp, path)
}

// renameSavesUnder waits for the watcher, then saves .env and the control
// by rename renameSaves times, 100 ms apart, and tells the watcher to
// stop. It returns how many saves it made; it gives up when stop closes.
func renameSavesUnder(w *attackWorld, cred *syscall.Credential, stop <-chan struct{}) int {
	for {
		if _, err := os.Stat(filepath.Join(w.project, fRenameReady)); err == nil {
			break
		}
		select {
		case <-stop:
			return 0
		case <-time.After(20 * time.Millisecond):
		}
	}
	n := 0
	for i := 0; i < renameSaves; i++ {
		err := saveByRename(filepath.Join(w.project, ".env"), "AUDIT_DOTENV_SAVED="+w.c[aDotEnvSaved]+"\n", cred)
		if err == nil {
			err = saveByRename(filepath.Join(w.project, fRenameControl), "AUDIT_NOTE="+w.mark+" "+strconv.Itoa(i)+"\n", cred)
		}
		if err == nil {
			n++
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = os.WriteFile(filepath.Join(w.project, fRenameStop), nil, 0o644)
	return n
}

// renameCell evaluates the rename row.
func (r *attackResult) renameCell() Cell {
	if r.renameSaves < renameSaves {
		return failed("the audit saved .env by rename " + strconv.Itoa(r.renameSaves) + " of " + strconv.Itoa(renameSaves) +
			" times under the background process, so finding nothing proves nothing")
	}
	cell := r.readAttack([]string{"rename-dotenv"}, []string{"rename-control"}, identity)
	if cell.Status == "LEAK" && !r.noSandbox {
		if why := fuseDeniedTo(r.cred); why != "" {
			cell.Detail += " (the .env layer needs a FUSE device this hush may open: " + why + ")"
		}
	}
	return cell
}

// fuseDeniedTo says why cred's user (nil: this process) may not open the
// FUSE device, or "".
func fuseDeniedTo(cred *syscall.Credential) string {
	if cred == nil {
		if err := sandbox.FuseStatus(); err != nil {
			return err.Error()
		}
		return ""
	}
	var st unix.Stat_t
	if err := unix.Stat(sandbox.FuseDevice, &st); err != nil {
		return sandbox.FuseDevice + ": " + err.Error()
	}
	bits := st.Mode & 0o7
	switch {
	case st.Uid == cred.Uid:
		bits = st.Mode >> 6 & 0o7
	case st.Gid == cred.Gid:
		bits = st.Mode >> 3 & 0o7
	}
	if bits&0o6 != 0o6 {
		return sandbox.FuseDevice + " is mode " + strconv.FormatUint(uint64(st.Mode&0o777), 8) + ", which uid " + strconv.FormatUint(uint64(cred.Uid), 10) + " may not open"
	}
	return ""
}
