package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // image.DecodeConfig knows these formats
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hushcli/hush/executor"
)

// ReadName is the read tool's name and gate subject.
const ReadName = "read"

// Read limits.
const (
	DefaultReadLines = 2000
	// MaxReadBytes bounds what one read returns; the rest is cut with a
	// note that says how to read on.
	MaxReadBytes = 256 << 10
	// MaxLineBytes cuts one very long line (minified code).
	MaxLineBytes = 2000
)

// Read is the read tool: a text file or a range of its lines, numbered.
type Read struct{ Check Check }

// ReadParams are read's arguments; the tags are its JSON schema.
type ReadParams struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

func (Read) Name() string { return ReadName }

func (Read) Description() string {
	return "Read a text file, with line numbers. Prefer it to `cat`, `head` or `sed -n` in bash. " +
		"`offset` is the first line (1-based; negative counts from the end, -50 is the last 50 lines), " +
		"`limit` the number of lines (default 2000). Output is capped at 256 KiB with a note saying how to read on. " +
		"Binary files are refused with their type; images are described by type and size. " +
		"Paths are relative to the project directory; reading outside it asks the user. " +
		"hush's own files, credential stores and .env files are masked."
}

func (Read) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "file to read, relative to the project directory or absolute"},
    "offset": {"type": "integer", "description": "first line to show, 1-based; negative counts from the end"},
    "limit": {"type": "integer", "minimum": 1, "description": "number of lines (default 2000)"}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

func (r Read) parse(tc *executor.ToolContext, raw json.RawMessage) (ReadParams, target, error) {
	var p ReadParams
	if err := executor.DecodeArgs(raw, &p); err != nil {
		return p, target{}, err
	}
	if p.Limit < 0 {
		return p, target{}, errors.New("bad arguments: limit must be at least 1")
	}
	t, err := resolve(r.Check, tc.Dir, p.Path)
	if err != nil {
		return p, t, err
	}
	if !t.Exists {
		return p, t, fmt.Errorf("%s does not exist", display(tc.Dir, t.Shown))
	}
	return p, t, nil
}

// Preview implements executor.Previewer.
func (r Read) Preview(_ context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Preview, error) {
	_, t, err := r.parse(tc, raw)
	if err != nil {
		return executor.Preview{}, err
	}
	return readPreview("read", t), nil
}

// Run implements executor.Tool.
func (r Read) Run(_ context.Context, tc *executor.ToolContext, raw json.RawMessage) (executor.Result, error) {
	// Parsed again (it is cheap) and checked against what was approved:
	// a symlink swapped since the preview must not redirect the read.
	p, t, err := r.parse(tc, raw)
	if err != nil {
		return executor.Result{}, err
	}
	if tc.Preview != nil && tc.Preview.Path != t.Real {
		return executor.Result{}, fmt.Errorf("%s now leads to %s, not the %s that was approved; ask again", t.Shown, t.Real, tc.Preview.Path)
	}
	f, err := openChecked(t.Real, display(tc.Dir, t.Shown))
	if err != nil {
		return executor.Result{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return executor.Result{}, fmt.Errorf("stat %s: %w", display(tc.Dir, t.Shown), unwrapPathError(err))
	}
	name := display(tc.Dir, t.Shown)
	if fi.IsDir() {
		return executor.Result{}, fmt.Errorf("%s is a directory; use glob to list files", name)
	}
	if !fi.Mode().IsRegular() {
		return executor.Result{}, fmt.Errorf("%s is not a regular file (%s)", name, fi.Mode().Type())
	}
	head := make([]byte, 8192)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return executor.Result{}, fmt.Errorf("read %s: %w", name, unwrapPathError(err))
	}
	head = head[:n]
	if kind, ok := binaryKind(head); ok {
		if cfg, format, err := image.DecodeConfig(io.MultiReader(bytes.NewReader(head), f)); err == nil {
			fmt.Fprintf(tc.Output, "image: %s, %d×%d pixels, %s\n", format, cfg.Width, cfg.Height, size(fi.Size()))
			return executor.Result{Status: "image described, not shown"}, nil
		}
		if len(kind) > 6 && kind[:6] == "image/" {
			fmt.Fprintf(tc.Output, "image: %s, %s\n", kind, size(fi.Size()))
			return executor.Result{Status: "image described, not shown"}, nil
		}
		return executor.Result{}, fmt.Errorf("refused: %s is a binary file (%s, %s); read shows text only", name, kind, size(fi.Size()))
	}
	if fi.Size() == 0 {
		return executor.Result{Status: name + " is empty"}, nil
	}
	limit := p.Limit
	if limit == 0 {
		limit = DefaultReadLines
	}
	return readLines(tc.Output, f, fi.Size(), name, p.Offset, limit)
}

