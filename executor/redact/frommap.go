package redact

import (
	"maps"
	"slices"
)

// FromMap is New for the vault's name → value map, in name order so the
// same map always gives the same redactor. An empty map gives a redactor
// that replaces nothing.
func FromMap(all map[string]string) *Redactor {
	s := make([]Secret, 0, len(all))
	for _, n := range slices.Sorted(maps.Keys(all)) {
		s = append(s, Secret{Name: n, Value: all[n]})
	}
	return New(s)
}
