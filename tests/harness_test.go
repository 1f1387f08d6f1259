// Package tests holds hush's end-to-end suite: the real binary, started in
// a real pseudo-terminal (creack/pty), talking to a fake model server on
// 127.0.0.1 that speaks the OpenAI wire format, with canary secrets planted
// in every place a secret can live.
package tests

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

var hushBin string

// setupFailed is the exit code of a test binary that could not build hush.
const setupFailed = 1

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hush-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(setupFailed)
	}
	hushBin = filepath.Join(dir, "hush")
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", hushBin, "..")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build hush:", err)
		os.Exit(setupFailed)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// canary returns a fresh, recognisable secret value.
func canary(label string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "canary-" + label + "-" + hex.EncodeToString(b)
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// world is one user's machine: a home, hush's dirs, a project, and canary
// secrets planted in the vault, a project .env and the real environment.
type world struct {
	t          *testing.T
	home       string
	configDir  string
	dataDir    string
	project    string
	env        []string
	canaries   map[string]string // where → value
	granted    string            // the positive control's value
	grantedSHA string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, home: filepath.Join(root, "home"), configDir: filepath.Join(root, "config"),
		dataDir: filepath.Join(root, "data"), project: filepath.Join(root, "project"), canaries: map[string]string{}}
	for _, d := range []string{w.home, w.configDir, w.dataDir, w.project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.canaries["vault"] = canary("vault")
	w.canaries["dotenv"] = canary("dotenv")
	w.canaries["env-credential"] = canary("envcred")
	w.canaries["env-token"] = canary("envtoken")
	w.canaries["env-url"] = canary("envurl")
	w.granted = canary("granted")
	w.grantedSHA = sha(w.granted)
	w.write(filepath.Join(w.dataDir, "vault.env"), fmt.Sprintf("VAULT_CANARY=%q\nGRANTED=%q\n", w.canaries["vault"], w.granted))
	w.write(filepath.Join(w.project, ".env"), fmt.Sprintf("DOTENV_CANARY=%s\n", w.canaries["dotenv"]))
	w.write(filepath.Join(w.project, "README"), "a project\n")
	w.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + w.home,
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"HUSH_CONFIG_DIR=" + w.configDir,
		"HUSH_DATA_DIR=" + w.dataDir,
		"OPENAI_API_KEY=" + w.canaries["env-credential"],
		"MY_SERVICE_TOKEN=" + w.canaries["env-token"],
		"DATABASE_URL=postgres://app:" + w.canaries["env-url"] + "@db/app",
		// An innocuous name holding a vault value.
		"INNOCENT_SETTING=" + w.canaries["vault"],
	}
	return w
}

func (w *world) write(path, content string) {
	w.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) config(content string) { w.write(filepath.Join(w.configDir, "config.toml"), content) }

// assertNoCanary fails if any planted canary appears in text.
func (w *world) assertNoCanary(where, text string) {
	w.t.Helper()
	for label, v := range w.canaries {
		if strings.Contains(text, v) {
			w.t.Errorf("%s leaks the %s canary", where, label)
		}
	}
	if strings.Contains(text, w.granted) {
		w.t.Errorf("%s shows the granted secret's value unredacted", where)
	}
}

// assertNoRawCanary fails if a planted canary appears in text in a raw
// form leakScript prints and the redactor does not scrub: reversed, or as
// hex bytes separated by spaces.
func (w *world) assertNoRawCanary(where, text string) {
	w.t.Helper()
	for label, v := range w.canaries {
		if strings.Contains(text, reverse(v)) || strings.Contains(text, spacedHex(v)) {
			w.t.Errorf("%s holds the %s canary in raw bytes (reversed or hex)", where, label)
		}
	}
}

// spacedHex is s as xxd -p -c1 | tr '\n' ' ' prints it.
func spacedHex(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%02x ", s[i])
	}
	return strings.TrimSuffix(b.String(), " ")
}

// transcripts and audit log, concatenated.
func (w *world) transcripts() string {
	files, _ := filepath.Glob(filepath.Join(w.dataDir, "transcripts", "*.jsonl"))
	var b bytes.Buffer
	for _, f := range files {
		data, _ := os.ReadFile(f)
		b.Write(data)
	}
	return b.String()
}

