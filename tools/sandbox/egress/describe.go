package egress

import (
	"slices"
	"strings"
)

// Entry is one line of `hush sandbox show`'s network section: what is
// allowed or refused, and why.
type Entry struct {
	Action string // "allow", "deny", "ask", "bound"
	What   string // a host pattern, or a secret name for "bound"
	Why    string
}

// Describe is the network of tool in entries: its own rules, then
// [network]'s (a host one of the tool's rules matches is decided by
// them), each most specific first as they decide, then where each secret may be sent — the
// configured ones and each of names (the vault's, say) — with where its
// binding comes from.
func (p *Policy) Describe(tool string, names []string) []Entry {
	if p.none[tool] {
		return []Entry{{"deny", "*", "no network at all (tools." + tool + ".network = \"none\")"}}
	}
	var out []Entry
	for _, group := range [][]rule{p.tools[tool], p.global} {
		rules := slices.Clone(group)
		slices.SortStableFunc(rules, func(a, b rule) int { return b.pat.Specificity() - a.pat.Specificity() })
		for _, r := range rules {
			why := r.key
			if r.action == Allow && r.pat.Host != "*" {
				why += "; reached even where it resolves to a loopback or private address"
			}
			out = append(out, Entry{r.action.String(), r.pat.String(), why})
		}
	}
	out = append(out,
		Entry{"allow", "*", "a call holding no secret: every public host (default)"},
		Entry{"deny", "loopback, private, link-local", "a call holding no secret: this machine and its network, unless listed above (default); checked on the address a name resolves to"},
	)
	all := slices.Clone(names)
	for n := range p.secrets {
		if _, source := p.Hosts(n); !strings.HasPrefix(source, "built-in") {
			all = append(all, n) // configured: shown whether held or not
		}
	}
	slices.Sort(all)
	for _, n := range slices.Compact(all) {
		hosts, source := p.Hosts(n)
		switch {
		case source == "":
			out = append(out, Entry{"ask", n, "bound to no host yet: a call holding it asks (chat) or is refused (run) at its first connection; add [secrets." + n + "] hosts = [\"HOST\"]"})
		case len(hosts) == 0:
			out = append(out, Entry{"bound", n, "to no host (" + source + " = [])"})
		case strings.HasPrefix(source, "built-in"):
			out = append(out, Entry{"bound", n, strings.Join(hosts, ", ") + " (built in for this name, public addresses only; [secrets." + n + "] hosts replaces it)"})
		default:
			out = append(out, Entry{"bound", n, strings.Join(hosts, ", ") + " (" + source + ")"})
		}
	}
	if len(all) > 0 {
		out = append(out, Entry{"ask", "other hosts", "a call holding secrets reaches only the hosts bound to at least one of them; [network] allow does not widen that"})
	}
	return out
}
