package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
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
