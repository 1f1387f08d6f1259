package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
	_ fs.NodeGetattrer      = (*envNode)(nil)
	_ fs.NodeSetattrer      = (*envNode)(nil)
	_ fs.NodeStatxer        = (*envNode)(nil)
	_ fs.NodeReadlinker     = (*envNode)(nil)
	_ fs.NodeGetxattrer     = (*envNode)(nil)
	_ fs.NodeSetxattrer     = (*envNode)(nil)
	_ fs.NodeRemovexattrer  = (*envNode)(nil)
	_ fs.NodeListxattrer    = (*envNode)(nil)
	_ fs.NodeTmpfiler       = (*envNode)(nil)
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

// Every host operation below resolves the node's path beneath the
// project with no symbolic link in any component (openat2 with
// RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS), then acts on the final name
// with an *at call that does not follow it either. go-fuse's loopback
// resolves whole paths (chmod, truncate, create, unlink, xattrs follow
// links), and the host's tree can change under the layer's view of it:
// another call of the same session, with a layer of its own, can replace
// a directory this layer knows by a link to ~/.ssh or /etc, and a
// path-based create, truncate or unlink here would then land there, with
// hush's rights.

// open opens the node's host path with flags (O_CLOEXEC added).
func (n *envNode) open(flags int) (int, syscall.Errno) {
	root, err := unix.Open(n.RootData.Path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fs.ToErrno(err)
	}
	defer unix.Close(root)
	rel := n.Path(n.RootData.RootNode.EmbeddedInode())
	if rel == "" {
		rel = "."
	}
	fd, err := unix.Openat2(root, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return -1, fs.ToErrno(err)
	}
	return fd, 0
}

// dir opens the node as a directory to act in (O_PATH).
func (n *envNode) dir() (int, syscall.Errno) { return n.open(unix.O_PATH | unix.O_DIRECTORY) }

// child makes the node for name, which st describes, below n.
func (n *envNode) child(ctx context.Context, st *unix.Stat_t, out *fuse.EntryOut) *fs.Inode {
	var sst syscall.Stat_t
	sst.Dev, sst.Ino, sst.Nlink, sst.Mode, sst.Uid, sst.Gid, sst.Rdev = st.Dev, st.Ino, st.Nlink, st.Mode, st.Uid, st.Gid, st.Rdev
	sst.Size, sst.Blksize, sst.Blocks = st.Size, st.Blksize, st.Blocks
	sst.Atim = syscall.Timespec(st.Atim)
	sst.Mtim = syscall.Timespec(st.Mtim)
	sst.Ctim = syscall.Timespec(st.Ctim)
	out.Attr.FromStat(&sst)
	// go-fuse's loopback inode numbers: the host's, with the device mixed in.
	swapped := uint64(st.Dev)<<32 | uint64(st.Dev)>>32
	rootDev := n.RootData.Dev<<32 | n.RootData.Dev>>32
	return n.NewInode(ctx, &fs.LoopbackNode{RootData: n.RootData}, fs.StableAttr{Mode: st.Mode, Gen: 1, Ino: swapped ^ rootDev ^ st.Ino})
}

// owned gives what a root hush made to the caller, as go-fuse does.
func owned(ctx context.Context, dfd int, name string) {
	if os.Getuid() != 0 {
		return
	}
	if c, ok := fuse.FromContext(ctx); ok {
		_ = unix.Fchownat(dfd, name, int(c.Uid), int(c.Gid), unix.AT_SYMLINK_NOFOLLOW)
	}
}

// made finishes an operation that made name in dfd: its owner and node.
func (n *envNode) made(ctx context.Context, dfd int, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	owned(ctx, dfd, name)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, fs.ToErrno(err)
	}
	return n.child(ctx, &st, out), 0
}

func (n *envNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if envHidden(name) {
		return nil, syscall.ENOENT
	}
	dfd, errno := n.dir()
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, fs.ToErrno(err)
	}
	return n.child(ctx, &st, out), 0
}

