package redact

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// placeholder matches a placeholder a Redactor writes.
var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[REDACTED:([^\]\s]+)\]`) })

// Names are the secrets whose values redacting orig replaced (giving red),
// sorted, each once: placeholders orig already held do not count. It is
// how hush names, never shows, a secret the user typed.
func Names(orig, red string) []string {
	if orig == red {
		return nil
	}
	had := map[string]int{}
	for _, m := range placeholder().FindAllStringSubmatch(orig, -1) {
		had[m[1]]++
	}
	var names []string
	for _, m := range placeholder().FindAllStringSubmatch(red, -1) {
		if had[m[1]] > 0 {
			had[m[1]]--
			continue
		}
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return names
}

// Placeholders is how names' values read once redacted:
// "[REDACTED:A], [REDACTED:B]".
func Placeholders(names []string) string {
	p := make([]string, len(names))
	for i, n := range names {
		p[i] = "[REDACTED:" + n + "]"
	}
	return strings.Join(p, ", ")
}
