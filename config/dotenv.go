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
	return nil, malformed(name, data, faultLine(data))
}

// malformed is the error for a .env file that does not parse, naming the
// line walkDotEnv found (0: none) and never the text.
func malformed(name string, data []byte, line int) error {
	if line == 0 {
		// Every entry parses on its own but the whole does not: godotenv
		// has a case walkDotEnv does not know; name the last line.
		line = bytes.Count(data, []byte("\n")) + 1
	}
	return fmt.Errorf("%s line %d: %w (the line is not shown, it may hold a secret)", name, line, ErrMalformedDotEnv)
}

// faultLine finds the line an entry that fails to parse starts on: the
// line after the longest run of whole entries that parse (walkDotEnv).
func faultLine(data []byte) int {
	line := 0
	walkDotEnv(data, nil, func(n int) bool { line = n; return false })
	return line
}

// maxCloseTries is how many lines holding each quote character walkDotEnv
// tries as the end of a quoted value that spans lines. The
// first one is the end unless another quoted value opens after the close
// on the same line; past a few such chains it gives up on the entry, so
// a broken quote followed by many quoted lines costs linear time.
const maxCloseTries = 8

// walkDotEnv reads data one entry at a time, in one pass: an entry is the
// run of whole lines starting at a line that godotenv parses on its own.
// Only a quoted value spans lines (godotenv ends an unquoted value at the
// line's end, and a name at a newline), and it ends at the next unescaped
// quote of the character that opened it, so only lines holding a quote
// are tried as its end: each entry is parsed a bounded number
// of times, never the file's prefixes (which cost quadratic time: 0.95 s
// for 5,000 lines). good gets each entry's values (it may be nil); bad
// gets the 1-based number of a line that starts no entry and says whether
// to go on with the next line.
func walkDotEnv(data []byte, good func(map[string]string), bad func(line int) bool) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	// next[q][i] is the next line after i holding an unescaped quotes[q].
	quotes := []byte{'"', '\''}
	next := make([][]int, len(quotes))
	for qi, q := range quotes {
		next[qi] = make([]int, len(lines)+1)
		at := len(lines)
		for i := len(lines) - 1; i >= 0; i-- {
			next[qi][i] = at
			if hasUnescaped(lines[i], q) {
				at = i
			}
		}
		next[qi][len(lines)] = len(lines)
	}
	for i := 0; i < len(lines); {
		end := -1
		m, err := godotenv.UnmarshalBytes(lines[i])
		if err == nil {
			end = i + 1
		} else if bytes.ContainsAny(lines[i], string(quotes)) {
			// Which quote is still open at the line's end is not known
			// here: try the lines holding either, nearest first.
			j, tries := [2]int{next[0][i], next[1][i]}, [2]int{}
			for {
				q := 0
				if tries[0] >= maxCloseTries || (j[1] < j[0] && tries[1] < maxCloseTries) {
					q = 1
				}
				if j[q] >= len(lines) || tries[q] >= maxCloseTries {
					break
				}
				if m, err = godotenv.UnmarshalBytes(bytes.Join(lines[i:j[q]+1], nil)); err == nil {
					end = j[q] + 1
					break
				}
				j[q], tries[q] = next[q][j[q]], tries[q]+1
			}
		}
		if end >= 0 && good != nil {
			good(m)
		}
		if end < 0 {
			if !bad(i + 1) {
				return
			}
			end = i + 1
		}
		i = end
	}
}

// hasUnescaped reports whether line holds q not after a backslash, as
// godotenv's end of a quoted value.
func hasUnescaped(line []byte, q byte) bool {
	for k, c := range line {
		if c == q && (k == 0 || line[k-1] != '\\') {
			return true
		}
	}
	return false
}

// salvage is what can be read of a malformed .env file: every entry that
// parses on its own (or with the lines after it, for a multi-line value),
// the lines that cannot be parsed left out, so that a value of a broken
// file is still kept from tools and scrubbed. It reads the file in one
// pass (walkDotEnv) with godotenv parsing each entry; it also finds the first line that
// starts no entry (faultLine's answer; 0: none).
func salvage(data []byte) (values map[string]string, fault int) {
	values = map[string]string{}
	walkDotEnv(data, func(m map[string]string) {
		for n, v := range m {
			values[n] = v
		}
	}, func(n int) bool {
		if fault == 0 {
			fault = n
		}
		return true
	})
	return values, fault
}

// loadDotEnvSalvaged is LoadDotEnv that keeps what it can of a malformed
// file: the values salvage reads of the same bytes, with fault the
// error LoadDotEnv would have returned. The file is read and walked once.
func loadDotEnvSalvaged(path string) (values map[string]string, fault, err error) {
	data, err := userfile.Read(context.Background(), path, userfile.DotEnvLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if m, err := godotenv.UnmarshalBytes(data); err == nil {
		return m, nil, nil
	}
	values, line := salvage(data)
	return values, malformed(path, data, line), nil
}
