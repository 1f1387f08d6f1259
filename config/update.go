package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/hushcli/hush/config/atomicfile"
	"github.com/hushcli/hush/config/userfile"
)

// Setting is one string key of a top-level table of config.toml.
type Setting struct {
	Table, Key string
	// Value "" removes the key.
	Value string
}

// UpdateConfig sets string keys of top-level tables in the TOML file at
// path — e.g. [model] provider, [vault] backend — and keeps every other
// table, key and comment as it was. New keys and tables are added in the
// order given. The file is replaced atomically (0600).
//
// The edit is made on the text, then checked: the new file must load as a
// valid config.toml and decode to exactly the old document with the asked
// changes. When a hand-written layout defeats the text edit (dotted keys,
// inline tables), the document is re-encoded instead — every setting kept,
// comments lost — and rewritten reports true.
func UpdateConfig(path string, settings ...Setting) (rewritten bool, err error) {
	old, err := userfile.Read(context.Background(), path, userfile.ConfigLimit)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	for _, st := range settings {
		if !utf8.ValidString(st.Value) {
			return false, fmt.Errorf("%s.%s: not valid UTF-8 text; nothing was changed", st.Table, st.Key)
		}
	}
	if _, err := Load(path); err != nil {
		return false, fmt.Errorf("%w (fix it, then run this again; nothing was changed)", err)
	}
	var doc map[string]any
	if _, err := toml.Decode(string(old), &doc); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	want := applyChanges(doc, settings)

	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("create config dir: %w", err)
	}
	edited := editTables(old, settings)
	if err := writeChecked(path, edited, want); err == nil {
		return false, nil
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(want); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := writeChecked(path, buf.Bytes(), want); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// applyChanges returns a copy of doc's top level with the changes made.
func applyChanges(doc map[string]any, settings []Setting) map[string]any {
	out := make(map[string]any, len(doc)+len(settings))
	for k, v := range doc {
		out[k] = v
	}
	copied := map[string]bool{}
	for _, st := range settings {
		t, _ := out[st.Table].(map[string]any)
		if !copied[st.Table] {
			c := map[string]any{}
			for k, v := range t {
				c[k] = v
			}
			t, copied[st.Table] = c, true
		}
		// Names match exactly: config.Load refuses a case variant (a
		// file that says "Backend" is an error, not a second setting).
		delete(t, st.Key)
		if st.Value != "" {
			t[st.Key] = st.Value
		}
		out[st.Table] = t
	}
	return out
}

// tablesOf groups settings by table, keeping the order of first mention.
func tablesOf(settings []Setting) (order []string, byTable map[string][]Setting) {
	byTable = map[string][]Setting{}
	for _, st := range settings {
		if _, seen := byTable[st.Table]; !seen {
			order = append(order, st.Table)
		}
		byTable[st.Table] = append(byTable[st.Table], st)
	}
	return order, byTable
}

// writeChecked replaces path with data through the one atomic writer,
// after checking that the temp file is a valid config that decodes to want.
func writeChecked(path string, data []byte, want map[string]any) error {
	return atomicfile.WriteFile(path, data, func(tmp string) error {
		if _, err := Load(tmp); err != nil {
			return err
		}
		var got map[string]any
		if _, err := toml.Decode(string(data), &got); err != nil {
			return err
		}
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			return errors.New("the edited file does not say what was asked")
		}
		return nil
	})
}

// normalize makes an empty table and a missing one compare equal.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			n := normalize(x)
			if m, ok := n.(map[string]any); ok && len(m) == 0 {
				continue
			}
			out[k] = n
		}
		return out
	case []map[string]any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalize(x)
		}
		return out
	}
	return v
}

// line is one physical line and whether it starts outside any string,
// array or inline table — only such a line can be a header or start a key.
type line struct {
	text  string
	start bool
}

// splitLines lexes just enough TOML to know where entries begin.
func splitLines(data []byte) []line {
	var out []line
	s := string(data)
	const (
		normal = iota
		basic
		literal
		mlBasic
		mlLiteral
	)
	state, depth := normal, 0
	for len(s) > 0 {
		end := strings.IndexByte(s, '\n')
		var text string
		if end < 0 {
			text, s = s, ""
		} else {
			text, s = s[:end+1], s[end+1:]
		}
		l := line{text: text, start: state == normal && depth == 0}
		trimmed := strings.TrimLeft(text, " \t")
		if l.start && strings.HasPrefix(trimmed, "[") {
			out = append(out, l) // a header: nothing on it continues
			continue
		}
		for i := 0; i < len(text); i++ {
			c := text[i]
			switch state {
			case normal:
				switch {
				case c == '#':
					i = len(text)
				case strings.HasPrefix(text[i:], `"""`):
					state, i = mlBasic, i+2
				case strings.HasPrefix(text[i:], `'''`):
					state, i = mlLiteral, i+2
				case c == '"':
					state = basic
				case c == '\'':
					state = literal
				case c == '[' || c == '{':
					depth++
				case c == ']' || c == '}':
					if depth > 0 {
						depth--
					}
				}
			case basic:
				if c == '\\' {
					i++
				} else if c == '"' || c == '\n' {
					state = normal
				}
			case literal:
				if c == '\'' || c == '\n' {
					state = normal
				}
			case mlBasic:
				if c == '\\' {
					i++
				} else if strings.HasPrefix(text[i:], `"""`) {
					state, i = normal, i+2
					for i+1 < len(text) && text[i+1] == '"' { // up to two quotes may end the content
						i++
					}
				}
			case mlLiteral:
				if strings.HasPrefix(text[i:], `'''`) {
					state, i = normal, i+2
					for i+1 < len(text) && text[i+1] == '\'' {
						i++
					}
				}
			}
		}
		out = append(out, l)
	}
	return out
}

