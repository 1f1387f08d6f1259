package redact

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
)

// FromMap is New for the vault's name → value map, in name order so the
// same map always gives the same redactor. An empty map gives a redactor
// that replaces nothing.
//
// A value that is a JSON object — the OAuth tokens hush keeps for an MCP
// server, a service-account key — is also scrubbed field by field: each of
// its string fields of minField bytes or more is a secret of that name,
// since a token travels on its own (in a header), not as the whole object.
func FromMap(all map[string]string) *Redactor {
	s := make([]Secret, 0, len(all))
	for _, n := range slices.Sorted(maps.Keys(all)) {
		s = append(s, Secret{Name: n, Value: all[n]})
		s = append(s, jsonFields(n, all[n])...)
	}
	return New(s)
}

// minField is the shortest JSON field FromMap scrubs on its own: shorter
// ones are type names and flags ("Bearer", "true"), not credentials.
const minField = 12

func jsonFields(name, value string) []Secret {
	if !strings.HasPrefix(strings.TrimSpace(value), "{") {
		return nil
	}
	var obj map[string]any
	if json.Unmarshal([]byte(value), &obj) != nil {
		return nil
	}
	var out []Secret
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		v, ok := obj[k].(string)
		if !ok || len(v) < minField || strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
			continue // URLs are where a token goes, not the token
		}
		if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
			continue // an expiry
		}
		out = append(out, Secret{Name: name, Value: v})
	}
	return out
}