// binaryKind reports whether head (a file's first bytes) is not text, and
// its MIME type.
func binaryKind(head []byte) (string, bool) {
	kind := http.DetectContentType(head)
	if bytes.IndexByte(head, 0) >= 0 {
		return kind, true
	}
	valid := head
	// A multi-byte character cut at the sniff boundary is still text.
	for i := 0; i < 3 && len(valid) > 0 && !utf8.Valid(valid); i++ {
		valid = valid[:len(valid)-1]
	}
	if !utf8.Valid(valid) && !strings.HasPrefix(kind, "text/") {
		return kind, true
	}
	switch kind {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "application/pdf", "application/zip", "application/x-gzip":
		return kind, true
	}
	return kind, false
}

// readLines writes lines [offset, offset+limit) of f, numbered. It reads
// only as far as it must: a positive offset scans for newlines from the
// start in large blocks; a negative one reads backwards from the end.
func readLines(w io.Writer, f *os.File, fileSize int64, name string, offset, limit int) (executor.Result, error) {
	first := offset
	var start int64 // byte where line `first` begins
	if offset < 0 {
		var err error
		first, start, err = fromEnd(f, fileSize, -offset)
		if err != nil {
			return executor.Result{}, fmt.Errorf("read %s: %w", name, err)
		}
	} else {
		if first == 0 {
			first = 1
		}
		var err error
		var found bool
		start, found, err = seekLine(f, first)
		if err != nil {
			return executor.Result{}, fmt.Errorf("read %s: %w", name, err)
		}
		if !found {
			return executor.Result{}, fmt.Errorf("%s has fewer than %d lines", name, first)
		}
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return executor.Result{}, fmt.Errorf("read %s: %w", name, err)
	}
	br := newLineReader(f)
	var out bytes.Buffer
	line := first
	shown := 0
	cutLong := 0
	more := false
	for shown < limit {
		text, err := br.line()
		if text == nil && err != nil {
			break
		}
		if len(text) > MaxLineBytes {
			text = append(text[:MaxLineBytes:MaxLineBytes], "… [line cut]"...)
			cutLong++
		}
		num := strconv.AppendInt(nil, int64(line), 10)
		entry := append(bytes.Repeat([]byte{' '}, max(0, 6-len(num))), num...)
		if out.Len()+len(entry)+len(text)+2 > MaxReadBytes {
			more = true
			break
		}
		out.Write(entry)
		out.WriteByte('\t')
		out.Write(text)
		out.WriteByte('\n')
		line++
		shown++
		if err != nil {
			break
		}
	}
	if !more && shown == limit {
		if _, err := br.peek(); err == nil {
			more = true
		}
	}
	if _, err := w.Write(out.Bytes()); err != nil {
		return executor.Result{}, err
	}
	if shown == 0 {
		return executor.Result{Status: fmt.Sprintf("no lines from line %d of %s", first, name)}, nil
	}
	status := fmt.Sprintf("lines %d–%d of %s (%s)", first, first+shown-1, name, size(fileSize))
	if more {
		status += fmt.Sprintf("; more follows: read on with offset=%d", first+shown)
		if out.Len() >= MaxReadBytes-MaxLineBytes-64 {
			status += fmt.Sprintf(" (output is capped at %d KiB)", MaxReadBytes>>10)
		}
	}
	if cutLong > 0 {
		status += fmt.Sprintf("; %d long lines cut at %d bytes", cutLong, MaxLineBytes)
	}
	return executor.Result{Status: status}, nil
}

