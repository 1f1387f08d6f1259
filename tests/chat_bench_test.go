package tests

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// benchChat is hush chat in a PTY for the benchmarks: the raw output with
// the time each byte arrived.
type benchChat struct {
	cmd  *exec.Cmd
	f    *os.File
	mu   sync.Mutex
	raw  bytes.Buffer
	seen []time.Time // seen[i]: when raw[i] arrived
}

func startBenchChat(b *testing.B, baseURL string) *benchChat {
	b.Helper()
	root := b.TempDir()
	for _, d := range []string{"home", "config", "data", "project"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			b.Fatal(err)
		}
	}
	cfg := fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"bench\"\n", baseURL)
	if err := os.WriteFile(filepath.Join(root, "config", "config.toml"), []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(hushBin, "chat")
	cmd.Dir = filepath.Join(root, "project")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(root, "home"), "TERM=xterm-256color", "LANG=C.UTF-8",
		"HUSH_CONFIG_DIR=" + filepath.Join(root, "config"), "HUSH_DATA_DIR=" + filepath.Join(root, "data")}
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 120})
	if err != nil {
		b.Fatal(err)
	}
	c := &benchChat{cmd: cmd, f: f}
	go func() {
		buf := make([]byte, 65536)
		for {
			n, err := f.Read(buf)
			now := time.Now()
			c.mu.Lock()
			c.raw.Write(buf[:n])
			for i := 0; i < n; i++ {
				c.seen = append(c.seen, now)
			}
			c.mu.Unlock()
			answerQueries(f, buf[:n])
			if err != nil {
				return
			}
		}
	}()
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); _ = f.Close() })
	c.waitFor(b, 0, "› ", 20*time.Second)
	return c
}

// waitFor returns when s arrived at or after offset from.
func (c *benchChat) waitFor(b *testing.B, from int, s string, timeout time.Duration) time.Time {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		if from <= c.raw.Len() {
			if i := bytes.Index(c.raw.Bytes()[from:], []byte(s)); i >= 0 {
				t := c.seen[from+i+len(s)-1]
				c.mu.Unlock()
				return t
			}
		}
		c.mu.Unlock()
		if time.Now().After(deadline) {
			b.Fatalf("no %q on screen within %s", s, timeout)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func (c *benchChat) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw.Len()
}

func medianMS(d []time.Duration) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[len(d)/2]) / float64(time.Millisecond)
}

// BenchmarkChatKeystrokeEcho: from writing a key to the PTY to its echo in
// the editor, over 200 keys; reports the median and the 95th percentile.
func BenchmarkChatKeystrokeEcho(b *testing.B) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	c := startBenchChat(b, srv.URL+"/v1")
	var lat []time.Duration
	for range b.N {
		lat = append(lat, typeKeys(b, c, 200)...)
	}
	b.ReportMetric(medianMS(lat), "echo-median-ms")
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)*95/100])/float64(time.Millisecond), "echo-p95-ms")
}

// markdownAnswer is a 2,000-line Markdown answer in tokens of about three
// characters: headings, paragraphs, lists, code blocks and tables, with
// a marker word every 100 lines.
func markdownAnswer() (tokens []string, markers []string) {
	line := 0
	add := func(s string) {
		tokens = append(tokens, strings.SplitAfter(s, " ")...)
		tokens[len(tokens)-1] += "\n"
		line++
	}
	for section := 1; line < 2000; section++ {
		add(fmt.Sprintf("## Section %d", section))
		add("")
		add("Some prose with **bold**, `code` and a [link](https://example.com) in it, about as long as a line.")
		add("")
		add("- a first item")
		add("- a second item")
		add("")
		add("```go")
		for i := 0; i < 8; i++ {
			add(fmt.Sprintf("\tx%d := compute(%d) // step", i, i))
		}
		add("```")
		add("")
		add("| name | value |")
		add("|------|-------|")
		add("| a | 1 |")
		add("| b | 2 |")
		add("")
		if section%5 == 0 { // a marker paragraph about every 100 lines
			m := fmt.Sprintf("marker%04d", section)
			markers = append(markers, m)
			add(m)
			add("")
		}
	}
	return tokens, markers
}