func (n *envNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if g, ok := f.(fs.FileGetattrer); ok && g != nil {
		return g.Getattr(ctx, out)
	}
	fd, errno := n.open(unix.O_PATH | unix.O_NOFOLLOW)
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStat(&st)
	return 0
}

func (n *envNode) Statx(ctx context.Context, f fs.FileHandle, flags, mask uint32, out *fuse.StatxOut) syscall.Errno {
	if g, ok := f.(fs.FileStatxer); ok && g != nil {
		return g.Statx(ctx, flags, mask, out)
	}
	fd, errno := n.open(unix.O_PATH | unix.O_NOFOLLOW)
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	var st unix.Statx_t
	if err := unix.Statx(fd, "", int(flags)|unix.AT_EMPTY_PATH, int(mask), &st); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStatx(&st)
	return 0
}

func (n *envNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if s, ok := f.(fs.FileSetattrer); ok && s != nil {
		return n.LoopbackNode.Setattr(ctx, f, in, out) // by the open file, not a path
	}
	fd, errno := n.open(unix.O_PATH | unix.O_NOFOLLOW)
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return fs.ToErrno(err)
	}
	// The open descriptor by its /proc name: the very inode, no path
	// resolved again.
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	link := st.Mode&syscall.S_IFMT == syscall.S_IFLNK
	if m, ok := in.GetMode(); ok {
		if link {
			return syscall.EOPNOTSUPP
		}
		if err := unix.Fchmodat(unix.AT_FDCWD, self, m, 0); err != nil {
			return fs.ToErrno(err)
		}
	}
	uid, uok := in.GetUID()
	gid, gok := in.GetGID()
	if uok || gok {
		su, sg := -1, -1
		if uok {
			su = int(uid)
		}
		if gok {
			sg = int(gid)
		}
		if err := unix.Fchownat(fd, "", su, sg, unix.AT_EMPTY_PATH); err != nil {
			return fs.ToErrno(err)
		}
	}
	if sz, ok := in.GetSize(); ok {
		if link {
			return syscall.EINVAL
		}
		w, err := unix.Open(self, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return fs.ToErrno(err)
		}
		err = unix.Ftruncate(w, int64(sz))
		unix.Close(w)
		if err != nil {
			return fs.ToErrno(err)
		}
	}
	mtime, mok := in.GetMTime()
	atime, aok := in.GetATime()
	if mok || aok {
		if link {
			return syscall.EOPNOTSUPP
		}
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		if aok {
			ts[0] = unix.NsecToTimespec(atime.UnixNano())
		}
		if mok {
			ts[1] = unix.NsecToTimespec(mtime.UnixNano())
		}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, self, ts, 0); err != nil {
			return fs.ToErrno(err)
		}
	}
	if err := syscall.Fstat(fd, &st); err != nil {
		return fs.ToErrno(err)
	}
	out.FromStat(&st)
	return 0
}

// A .env-family name cannot be made in the layer: it would be a file the
// user's own tools read (hush among them) that this tool wrote.

func (n *envNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if envHidden(name) {
		return nil, nil, 0, syscall.EACCES
	}
	dfd, errno := n.dir()
	if errno != 0 {
		return nil, nil, 0, errno
	}
	defer unix.Close(dfd)
	fl := int(flags)&^unix.O_APPEND | unix.O_CREAT | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dfd, name, fl, mode)
	if err != nil {
		return nil, nil, 0, fs.ToErrno(err)
	}
	ch, errno := n.made(ctx, dfd, name, out)
	if errno != 0 {
		unix.Close(fd)
		return nil, nil, 0, errno
	}
	return ch, fs.NewLoopbackFile(fd), 0, 0
}

func (n *envNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.makeAt(ctx, name, out, func(dfd int) error { return unix.Mkdirat(dfd, name, mode) })
}

func (n *envNode) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.makeAt(ctx, name, out, func(dfd int) error { return unix.Mknodat(dfd, name, mode, int(rdev)) })
}

func (n *envNode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return n.makeAt(ctx, name, out, func(dfd int) error { return unix.Symlinkat(target, dfd, name) })
}