// seekLine returns the byte offset where 1-based line n begins.
func seekLine(f *os.File, n int) (int64, bool, error) {
	if n <= 1 {
		return 0, true, nil
	}
	buf := make([]byte, 1<<20)
	var pos int64
	need := n - 1 // newlines to pass
	for {
		k, err := f.ReadAt(buf, pos)
		chunk := buf[:k]
		for len(chunk) > 0 {
			c := bytes.Count(chunk, nl)
			if c < need {
				need -= c
				pos += int64(len(chunk))
				break
			}
			// The line starts after the need-th newline in chunk.
			for {
				i := bytes.IndexByte(chunk, '\n')
				pos += int64(i + 1)
				chunk = chunk[i+1:]
				need--
				if need == 0 {
					return pos, true, nil
				}
			}
		}
		if err == io.EOF || k == 0 {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, err
		}
	}
}

var nl = []byte{'\n'}

// fromEnd finds the start of the last n lines of f: the 1-based number of
// its first line is only known relative to the end, so it is counted by a
// forward pass only when the file is small; otherwise lines are numbered
// from the end as negative offsets would be.
func fromEnd(f *os.File, fileSize int64, n int) (first int, start int64, err error) {
	buf := make([]byte, 64<<10)
	pos := fileSize
	// A final newline ends the last line; it does not start another.
	want := n
	lastByte := make([]byte, 1)
	if _, err := f.ReadAt(lastByte, fileSize-1); err != nil {
		return 0, 0, err
	}
	if lastByte[0] == '\n' {
		want++
	}
	start = 0
	found := false
	for pos > 0 && !found {
		k := int64(len(buf))
		if k > pos {
			k = pos
		}
		pos -= k
		if _, err := f.ReadAt(buf[:k], pos); err != nil && err != io.EOF {
			return 0, 0, err
		}
		chunk := buf[:k]
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] == '\n' {
				want--
				if want == 0 {
					start = pos + int64(i) + 1
					found = true
					break
				}
			}
		}
	}
	// Number the lines: count the newlines before start, in blocks.
	lines, err := countLines(f, start)
	if err != nil {
		return 0, 0, err
	}
	return lines + 1, start, nil
}

// countLines counts newlines in f's first end bytes.
func countLines(f *os.File, end int64) (int, error) {
	buf := make([]byte, 1<<20)
	var pos int64
	count := 0
	for pos < end {
		k := int64(len(buf))
		if end-pos < k {
			k = end - pos
		}
		n, err := f.ReadAt(buf[:k], pos)
		count += bytes.Count(buf[:n], nl)
		pos += int64(n)
		if err != nil && err != io.EOF {
			return 0, err
		}
		if n == 0 {
			break
		}
	}
	return count, nil
}

// lineReader reads lines without their newline, any length.
type lineReader struct {
	r   io.Reader
	buf []byte
	beg int
	end int
	err error
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: r, buf: make([]byte, 64<<10)} }

func (l *lineReader) fill() {
	if l.beg > 0 {
		copy(l.buf, l.buf[l.beg:l.end])
		l.end -= l.beg
		l.beg = 0
	}
	n, err := l.r.Read(l.buf[l.end:])
	l.end += n
	if err != nil {
		l.err = err
	}
}

// line returns the next line (a copy, possibly cut later by the caller)
// and io.EOF with the last line when no newline ends it.
func (l *lineReader) line() ([]byte, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.beg:l.end], '\n'); i >= 0 {
			s := append([]byte(nil), l.buf[l.beg:l.beg+i]...)
			l.beg += i + 1
			return bytes.TrimSuffix(s, []byte{'\r'}), nil
		}
		if l.err != nil {
			if l.end > l.beg {
				s := append([]byte(nil), l.buf[l.beg:l.end]...)
				l.beg = l.end
				return s, l.err
			}
			return nil, l.err
		}
		// A line longer than the buffer is longer than we will show: it is
		// cut, and the rest skipped, rather than held whole.
		if l.beg == 0 && l.end == len(l.buf) {
			s := append([]byte(nil), l.buf[l.beg:l.beg+MaxLineBytes+1]...)
			l.skipLine()
			return s, nil
		}
		l.fill()
	}
}

// skipLine drops the rest of the current line.
func (l *lineReader) skipLine() {
	for {
		if i := bytes.IndexByte(l.buf[l.beg:l.end], '\n'); i >= 0 {
			l.beg += i + 1
			return
		}
		l.beg = l.end
		if l.err != nil {
			return
		}
		l.fill()
	}
}

// peek reports whether another line follows.
func (l *lineReader) peek() (bool, error) {
	for l.beg == l.end {
		if l.err != nil {
			return false, l.err
		}
		l.fill()
	}
	return true, nil
}

// size is n bytes, for people.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
