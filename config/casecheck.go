package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// checkCase makes every table and key of a config file mean one thing.
// TOML names are case-sensitive, but the decoder matches them to fields
// ignoring case: with `[vauLt] Backend = "envfile"` and `[vault] backend =
// "keyring"` in one file, which backend hush used changed from one run to
// the next (1 in 20 said envfile), and so did which secrets exist. A name
// that matches a field only when case is ignored is an error naming both
// spellings; names inside maps (tool and server names, env and set keys)
// are the user's own and are left as written.
func checkCase(doc map[string]any) error {
	return checkCaseIn(doc, reflect.TypeOf(Config{}), "")
}

func checkCaseIn(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil // a type error, reported by the decoder
		}
		fields := map[string]reflect.StructField{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name != "" && name != "-" {
				fields[name] = f
			}
		}
		if len(fields) == 0 {
			return nil // a value type such as Duration
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if f, ok := fields[k]; ok {
				if err := checkCaseIn(m[k], f.Type, join(path, k)); err != nil {
					return err
				}
				continue
			}
			for name := range fields {
				if strings.EqualFold(name, k) {
					return fmt.Errorf("%s is not %s: TOML names are case-sensitive, so hush reads only %s; rename it", join(path, k), join(path, name), join(path, name))
				}
			}
			// Unknown altogether: the decoder's Undecoded names it.
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for k, x := range m {
			if err := checkCaseIn(x, t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		switch xs := v.(type) {
		case []map[string]any:
			for i, x := range xs {
				if err := checkCaseIn(x, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		case []any:
			for i, x := range xs {
				if err := checkCaseIn(x, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