func (w *world) audit() string {
	data, _ := os.ReadFile(filepath.Join(w.dataDir, "audit.jsonl"))
	return string(data)
}

// leakScript is what the model runs: the three ambient paths of the seed,
// printed in forms the redactor does not know — the environment and the
// parent's environ reversed, .env as hex bytes one by one — so a leak shows
// in what the model receives even though every tool output is scrubbed; plus
// the positive control: a granted ${GRANTED} arrives, is hashed so the test
// can check its exact value, and is printed reversed, so the raw channel is
// seen to work.
const leakScript = `env | rev; echo ---; xxd -p -c1 .env | tr '\n' ' '; echo ---; tr '\0' '\n' </proc/$PPID/environ | rev; echo ---; ` +
	`echo "positive=$POS"; printf %s "$POS" | sha256sum; printf %s "$POS" | rev; echo`

var leakArgs = map[string]any{"script": leakScript, "env": map[string]string{"POS": "${GRANTED}"}}

// term is hush running in a pseudo-terminal.
type term struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	mu   sync.Mutex
	raw  bytes.Buffer
	done chan struct{}
}

func startPTY(t *testing.T, w *world, args ...string) *term {
	t.Helper()
	return startPTYSize(t, w, 50, 160, args...)
}

// startPTYSize is startPTY on a terminal of rows × cols.
func startPTYSize(t *testing.T, w *world, rows, cols uint16, args ...string) *term {
	t.Helper()
	cmd := exec.Command(hushBin, args...)
	cmd.Env = w.env
	cmd.Dir = w.project
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: rows, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, cmd: cmd, pty: f, done: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.raw.Write(buf[:n])
			tm.mu.Unlock()
			answerQueries(f, buf[:n])
			if err != nil {
				close(tm.done)
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = f.Close()
	})
	return tm
}

// answerQueries replies to the terminal queries a real terminal answers
// (colours, cursor position), so hush's forms need not wait for a timeout.
func answerQueries(f *os.File, out []byte) {
	if bytes.Contains(out, []byte("\x1b]11;?")) {
		_, _ = f.Write([]byte("\x1b]11;rgb:1c1c/1c1c/1c1c\x1b\\"))
	}
	if bytes.Contains(out, []byte("\x1b]10;?")) {
		_, _ = f.Write([]byte("\x1b]10;rgb:dddd/dddd/dddd\x1b\\"))
	}
	if bytes.Contains(out, []byte("\x1b[6n")) {
		_, _ = f.Write([]byte("\x1b[1;1R"))
	}
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]`)

// Screen is everything the terminal showed, escape sequences removed.
func (tm *term) Screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return ansi.ReplaceAllString(tm.raw.String(), "")
}

// Raw is the bytes the terminal received.
func (tm *term) Raw() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.raw.String()
}

// expect waits until the screen has shown s (anywhere in what the
// terminal received so far).
func (tm *term) expect(s string, timeout time.Duration) {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		// hush wraps a line wider than the terminal itself: s may be
		// split across rows.
		if sc := tm.Screen(); strings.Contains(sc, s) || strings.Contains(unwrap.Replace(sc), s) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.t.Fatalf("timed out waiting for %q; screen:\n%s", s, tm.Screen())
}

var unwrap = strings.NewReplacer("\r\n", "", "\n", "")

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.pty.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

// quit ends the chat with Ctrl-D and fails the test unless hush then
// exits 0.
func (tm *term) quit() {
	tm.t.Helper()
	tm.send("\x04")
	if code := tm.wait(10 * time.Second); code != 0 {
		tm.t.Fatalf("exit %d after Ctrl-D; screen:\n%s", code, tm.Screen())
	}
}

// wait waits for hush to exit and returns its exit code.
func (tm *term) wait(timeout time.Duration) int {
	tm.t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- tm.cmd.Wait() }()
	select {
	case err := <-errc:
		<-tm.done
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			tm.t.Fatal(err)
		}
		return 0
	case <-time.After(timeout):
		tm.t.Fatalf("hush did not exit; screen:\n%s", tm.Screen())
		return -1
	}
}
