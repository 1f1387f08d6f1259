package selftest

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/crypto/ssh/agent"
)

// The ssh agent row (AtkSSHAgent): the audit serves an ssh agent of its
// own — golang.org/x/crypto's, holding one fresh ed25519 key whose comment
// is a canary — at OpenSSH's default place, a new /tmp/ssh-XXXXXXXXXX
// directory with agent.<pid> in it, never the user's agent. The hostile
// tool is told nothing: it scans /tmp for agent sockets, as a tool looking
// for the user's keys would, and asks each for its identities. The
// positive control is the same question to the same kind of agent at a
// path nothing hides, whose key's comment is the marker.

// plantedAgent is one agent the audit serves.
type plantedAgent struct {
	l    net.Listener
	dir  string // the /tmp/ssh-* directory made for it, or ""
	Path string
}

// serveAgent serves an ssh agent holding one key commented comment on a
// unix socket at path, or, when path is "", at a new
// /tmp/ssh-XXXXXXXXXX/agent.<pid>.
func serveAgent(path, comment string) (*plantedAgent, error) {
	a := &plantedAgent{Path: path}
	if path == "" {
		dir, err := os.MkdirTemp("/tmp", "ssh-")
		if err != nil {
			return nil, fmt.Errorf("audit: make an ssh agent's directory in /tmp: %w", err)
		}
		a.dir = dir
		a.Path = filepath.Join(dir, fmt.Sprintf("agent.%d", os.Getpid()))
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		a.Close()
		return nil, err
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: key, Comment: comment}); err != nil {
		a.Close()
		return nil, err
	}
	a.l, err = net.Listen("unix", a.Path)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("audit: listen on %s: %w", a.Path, err)
	}
	_ = os.Chmod(a.Path, 0o666)
	go func() {
		for {
			c, err := a.l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_ = agent.ServeAgent(keyring, c)
			}()
		}
	}()
	return a, nil
}

// Chown gives the agent's directory and socket to uid:gid, as the user's
// own agent belongs to them.
func (a *plantedAgent) Chown(uid, gid int) error {
	for _, p := range []string{a.dir, a.Path} {
		if p != "" {
			if err := os.Lchown(p, uid, gid); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close stops the agent and removes what it made.
func (a *plantedAgent) Close() {
	if a.l != nil {
		a.l.Close()
	}
	if a.dir != "" {
		os.RemoveAll(a.dir)
	}
}

// agentComments asks the ssh agent at path for its identities and returns
// their comments, one a line.
func agentComments(path string) ([]byte, error) {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	keys, err := agent.NewClient(c).List()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		out = append(out, k.Comment)
	}
	return []byte(strings.Join(out, "\n")), nil
}

// scanAgents finds every ssh agent socket at OpenSSH's default place,
// /tmp/ssh-*/agent.*, and keeps the canaries and markers in the comments
// of their keys. An agent that does not answer is passed over: what
// counts is what answered.
func scanAgents() []byte {
	socks, _ := filepath.Glob("/tmp/ssh-*/agent.*")
	sort.Strings(socks)
	var all []byte
	for _, p := range socks {
		if got, err := agentComments(p); err == nil {
			all = append(append(all, got...), '\n')
		}
	}
	return hits(all)
}
