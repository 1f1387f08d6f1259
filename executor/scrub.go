package executor

import (
	"maps"
	"sync"

	"github.com/hushcli/hush/executor/redact"
	"github.com/hushcli/hush/tools"
)

// scrubCache keeps the redactor and the secret set of the last turn and
// hands them out again while the vault's contents stay the same. Building
// a redactor for 100 secrets (their base64 and URL forms, a radix tree and
// two bitmaps) took about a millisecond and most of a turn's allocations,
// which made a tool call through the agent twice as slow as starting the
// process; comparing 100 names and values takes microseconds.
//
// The comparison is of every name and value, so a secret added, removed
// or changed mid-session is scrubbed from the very next turn. A source
// with a version (Agent.SecretsVersion) spares even that: while the
// version is the one the cache was filled at, the vault is not read.
type scrubCache struct {
	mu      sync.Mutex
	all     map[string]string // a copy: the caller may reuse its map
	red     *redact.Redactor
	secrets *tools.SecretSet

	version   uint64 // the source's version of all, when versioned
	versioned bool
}

// at returns the cached redactor and secret set if they were built from
// the source at version.
func (c *scrubCache) at(version uint64) (*redact.Redactor, *tools.SecretSet, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.red == nil || !c.versioned || c.version != version {
		return nil, nil, false
	}
	return c.red, c.secrets, true
}

// get returns the redactor and secret set for all, building them only when
// all differs from the last call's.
// all was read at version, if versioned.
func (c *scrubCache) get(all map[string]string, version uint64, versioned bool) (*redact.Redactor, *tools.SecretSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version, c.versioned = version, versioned
	if c.red == nil || !maps.Equal(c.all, all) {
		c.all = maps.Clone(all)
		c.red = newRedactor(all)
		c.secrets = tools.NewSecretSet(all)
	}
	return c.red, c.secrets
}
