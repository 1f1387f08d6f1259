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
// or changed mid-session is scrubbed from the very next turn.
type scrubCache struct {
	mu      sync.Mutex
	all     map[string]string // a copy: the caller may reuse its map
	red     *redact.Redactor
	secrets *tools.SecretSet
}

// get returns the redactor and secret set for all, building them only when
// all differs from the last call's.
func (c *scrubCache) get(all map[string]string) (*redact.Redactor, *tools.SecretSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.red == nil || !maps.Equal(c.all, all) {
		c.all = maps.Clone(all)
		c.red = newRedactor(all)
		c.secrets = tools.NewSecretSet(all)
	}
	return c.red, c.secrets
}
