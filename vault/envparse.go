package vault

import (
	"bytes"

	"github.com/joho/godotenv"
)

// parseEnv reads a dotenv file as godotenv does. The file hush writes
// (marshal) and most written by hand are NAME=value lines whose values
// need none of godotenv's work — no escapes, no ${VAR}, no comment after
// the value — and those are read by parseSimple; any other file goes to
// godotenv whole. godotenv runs regular expressions over every value (for
// escapes and ${VAR}): 8,000 secrets took it about 20 ms of CPU, most of a
// session's start with that vault; parseSimple reads them in about 1 ms.
func parseEnv(data []byte) (map[string]string, error) {
	if m, ok := parseSimple(data); ok {
		return m, nil
	}
	return godotenv.UnmarshalBytes(data)
}

// parseSimple reads data when every line is empty, a comment starting in
// its first column, or NAME=value where NAME is ASCII letters, digits, '_'
// and '.', and value is empty, bare printable ASCII without '$', '\' or a
// leading quote, "…" without '"', '\' or '$' inside, or '…' without a
// single quote or '\' inside — the lines on which godotenv returns value as written
// (less the quotes). ok is false for anything else, and the caller asks
// godotenv (FuzzParseSimple holds the two equal).
func parseSimple(data []byte) (m map[string]string, ok bool) {
	if bytes.IndexByte(data, '\r') >= 0 {
		return nil, false
	}
	m = make(map[string]string, bytes.Count(data, []byte{'\n'})+1)
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		eq := bytes.IndexByte(line, '=')
		if eq <= 0 {
			return nil, false
		}
		for _, c := range line[:eq] {
			if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.') {
				return nil, false
			}
		}
		v, ok := simpleValue(line[eq+1:])
		if !ok {
			return nil, false
		}
		m[string(line[:eq])] = v
	}
	return m, true
}

// simpleValue is the value of a line's text after '=', if it is one
// parseSimple reads.
func simpleValue(v []byte) (string, bool) {
	if len(v) == 0 {
		return "", true
	}
	var bad string
	switch q := v[0]; q {
	case '"', '\'':
		if len(v) < 2 || v[len(v)-1] != q {
			return "", false
		}
		v = v[1 : len(v)-1]
		bad = `\` + string(q)
		if q == '"' {
			bad += "$"
		}
	default:
		bad = `\$`
	}
	for _, c := range v {
		if c < 0x20 || c > 0x7e || c == bad[0] || len(bad) > 1 && c == bad[1] || len(bad) > 2 && c == bad[2] {
			return "", false
		}
		if c == ' ' && bad == `\$` {
			return "", false // a bare value is trimmed and may end in a comment
		}
	}
	return string(v), true
}
