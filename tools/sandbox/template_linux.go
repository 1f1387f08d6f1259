//go:build linux && cgo

package sandbox

/*
#include <stdlib.h>
#include "sandbox.h"
*/
import "C"

import (
	"bytes"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// World templates: a bash call's world is the same root, call after call
// (the view is computed once per session; the project's .env family
// rarely changes), and building it — a tmpfs, a bind per view entry, the
// host's root pivoted away and detached, which waits for an RCU grace
// period — was most of what the sandbox added to a call. So the root is
// built once per plan, in namespaces hush keeps by descriptor
// (hush_sb_world_template in sandbox.c), and each call starts in a copy of
// it (hush_sb_spawn_via): its own user namespace (a child of the
// template's), a copy of the mounts (every one locked, as the host's are in
// a world built per call), its own PID namespace and /proc, private home
// (and /tmp, when the session has none: hush_sb_fresh_tmpfs), devpts,
// /dev/shm, keyring and network namespace. What calls of a session share is what
// they shared before: the project, the session's /tmp, the build caches.
// The root's tmpfs and /dev are read-only, so no call leaves a /bin or a
// /dev/stdout of its own for the next.
//
// A template is used while every host path it binds or hides is still the
// one it bound or hid (device and inode, or absent, checked at each call):
// a cache or a project directory deleted and made again on the host, a
// .env saved by rename or a hidden path made since gets a new template.
//
// The templates are made, used and closed under spawnLock only.
var worldTemplates struct {
	m    map[string]*worldTemplate // by the plan's records
	off  bool                      // the kernel refused one: calls build their own world
	proc *os.File                  // hush's /proc, for a child whose /proc is a template's
}

type worldTemplate struct {
	user, mnt int
	sources   []sourceStamp
}

// sourceStamp is a host path a template binds, as it was when bound.
type sourceStamp struct {
	path     string
	dev, ino uint64
	absent   bool
}

func stampOf(path string) sourceStamp {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return sourceStamp{path: path, absent: true}
	}
	return sourceStamp{path: path, dev: uint64(st.Dev), ino: st.Ino}
}

// maxWorldTemplates bounds the templates kept (each holds its namespaces'
// mounts): one per plan in use, a session rarely has more than two.
const maxWorldTemplates = 4

// worldTemplateFor returns the template for a world plan (with no .env
// layer), made now if there is none or its sources changed, or nil where
// the kernel refused one. spawnLock is held.
func worldTemplateFor(plan []byte) *worldTemplate {
	if worldTemplates.off {
		return nil
	}
	key, sources := planRecords(plan)
	if key == "" {
		return nil
	}
	if t := worldTemplates.m[key]; t != nil {
		fresh := true
		for _, s := range t.sources {
			if stampOf(s.path) != s {
				fresh = false
				break
			}
		}
		if fresh {
			return t
		}
		t.close()
		delete(worldTemplates.m, key)
	}
	if worldTemplates.proc == nil {
		f, err := os.OpenFile("/proc", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			worldTemplates.off = true
			return nil
		}
		worldTemplates.proc = f
	}
	t := &worldTemplate{user: -1, mnt: -1}
	for _, s := range sources {
		t.sources = append(t.sources, stampOf(s))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	defer r.Close()
	cplan := C.CBytes(plan)
	var user, mnt C.int
	rc := C.hush_sb_world_template((*C.char)(cplan), C.size_t(len(plan)), C.int(w.Fd()), C.int(worldTemplates.proc.Fd()), &user, &mnt)
	C.free(unsafe.Pointer(cplan))
	w.Close()
	if rc != 0 {
		// Refused here, refused for every call: each builds its own world,
		// which says why if it fails too.
		worldTemplates.off = true
		return nil
	}
	t.user, t.mnt = int(user), int(mnt)
	if worldTemplates.m == nil {
		worldTemplates.m = map[string]*worldTemplate{}
	}
	if len(worldTemplates.m) >= maxWorldTemplates {
		for k, o := range worldTemplates.m {
			o.close()
			delete(worldTemplates.m, k)
		}
	}
	worldTemplates.m[key] = t
	return t
}

func (t *worldTemplate) close() {
	syscall.Close(t.user)
	syscall.Close(t.mnt)
}

// planRecords is a world plan's records (the template's key: the flags
// word is each call's own) and the host paths they bind or hide; "" for a
// plan that is no world's or holds the .env layer, which is each call's
// own.
func planRecords(plan []byte) (key string, sources []string) {
	parts := bytes.SplitN(plan, []byte{0}, 3)
	if len(parts) != 3 || !bytes.Contains(parts[1], []byte("W")) {
		return "", nil
	}
	recs := parts[2]
	for r := recs; len(r) > 0 && r[0] != 0; {
		kind := r[0]
		f := bytes.SplitN(r[1:], []byte{0}, 3)
		if len(f) < 2 {
			return "", nil
		}
		switch kind {
		case 'e':
			return "", nil
		case 'r', 'w':
			sources = append(sources, string(f[1]))
		case 'h':
			// A hidden path replaced by rename (an editor's save of a
			// .env) is a new file the template's mask does not cover; one
			// made since is not covered at all.
			sources = append(sources, string(f[0]))
		}
		if len(f) < 3 {
			break
		}
		r = f[2]
	}
	return string(recs), sources
}
