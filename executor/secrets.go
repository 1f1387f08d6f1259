package executor

import (
	"maps"
	"sync"

	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/tools"
)

// Snapshot is one version of the vault's secrets as everything that keeps
// them out of output sees it: the redactor that scrubs tool output, logs
// and messages, and the secret set the env builder and the spawn layer
// classify with. Both are read-only and safe to share.
type Snapshot struct {
	Redactor *redact.Redactor
	Secrets  *tools.SecretSet
}

// SecretCache is the one place hush builds a redactor from the vault's
// values. A session makes one and shares it: the agent takes a snapshot at
// the start of each turn, background processes when they start writing a
// log, MCP servers when they start. So a secret stored mid-session is
// scrubbed by all of them from the next turn on, and none of them scrubs
// with an older vault than the others.
//
// Building a redactor for 100 secrets (their base64 and URL forms, a radix
// tree and two bitmaps) took about a millisecond and most of a turn's
// allocations, which made a tool call through the agent twice as slow as
// starting the process; comparing 100 names and values takes
// microseconds. So Current rebuilds only when the vault's contents differ
// from the last snapshot's, and with a version source it does not even
// read the vault while the version is the one the snapshot was made at.
//
// A nil *SecretCache is a vault with no secrets.
type SecretCache struct {
	all     func() (map[string]string, error)
	version func() (uint64, error)

	mu        sync.Mutex
	last      map[string]string // a copy: the source may reuse its map
	snap      Snapshot
	at        uint64 // the source's version of last, when versioned
	versioned bool
}

// NewSecretCache caches snapshots of all. version, if not nil, returns a
// number that changes whenever all's answer may have changed
// (vault.Layered.Version); when it fails, all is read as without it.
func NewSecretCache(all func() (map[string]string, error), version func() (uint64, error)) *SecretCache {
	return &SecretCache{all: all, version: version}
}

// Current returns the snapshot of the vault as it is now. Its error is the
// source's, unwrapped.
func (c *SecretCache) Current() (Snapshot, error) {
	if c == nil || c.all == nil {
		return Snapshot{Redactor: redact.New(nil), Secrets: tools.NewSecretSet(nil)}, nil
	}
	var version uint64
	versioned := false
	if c.version != nil {
		// Asked before all: a change between the two is then seen as a new
		// version next time, never hidden behind this one.
		if v, err := c.version(); err == nil {
			version, versioned = v, true
			c.mu.Lock()
			if c.snap.Redactor != nil && c.versioned && c.at == version {
				s := c.snap
				c.mu.Unlock()
				return s, nil
			}
			c.mu.Unlock()
		}
	}
	all, err := c.all()
	if err != nil {
		return Snapshot{}, err // the caller says what it was reading for
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.versioned = version, versioned
	if c.snap.Redactor == nil || !maps.Equal(c.last, all) {
		c.last = maps.Clone(all)
		c.snap = Snapshot{Redactor: redact.FromMap(all), Secrets: tools.NewSecretSet(all)}
	}
	return c.snap, nil
}
