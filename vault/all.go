package vault

import "fmt"

// All reads every secret v stores (name → value): in one call when v is a
// Bulk, else name by name. It is the one copy of that loop; the proxy, the
// layered view and `hush vault backend` use it. Callers must not log or
// return what it gives.
func All(v Vault) (map[string]string, error) {
	if b, ok := v.(Bulk); ok {
		return b.All()
	}
	names, err := v.Names()
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		val, err := v.Get(n)
		if err != nil {
			return nil, fmt.Errorf("read secret %s: %w", n, err)
		}
		out[n] = val
	}
	return out, nil
}
