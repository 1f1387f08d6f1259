package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The .env layer: a FUSE file system served by hush over the project, in
// which the .env family (ProjectMaskPatterns) does not exist.
//
// Why not the empty file bound over each .env, as before: an editor saves
// by writing .env.tmp and renaming it over .env (vim, VS Code, JetBrains),
// and the kernel detaches every mount on the replaced file, in every
// namespace — a running background process or MCP server then reads the
// new .env. A mask cannot be re-made from outside without a race (and an
// unprivileged hush cannot enter the child's mount namespace). A name that
// does not exist in a directory cannot be renamed over: here every
// lookup, listing, create, link and rename of such a name in the layer
// fails, whatever the host does to the file, for as long as the tool runs.
//
// The child mounts the layer itself (hush_sb_envfs_mount in envfs.c), on
// /dev/fuse opened here before the spawn, and tells hush by an eventfd;
// hush serves it on a goroutine until the namespace's end unmounts it (the
// kernel then ends the connection, and Serve returns). Only the project's
// directories that lead to a .env-family name go through the layer: every
// other subdirectory of theirs is bound through on top of it (planWorld),
// so builds, git and a dev server's inotify work on the host's files as
// before; a bound subdirectory that the host replaces falls back to the
// layer's view of it, which still hides the names.

// FuseDevice is the device hush opens for the .env layer. Where only root
// may open /dev/fuse (a container that made it 0600), an unprivileged hush
// keeps the bind masks (`hush audit` shows the dotenv-rename row failed);
// tests point it at a node of their own.
var FuseDevice = "/dev/fuse"

// envHidden reports whether name is of the .env family.
func envHidden(name string) bool { return matchBase(ProjectMaskPatterns(), name) }

// envNode is a loopback node of the host's project in which the .env
// family does not exist.
type envNode struct {
	*fs.LoopbackNode
}

// newEnvRoot is the layer's root over the host directory dir.
func newEnvRoot(dir string) (*envNode, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return nil, err
	}
	root := &fs.LoopbackRoot{Path: dir, Dev: uint64(st.Dev)}
	n := &envNode{&fs.LoopbackNode{RootData: root}}
	root.RootNode = n
	return n, nil
}

var (
	_ fs.NodeWrapChilder    = (*envNode)(nil)
	_ fs.NodeLookuper       = (*envNode)(nil)
	_ fs.NodeOpendirHandler = (*envNode)(nil)
	_ fs.NodeReaddirer      = (*envNode)(nil)
	_ fs.NodeCreater        = (*envNode)(nil)
	_ fs.NodeMkdirer        = (*envNode)(nil)
	_ fs.NodeMknoder        = (*envNode)(nil)
	_ fs.NodeSymlinker      = (*envNode)(nil)
	_ fs.NodeLinker         = (*envNode)(nil)
	_ fs.NodeRenamer        = (*envNode)(nil)
	_ fs.NodeUnlinker       = (*envNode)(nil)
	_ fs.NodeRmdirer        = (*envNode)(nil)
	_ fs.FileReaddirenter   = (*envDir)(nil)
	_ fs.FileSeekdirer      = (*envDir)(nil)
	_ fs.FileReleasedirer   = (*envDir)(nil)
	_ fs.FileFsyncdirer     = (*envDir)(nil)
)

// WrapChild makes every node below the root an envNode too.
func (n *envNode) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	if l, ok := ops.(*fs.LoopbackNode); ok {
		return &envNode{l}
	}
	return ops
}

func (n *envNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if envHidden(name) {
		return nil, syscall.ENOENT
	}
	return n.LoopbackNode.Lookup(ctx, name, out)
}

// A .env-family name cannot be made in the layer: it would be a file the
// user's own tools read (hush among them) that this tool wrote.

func (n *envNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if envHidden(name) {
		return nil, nil, 0, syscall.EACCES
	}
	return n.LoopbackNode.Create(ctx, name, flags, mode, out)
}

func (n *envNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if envHidden(name) {
		return nil, syscall.EACCES
	}
	return n.LoopbackNode.Mkdir(ctx, name, mode, out)
}