// makeAt makes name in n's directory with mk, given the directory's
// descriptor, and returns its node; a .env-family name is refused.
func (n *envNode) makeAt(ctx context.Context, name string, out *fuse.EntryOut, mk func(dfd int) error) (*fs.Inode, syscall.Errno) {
	if envHidden(name) {
		return nil, syscall.EACCES
	}
	dfd, errno := n.dir()
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(dfd)
	if err := mk(dfd); err != nil {
		return nil, fs.ToErrno(err)
	}
	return n.made(ctx, dfd, name, out)
}

// parentOf opens the directory holding node e and returns its name there.
func parentOf(e *envNode) (int, string, syscall.Errno) {
	parentName, parent := e.Parent()
	if parent == nil {
		return -1, "", syscall.EXDEV
	}
	p, ok := parent.Operations().(*envNode)
	if !ok {
		return -1, "", syscall.EXDEV
	}
	dfd, errno := p.dir()
	return dfd, parentName, errno
}

func (n *envNode) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if envHidden(name) {
		return nil, syscall.EACCES
	}
	t, ok := target.(*envNode)
	if !ok {
		return nil, syscall.EXDEV
	}
	tdfd, tname, errno := parentOf(t)
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(tdfd)
	dfd, errno := n.dir()
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(dfd)
	if err := unix.Linkat(tdfd, tname, dfd, name, 0); err != nil {
		return nil, fs.ToErrno(err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, fs.ToErrno(err)
	}
	return n.child(ctx, &st, out), 0
}

func (n *envNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if envHidden(name) {
		return syscall.ENOENT
	}
	if envHidden(newName) {
		return syscall.EACCES
	}
	np, ok := newParent.(*envNode)
	if !ok {
		return syscall.EXDEV
	}
	dfd, errno := n.dir()
	if errno != 0 {
		return errno
	}
	defer unix.Close(dfd)
	ndfd, errno := np.dir()
	if errno != 0 {
		return errno
	}
	defer unix.Close(ndfd)
	return fs.ToErrno(unix.Renameat2(dfd, name, ndfd, newName, uint(flags)))
}

func (n *envNode) Unlink(ctx context.Context, name string) syscall.Errno {
	if envHidden(name) {
		return syscall.ENOENT
	}
	dfd, errno := n.dir()
	if errno != 0 {
		return errno
	}
	defer unix.Close(dfd)
	return fs.ToErrno(unix.Unlinkat(dfd, name, 0))
}

func (n *envNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	if envHidden(name) {
		return syscall.ENOENT
	}
	dfd, errno := n.dir()
	if errno != 0 {
		return errno
	}
	defer unix.Close(dfd)
	return fs.ToErrno(unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR))
}

func (n *envNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	fd, errno := n.open(unix.O_PATH | unix.O_NOFOLLOW)
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(fd)
	for l := 256; ; l *= 2 {
		buf := make([]byte, l)
		sz, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return nil, fs.ToErrno(err)
		}
		if sz < len(buf) {
			return buf[:sz], 0
		}
	}
}

// No extended attributes, and no unnamed temporary files, in the layer:
// go-fuse's are by path (a security.capability set through a link would
// be hush's doing).

func (n *envNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENODATA
}

func (n *envNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return syscall.EOPNOTSUPP
}

func (n *envNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return syscall.ENODATA
}

func (n *envNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return 0, 0
}

func (n *envNode) Tmpfile(ctx context.Context, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

func (n *envNode) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	ds, errno := n.dirStream()
	if errno != 0 {
		return nil, 0, errno
	}
	return &envDir{ds}, 0, 0
}

// dirStream lists the node's host directory, opened beneath the project.
func (n *envNode) dirStream() (fs.DirStream, syscall.Errno) {
	fd, errno := n.open(unix.O_RDONLY | unix.O_DIRECTORY)
	if errno != 0 {
		return nil, errno
	}
	ds, errno := fs.NewLoopbackDirStreamFd(fd)
	if errno != 0 {
		unix.Close(fd)
	}
	return ds, errno
}

