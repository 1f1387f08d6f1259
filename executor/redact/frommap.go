package redact

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// FromMap is New for the vault's name → value map, in name order so the
// same map always gives the same redactor. An empty map gives a redactor
// that replaces nothing.
//
// A value that is a JSON object — the OAuth tokens hush keeps for an MCP
// server, a service-account key — is also scrubbed field by field: each of
// its string fields of minField bytes or more is a secret of that name,
// since a token travels on its own (in a header), not as the whole object.
//
// Like New it builds nothing until a text could hold a secret; the sort
// and the JSON fields wait for that too. It keeps its own copy of the
// entries, so all may change afterwards.
func FromMap(all map[string]string) *Redactor {
	pairs := make([]Secret, 0, len(all))
	minText, objects := 0, false
	for n, v := range all {
		pairs = append(pairs, Secret{Name: n, Value: v})
		l := len(v)
		if looksJSON(v) {
			l = min(l, minField) // its fields may be shorter than it
			objects = true
		}
		if l >= MinLen && (minText == 0 || l < minText) {
			minText = l
		}
	}
	return deferred(func() []Secret {
		slices.SortFunc(pairs, func(a, b Secret) int { return strings.Compare(a.Name, b.Name) })
		if !objects {
			return pairs // no JSON fields to add
		}
		s := make([]Secret, 0, len(pairs))
		for _, p := range pairs {
			s = append(s, p)
			s = append(s, jsonFields(p.Name, p.Value)...)
		}
		return s
	}, minText, true)
}

// looksJSON is jsonFields' first test, without parsing. A value that
// starts with an ASCII byte other than a space (most) is decided by that
// byte, without TrimSpace reading its end too.
func looksJSON(v string) bool {
	if len(v) > 0 && v[0] < utf8.RuneSelf && !strings.ContainsRune("\t\n\v\f\r ", rune(v[0])) {
		return v[0] == '{'
	}
	return strings.HasPrefix(strings.TrimSpace(v), "{")
}

// minField is the shortest JSON field FromMap scrubs on its own: shorter
// ones are type names and flags ("Bearer", "true"), not credentials.
const minField = 12

func jsonFields(name, value string) []Secret {
	if !looksJSON(value) {
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