func (n *envNode) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if envHidden(name) {
		return nil, syscall.EACCES
	}
	return n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
}

func (n *envNode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if envHidden(name) {
		return nil, syscall.EACCES
	}
	return n.LoopbackNode.Symlink(ctx, target, name, out)
}

func (n *envNode) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if envHidden(name) {
		return nil, syscall.EACCES
	}
	if e, ok := target.(*envNode); ok {
		target = e.LoopbackNode
	}
	return n.LoopbackNode.Link(ctx, target, name, out)
}

func (n *envNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if envHidden(name) {
		return syscall.ENOENT
	}
	if envHidden(newName) {
		return syscall.EACCES
	}
	if e, ok := newParent.(*envNode); ok {
		newParent = e.LoopbackNode
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

func (n *envNode) Unlink(ctx context.Context, name string) syscall.Errno {
	if envHidden(name) {
		return syscall.ENOENT
	}
	return n.LoopbackNode.Unlink(ctx, name)
}

func (n *envNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	if envHidden(name) {
		return syscall.ENOENT
	}
	return n.LoopbackNode.Rmdir(ctx, name)
}

func (n *envNode) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, ff, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return &envDir{fh}, ff, 0
}

func (n *envNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	ds, errno := n.LoopbackNode.Readdir(ctx)
	if errno != 0 {
		return nil, errno
	}
	defer ds.Close()
	var list []fuse.DirEntry
	for ds.HasNext() {
		e, errno := ds.Next()
		if errno != 0 {
			return nil, errno
		}
		if !envHidden(e.Name) {
			list = append(list, e)
		}
	}
	return fs.NewListDirStream(list), 0
}

// envDir is a directory handle whose listing leaves the .env family out.
type envDir struct{ fh fs.FileHandle }

func (d *envDir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	r, ok := d.fh.(fs.FileReaddirenter)
	if !ok {
		return nil, syscall.ENOTSUP
	}
	for {
		e, errno := r.Readdirent(ctx)
		if errno != 0 || e == nil || !envHidden(e.Name) {
			return e, errno
		}
	}
}

func (d *envDir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if s, ok := d.fh.(fs.FileSeekdirer); ok {
		return s.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

func (d *envDir) Releasedir(ctx context.Context, flags uint32) {
	if r, ok := d.fh.(fs.FileReleasedirer); ok {
		r.Releasedir(ctx, flags)
	}
}

func (d *envDir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if s, ok := d.fh.(fs.FileFsyncdirer); ok {
		return s.Fsyncdir(ctx, flags)
	}
	return 0
}

// envTimeout is how long the kernel keeps the layer's names and
// attributes: a change the host makes shows within it. A name that does
// not exist is never kept, so a file the host makes shows at once.
const envTimeout = time.Second

// envOptions are the layer's go-fuse options.
func envOptions() *fs.Options {
	t, neg := envTimeout, time.Duration(0)
	return &fs.Options{
		EntryTimeout:    &t,
		AttrTimeout:     &t,
		NegativeTimeout: &neg,
		MountOptions: fuse.MountOptions{
			// The kernel checks permissions from the attributes, as on
			// the host's own file system (hush's own access does not
			// leak to a tool run as another user).
			Options:       []string{"default_permissions"},
			FsName:        "hush-envfs",
			Name:          "hush",
			MaxBackground: 32,
		},
	}
}

// errNoFuse: this machine gives hush no FUSE device (none, or one only
// root may open); the .env family is hidden by bind masks instead.
var errNoFuse = errors.New("no FUSE device hush may open")

// fuseUsable reports once whether hush can open FuseDevice.
var fuseUsable = sync.OnceValue(func() error {
	fd, err := unix.Open(FuseDevice, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", errNoFuse, FuseDevice, err)
	}
	unix.Close(fd)
	return nil
})

// FuseStatus says whether the .env layer is available to this hush: nil,
// or why not, in one sentence.
func FuseStatus() error { return fuseUsable() }