func (n *envNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	ds, errno := n.dirStream()
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
			Options: []string{"default_permissions"},
			FsName:  "hush-envfs",
			// go-fuse logs to the standard logger, hush's terminal: a
			// request cut short by the call's end is no news.
			Logger:        log.New(io.Discard, "", 0),
			Name:          "hush",
			MaxBackground: 32,
			// Smaller than go-fuse's 128 KiB: every call's server
			// allocates and clears its read buffers anew.
			MaxWrite: 64 << 10,
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

// envPlan is the .env layer of one constructed world: the project (its
// path inside and its host path), the directories of it that go through
// the layer — the project itself and every directory on the way to one
// holding a .env-family name — and each other subdirectory of theirs (and
// each socket and FIFO in them), bound through on top of the layer.
type envPlan struct {
	root, src string
	served    []string    // the directories the layer serves, parents first
	binds     [][2]string // path inside, host source
}

// planEnvLayer plans the layer from the view's project and the mask
// walk's .env-family finds; nil when the project holds none.
func planEnvLayer(view []Entry, masks []Mask) *envPlan {
	var p envPlan
	for _, e := range view {
		if e.Mode == Hidden && len(e.Names) > 0 {
			p.root = e.Path
		}
	}
	for _, e := range view {
		if p.root != "" && e.Path == p.root && e.Mode == ReadWrite && e.Source != "" {
			p.src = e.Source
		}
	}
	if p.src == "" {
		return nil
	}
	served := map[string]bool{}
	for _, m := range masks {
		if m.Reason != ReasonDotEnv || !envHidden(filepath.Base(m.Path)) {
			continue // a link's target outside the family keeps its mask
		}
		if _, ok := below(m.Path, p.root); !ok {
			continue
		}
		for d := filepath.Dir(m.Path); within(d, p.root) && !served[d]; d = filepath.Dir(d) {
			served[d] = true
		}
	}
	if len(served) == 0 {
		return nil
	}
	dirs := make([]string, 0, len(served))
	for d := range served {
		dirs = append(dirs, d)
	}
	sort.Slice(dirs, func(i, j int) bool { return pathLess(dirs[i], dirs[j]) })
	p.served = dirs
	for _, d := range dirs {
		rel, _ := below(d, p.root)
		host := filepath.Join(p.src, rel)
		ents, err := os.ReadDir(host)
		if err != nil {
			continue // the layer serves it whole
		}
		for _, e := range ents {
			inside := filepath.Join(d, e.Name())
			// Directories, and the sockets and FIFOs the host made there:
			// through the layer one would be an inode of its own, which no
			// process outside listens on.
			through := e.IsDir() || e.Type()&(os.ModeSocket|os.ModeNamedPipe) != 0
			if !through || envHidden(e.Name()) || served[inside] {
				continue
			}
			p.binds = append(p.binds, [2]string{inside, filepath.Join(host, e.Name())})
		}
	}
	return &p
}

// envSock is where the child finds the socket to hush's server
// (hush_sb_envfs_place in envfs.c).
const envSock = "3"

// envServer is one sandboxed child's .env layer: the socket on which the
// child hands hush the FUSE device once it has mounted it (the kernel
// takes a device for a mount only from a process of the mount's user
// namespace, so the child opens it), and the goroutine that serves it.
type envServer struct {
	conn  *net.UnixConn // hush's end
	child int           // the child's end, in hush's table until the spawn returns
	once  sync.Once
	done  chan struct{} // closed when the server has stopped
}

// startEnvFS starts the goroutine that serves the layer over the host
// directory dir once the child has mounted it and sent the device. The
// child's end (childFD) must be closed once the child has its own copy
// (closeChild); stop once the child has exited.
func startEnvFS(dir string) (*envServer, error) {
	root, err := newEnvRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the .env layer over %s: %w", dir, err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the .env layer: socketpair: %w", err)
	}
	f := os.NewFile(uintptr(fds[0]), "hush-envfs")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		unix.Close(fds[1])
		return nil, fmt.Errorf("sandbox: the .env layer: %w", err)
	}
	s := &envServer{conn: c.(*net.UnixConn), child: fds[1], done: make(chan struct{})}
	go s.serve(root)
	return s, nil
}