// BenchmarkChatMarkdownStream: a 2,000-line Markdown answer streamed at
// 200 tokens/s; for every marker, the time from the server sending it to
// it being on screen. It reports the last token's lag and the largest.
func BenchmarkChatMarkdownStream(b *testing.B) {
	tokens, markers := markdownAnswer()
	tokens = append(tokens, "\nthe-last-token")
	markers = append(markers, "the-last-token")
	var mu sync.Mutex
	sent := map[string]time.Time{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		tick := time.NewTicker(5 * time.Millisecond) // 200 tokens/s
		defer tick.Stop()
		for _, tok := range tokens {
			<-tick.C
			body := fmt.Sprintf(`{"id":"b","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, tok)
			fmt.Fprintf(w, "data: %s\n\n", body)
			fl.Flush()
			if m := strings.TrimSpace(tok); strings.HasPrefix(m, "marker") || m == "the-last-token" {
				mu.Lock()
				sent[m] = time.Now()
				mu.Unlock()
			}
		}
		fmt.Fprint(w, `data: {"id":"b","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	for range b.N {
		c := startBenchChat(b, srv.URL+"/v1")
		from := c.len()
		_, _ = c.f.Write([]byte("write it\r"))
		var lags []time.Duration
		for _, m := range markers {
			at := c.waitFor(b, from, m, 60*time.Second)
			mu.Lock()
			lags = append(lags, at.Sub(sent[m]))
			mu.Unlock()
		}
		last := lags[len(lags)-1]
		sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
		b.ReportMetric(float64(last)/float64(time.Millisecond), "last-token-lag-ms")
		b.ReportMetric(float64(lags[len(lags)-1])/float64(time.Millisecond), "max-marker-lag-ms")
		b.ReportMetric(float64(len(tokens)), "tokens")
	}
}

// BenchmarkChatKeystrokeEchoWhileStreaming: the chat benchmark.
// A first turn puts 5,000 lines of conversation above the editor; during
// a second turn that streams a token every 5 ms, keys are typed one at a
// time and the time from writing each to the PTY to its echo in the editor
// is measured. It reports the median and the 99th percentile; the target
// is a p99 of 16 ms or less.
func BenchmarkChatKeystrokeEchoWhileStreaming(b *testing.B) {
	chunk := func(w http.ResponseWriter, text string) {
		body := fmt.Sprintf(`{"id":"b","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, text)
		fmt.Fprintf(w, "data: %s\n\n", body)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		if bytes.Contains(body, []byte("stream-slowly")) {
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
				tok := fmt.Sprintf("tok%d ", i)
				if i%12 == 11 {
					tok += "\n\n"
				}
				chunk(w, tok)
				fl.Flush()
			}
		}
		// The first turn: 5,000 lines, 100 a chunk.
		for i := 0; i < 5000; i += 100 {
			var s strings.Builder
			for j := i; j < i+100; j++ {
				fmt.Fprintf(&s, "line %d of the conversation above, about as long as a line of prose\n\n", j)
			}
			chunk(w, s.String())
			fl.Flush()
		}
		chunk(w, "fill-done")
		fmt.Fprint(w, `data: {"id":"b","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
		fl.Flush()
	}))
	defer srv.Close()
	c := startBenchChat(b, srv.URL+"/v1")
	from := c.len()
	_, _ = c.f.Write([]byte("fill\r"))
	c.waitFor(b, from, "fill-done", 120*time.Second)
	time.Sleep(500 * time.Millisecond)
	// The same keys with no turn running, on the same machine at the same
	// time: what the machine itself costs.
	idle := typeKeys(b, c, 200)
	_, _ = c.f.Write([]byte{0x15})
	time.Sleep(100 * time.Millisecond)
	from = c.len()
	_, _ = c.f.Write([]byte("stream-slowly\r"))
	c.waitFor(b, from, "tok20 ", 30*time.Second)
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		lat = append(lat, typeKeys(b, c, 200)...)
	}
	b.StopTimer()
	_, _ = c.f.Write([]byte{0x03}) // stop the streaming turn
	p99 := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)*99/100]) / float64(time.Millisecond)
	}
	b.ReportMetric(medianMS(lat), "echo-median-ms")
	b.ReportMetric(p99(lat), "echo-p99-ms")
	b.ReportMetric(p99(idle), "idle-echo-p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/float64(time.Millisecond), "echo-max-ms")
}

// typeKeys types n keys one at a time (Ctrl-U starting a new line every
// 36) and returns each one's time from the write to the PTY to its echo:
// what is waited for is the whole line typed so far, since a single letter
// could match an escape sequence or streamed text.
func typeKeys(b *testing.B, c *benchChat, n int) []time.Duration {
	keys := "abcdefghijklmnopqrstuvwxyz0123456789"
	var lat []time.Duration
	typed := ""
	for i := 0; i < n; i++ {
		if len(typed) == len(keys) {
			_, _ = c.f.Write([]byte{0x15})
			time.Sleep(30 * time.Millisecond)
			typed = ""
		}
		from := c.len()
		k := keys[len(typed) : len(typed)+1]
		typed += k
		start := time.Now()
		_, _ = c.f.Write([]byte(k))
		lat = append(lat, c.waitFor(b, from, typed, 5*time.Second).Sub(start))
		time.Sleep(5 * time.Millisecond)
	}
	return lat
}
