package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/hushcli/hush/config/userfile"
	"github.com/joho/godotenv"
)

// ErrMalformedDotEnv is returned (wrapped) when a .env file cannot be parsed.
var ErrMalformedDotEnv = errors.New("malformed .env file")

// LoadDotEnv reads a .env file into a map and nothing else: it never writes
// the process environment (godotenv's Load and Overload do; hush uses only
// its parser). A missing file is an empty map. A malformed file is an error
// that names the file and the line; the parser's own message is dropped
// because it quotes the text near the fault, which may be a secret value.
func LoadDotEnv(path string) (map[string]string, error) {
	data, err := userfile.Read(context.Background(), path, userfile.DotEnvLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return ParseDotEnv(path, data)
}

// ParseDotEnv parses .env content; name is used in errors only.
func ParseDotEnv(name string, data []byte) (map[string]string, error) {
	// Editors on Windows save a byte-order mark; the parser would take it
	// for part of the first name and reject the whole file.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	m, err := godotenv.UnmarshalBytes(data)
	if err == nil {
		return m, nil
	}
	return nil, fmt.Errorf("%s line %d: %w (the line is not shown, it may hold a secret)",
		name, faultLine(data), ErrMalformedDotEnv)
}

// faultLine finds the line an entry that fails to parse starts on: the
// longest prefix of whole lines that still parses ends just before it.
// It runs only on the error path, so its quadratic cost does not matter.
func faultLine(data []byte) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	good := 0
	for k := 1; k <= len(lines); k++ {
		if _, err := godotenv.UnmarshalBytes(bytes.Join(lines[:k], nil)); err == nil {
			good = k
		}
	}
	if good >= len(lines) {
		return len(lines)
	}
	return good + 1
}

// salvageSpan is how many lines an entry that fails to parse on its own
// may span (a quoted multi-line value, such as a PEM key) before
// SalvageDotEnv gives up on the line it starts on.
const salvageSpan = 200

// SalvageDotEnv is what can be read of a malformed .env file: every entry
// that parses on its own (or with the lines after it, for a multi-line
// value), the lines that cannot be parsed left out. hush uses it so that a
// value of a broken file is still kept from tools and scrubbed.
func SalvageDotEnv(data []byte) map[string]string {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	lines := bytes.SplitAfter(data, []byte("\n"))
	out := map[string]string{}
	for i := 0; i < len(lines); {
		next, span := i+1, 1
		// Only an open quote makes an entry span lines.
		if bytes.ContainsAny(lines[i], "\"'`") {
			span = salvageSpan
		}
		for k := i + 1; k <= len(lines) && k <= i+span; k++ {
			if m, err := godotenv.UnmarshalBytes(bytes.Join(lines[i:k], nil)); err == nil {
				for n, v := range m {
					out[n] = v
				}
				next = k
				break
			}
		}
		i = next
	}
	return out
}