func (s *envServer) serve(root *envNode) {
	defer close(s.done)
	buf := make([]byte, 8)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := s.conn.ReadMsgUnix(buf, oob)
	if err != nil || oobn == 0 {
		return // the child ended before it mounted the layer: nobody asks
	}
	fd := -1
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
		if fds, err := unix.ParseUnixRights(&msgs[0]); err == nil && len(fds) == 1 {
			fd = fds[0]
		}
	}
	if fd < 0 {
		return
	}
	opts := envOptions()
	srv, err := fuse.NewServer(fs.NewNodeFS(root, opts), "/dev/fd/"+strconv.Itoa(fd), &opts.MountOptions)
	if err != nil {
		// The kernel's INIT went unanswered: the child's set-up fails
		// on its first lookup below the layer.
		unix.Close(fd)
		return
	}
	// Until the mount's end: with the namespace's last reference gone,
	// the kernel ends the connection, the reads fail with ENODEV, and
	// Serve closes the device.
	srv.Serve()
}

// closeChild closes hush's copy of the child's end, once the child has
// its own (the spawn has returned).
func (s *envServer) closeChild() {
	if s.child >= 0 {
		unix.Close(s.child)
		s.child = -1
	}
}

// stop is called once the child has exited (or never ran): a layer that
// was never mounted stops at once; a mounted one when its mount goes.
func (s *envServer) stop() {
	s.closeChild()
	s.once.Do(func() { s.conn.Close() })
}

// What the .env layer gives, as `hush sandbox show` and `hush audit` say it.
const (
	envLayerOn = "the project's .env family does not exist in the tool's world (the .env layer, a FUSE file system hush serves): " +
		"an editor's save by rename does not show it to a running background process or MCP server"
	envLayerOff = "each .env is hidden by a bind mount, which an editor's save by rename detaches: " +
		"a running background process or MCP server then reads the new file"
)

// envLayerProtection is the dotenv-rename protection on this machine.
func envLayerProtection() Protection {
	if err := FuseStatus(); err != nil {
		return Protection{Name: ProtectDotEnvRename, Why: envLayerOff + " (" + err.Error() +
			"; a FUSE device the user may open, as distributions' /dev/fuse is, mode 0666, gives the layer)"}
	}
	return Protection{Name: ProtectDotEnvRename, On: true, Why: envLayerOn}
}

// RenderEnvLayer prints, for `hush sandbox show`, which directories of
// the project the .env layer serves and which are bound through, or why
// the .env files are bind masks instead.
func RenderEnvLayer(w io.Writer, sb *Config) {
	if sb == nil || sb.Policy == nil || !sb.Constructed {
		return
	}
	if !sb.EnvLayer {
		fmt.Fprintln(w, "# the .env family: a bind mask per file, for this tool's calls, which end within their timeout "+
			"(the .env layer is for background processes and MCP servers, which run on; a call under it could not remove a project subdirectory)")
		return
	}
	masks, err := sb.Masks.Masks()
	if err != nil {
		return
	}
	if err := FuseStatus(); err != nil {
		fmt.Fprintf(w, "# the .env family: bind masks, not the .env layer (%v): %s\n", err, envLayerOff)
		return
	}
	p := planEnvLayer(sb.Policy.View(), masks)
	if p == nil {
		fmt.Fprintln(w, "# the .env layer: not needed now (the project holds no .env-family file); a call after one appears gets it")
		return
	}
	fmt.Fprintf(w, "# the .env layer: %s\n", envLayerOn)
	fmt.Fprintln(w, "#   through the layer (a change made outside shows within a second; no inotify events for it):")
	for _, d := range p.served {
		fmt.Fprintf(w, "      %s\n", d)
	}
	fmt.Fprintf(w, "#   bound through on top, as on the host (%d): each other subdirectory of those, and their sockets and FIFOs\n", len(p.binds))
	for _, b := range p.binds {
		fmt.Fprintf(w, "      %s\n", b[0])
	}
}