// headerName returns the table a header line opens ("" for [[arrays]] and
// for lines that are not headers).
func headerName(l line) (name string, isHeader bool) {
	if !l.start {
		return "", false
	}
	t := strings.TrimSpace(l.text)
	if !strings.HasPrefix(t, "[") {
		return "", false
	}
	if strings.HasPrefix(t, "[[") {
		return "", true
	}
	end := strings.IndexByte(t, ']')
	if end < 0 {
		return "", true
	}
	name = strings.TrimSpace(t[1:end])
	// ["vault"] and ['vault'] open [vault]: the existing table is edited
	// in place rather than a second one appended.
	if len(name) >= 2 && (name[0] == '"' || name[0] == '\'') && name[len(name)-1] == name[0] && !strings.ContainsAny(name[1:len(name)-1], "\"'\\.") {
		name = name[1 : len(name)-1]
	}
	return name, true
}

// keyOf returns the key an entry line starts with, unquoted.
func keyOf(l line) string {
	if !l.start {
		return ""
	}
	t := strings.TrimSpace(l.text)
	if t == "" || t[0] == '#' || t[0] == '[' {
		return ""
	}
	eq := strings.IndexByte(t, '=')
	if eq < 0 {
		return ""
	}
	k := strings.TrimSpace(t[:eq])
	if len(k) >= 2 && (k[0] == '"' || k[0] == '\'') && k[len(k)-1] == k[0] {
		k = k[1 : len(k)-1]
	}
	return k
}

// editTables rewrites the asked keys in place, adds missing ones at the end
// of their table, and appends missing tables at the end of the file.
func editTables(data []byte, settings []Setting) []byte {
	lines := splitLines(data)
	order, byTable := tablesOf(settings)
	for _, table := range order {
		kv := map[string]string{}
		var keys []string
		for _, st := range byTable[table] {
			if _, seen := kv[st.Key]; !seen {
				keys = append(keys, st.Key)
			}
			kv[st.Key] = st.Value
		}

		start, end := -1, len(lines) // the table's lines: [start, end)
		for i, l := range lines {
			name, isHeader := headerName(l)
			if !isHeader {
				continue
			}
			if start >= 0 {
				end = i
				break
			}
			if name == table {
				start = i
			}
		}
		if start < 0 {
			var add []line
			for _, k := range keys {
				if kv[k] != "" {
					add = append(add, line{text: k + " = " + quote(kv[k]) + "\n", start: true})
				}
			}
			if len(add) == 0 {
				continue
			}
			if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1].text, "\n") {
				lines[n-1].text += "\n"
			}
			if len(lines) > 0 {
				lines = append(lines, line{text: "\n", start: true})
			}
			lines = append(lines, line{text: "[" + table + "]\n", start: true})
			lines = append(lines, add...)
			continue
		}
		done := map[string]bool{}
		var body []line
		for i := start + 1; i < end; i++ {
			k := keyOf(lines[i])
			v, asked := kv[k]
			if k == "" || !asked {
				body = append(body, lines[i])
				continue
			}
			// Skip the whole entry, continuation lines included.
			for i+1 < end && !lines[i+1].start {
				i++
			}
			if v != "" && !done[k] {
				body = append(body, line{text: k + " = " + quote(v) + "\n", start: true})
			}
			done[k] = true
		}
		// New keys go after the table's last entry, before trailing blank
		// lines and comments that belong to what follows.
		at := len(body)
		for at > 0 && isBlankOrComment(body[at-1]) {
			at--
		}
		var add []line
		for _, k := range keys {
			if !done[k] && kv[k] != "" {
				add = append(add, line{text: k + " = " + quote(kv[k]) + "\n", start: true})
			}
		}
		if at > 0 && !strings.HasSuffix(body[at-1].text, "\n") {
			body[at-1].text += "\n"
		}
		body = append(body[:at], append(add, body[at:]...)...)
		rest := append([]line(nil), lines[end:]...)
		lines = append(append(lines[:start+1], body...), rest...)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
	}
	return []byte(b.String())
}

func isBlankOrComment(l line) bool {
	t := strings.TrimSpace(l.text)
	return l.start && (t == "" || strings.HasPrefix(t, "#"))
}

// quote writes s as a TOML basic string.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
