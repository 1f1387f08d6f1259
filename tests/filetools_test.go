package tests

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const mainGo = "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"

// fileToolsConfig points hush at model and allows the tools that ask
// (hush run cannot ask anyone).
func fileToolsConfig(w *world, model *fakeModel, extra string) {
	w.config(fmt.Sprintf(`
[model]
provider = "openai"
base_url = %q
model = "fake"

[[rules]]
gate = "tool.run:edit"
subject = "edit"
decision = "allow"

[[rules]]
gate = "tool.run:write"
subject = "write"
decision = "allow"

[[rules]]
gate = "tool.run:http"
subject = "http"
decision = "allow"
%s`, model.URL(), extra))
}

// TestFileToolsThroughTheAgent: one fake-model turn calls every in-process
// tool through the real binary; each result reaches the model, the masked
// paths (.env.local, a symlink to the vault, the vault by its path) are
// refused by read and skipped by grep, and no canary reaches the model,
// the terminal or the transcript. AGENTS.md reaches the system prompt.
func TestFileToolsThroughTheAgent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(filepath.Join(w.project, "main.go"), mainGo)
	w.write(filepath.Join(w.project, "public.txt"), "canary-public is not a secret\n")
	w.write(filepath.Join(w.project, ".env.local"), "LOCAL_CANARY="+w.canaries["dotenv"]+"\n")
	if err := os.Symlink(filepath.Join(w.dataDir, "vault.env"), filepath.Join(w.project, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	w.write(filepath.Join(w.project, "AGENTS.md"), "Project rule marker-7c1e: run the tests with make check.\n")
	var mu sync.Mutex
	var seen []string
	site := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.String()+" "+string(body))
		mu.Unlock()
		rw.Header().Set("Content-Type", "text/html")
		fmt.Fprint(rw, "<h1>Site docs</h1><p>see <b>here</b></p>")
	}))
	defer site.Close()
	model := newFakeModel(t,
		step{calls: []fakeCall{{"glob", map[string]any{"pattern": "**/*.go"}}}},
		step{calls: []fakeCall{{"grep", map[string]any{"pattern": "canary|hello"}}}},
		step{calls: []fakeCall{{"read", map[string]any{"path": "main.go", "offset": 3, "limit": 2}}}},
		step{calls: []fakeCall{{"edit", map[string]any{"path": "main.go", "old": `println("hello")`, "new": `println("hello, hush")`}}}},
		step{calls: []fakeCall{{"write", map[string]any{"path": "docs/new.md", "content": "# New\n"}}}},
		step{calls: []fakeCall{
			{"read", map[string]any{"path": ".env.local"}},
			{"read", map[string]any{"path": "notes.txt"}},
			{"read", map[string]any{"path": filepath.Join(w.dataDir, "vault.env")}},
			{"grep", map[string]any{"pattern": "CANARY", "path": "notes.txt"}},
		}},
		step{calls: []fakeCall{{"http", map[string]any{"method": "POST", "url": site.URL + "/docs", "body": "q=${GRANTED}"}}}},
		step{text: "all done"},
	)
	fileToolsConfig(w, model, "\n[tools.http]\nallow_private = true\n")
	out, err := runHush(w, "run", "use every tool")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := model.Received()
	for _, want := range []string{
		`main.go\n[1 file matches **/*.go]`,
		`main.go:4:\tprintln(\"hello\")`, `public.txt:1:canary-public is not a secret`, `2 matching lines in 2 files; 2 masked paths skipped`,
		`     3\tfunc main() {\n     4\t\tprintln(\"hello\")\n[lines 3–4 of main.go (48 bytes); more follows: read on with offset=5]`,
		`[edited main.go (+1 −1 lines)]`,
		`[created docs/new.md (6 bytes, 1 lines)]`,
		"error: masked: secrets reach tools through the vault; see `hush vault import`",
		`(` + filepath.Join(w.project, "notes.txt") + ` leads there through a symlink); hush's file tools never touch it`,
		`# Site docs\n\nsee **here**`, `[HTTP 200]`,
		// The system prompt: AGENTS.md with its path, and the secrets by name.
		`## ` + filepath.Join(w.project, "AGENTS.md") + `\n\nProject rule marker-7c1e`,
		`Secrets the user has, by name: `,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the model was not sent %s", want)
		}
	}
	if strings.Count(got, "hush's data dir") < 2 {
		t.Errorf("the vault file was not refused by path and through the symlink:\n%s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(w.project, "main.go")); string(data) != strings.Replace(mainGo, `"hello"`, `"hello, hush"`, 1) {
		t.Errorf("main.go = %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(w.project, "docs", "new.md")); string(data) != "# New\n" {
		t.Errorf("docs/new.md = %q", data)
	}
	mu.Lock()
	if len(seen) != 1 || seen[0] != "POST /docs q=${GRANTED}" {
		t.Errorf("the site saw %q; want the ${GRANTED} literally", seen)
	}
	mu.Unlock()
	w.assertNoCanary("what the model was sent", got)
	w.assertNoCanary("hush run's output", out)
	w.assertNoCanary("the transcript", w.transcripts())
	// Secret names, never values, in the system prompt.
	if !strings.Contains(got, "GRANTED") || !strings.Contains(got, "VAULT_CANARY") {
		t.Errorf("the system prompt does not name the vault's secrets")
	}
}

// TestHTTPRefusesLoopbackByDefault: without [tools.http] allow_private, a
// request to 127.0.0.1 never leaves hush.
func TestHTTPRefusesLoopbackByDefault(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	hits := 0
	var mu sync.Mutex
	site := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	defer site.Close()
	model := newFakeModel(t, step{calls: []fakeCall{{"http", map[string]any{"url": site.URL}}}}, step{text: "ok"})
	fileToolsConfig(w, model, "")
	if out, err := runHush(w, "run", "fetch"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(model.Received(), "refused: 127.0.0.1 is a loopback, private or link-local address") {
		t.Errorf("no refusal sent to the model:\n%s", model.Received())
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 {
		t.Errorf("the loopback server was reached %d times", hits)
	}
}

// TestEditApprovalShowsTheDiff: in chat, an edit asks with its complete
// diff on screen. A file changed while the user reads the diff is not
// overwritten: the call fails and says so; the next edit, approved
// unchanged, is written.
func TestEditApprovalShowsTheDiff(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	target := filepath.Join(w.project, "main.go")
	w.write(target, mainGo)
	edit := map[string]any{"path": "main.go", "old": `println("hello")`, "new": `println("hello, hush")`}
	model := newFakeModel(t,
		step{calls: []fakeCall{{"edit", edit}}},
		step{calls: []fakeCall{{"edit", edit}}},
		step{text: "edit finished"},
	)
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n", model.URL()))
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("change the greeting\r")
	tm.expect("Allow once", 20*time.Second)
	// The session choices are per file and per directory.
	tm.send("\x1b[C")
	tm.expect("Allow for this session: "+target, 10*time.Second)
	tm.send("\x1b[C")
	tm.expect("Allow for this session: every file in "+w.project+"/", 10*time.Second)
	tm.send("\x1b[D\x1b[D")
	time.Sleep(200 * time.Millisecond)
	screen := tm.Screen()
	for _, want := range []string{"--- a/main.go", "+++ b/main.go", "@@ -1,5 +1,5 @@", "-\tprintln(\"hello\")", "+\tprintln(\"hello, hush\")", "Run edit?"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the approval does not show %q:\n%s", want, screen)
		}
	}
	if !strings.Contains(tm.Raw(), "\x1b[32m+\tprintln(\"hello, hush\")") {
		t.Errorf("the added line is not green")
	}
	// Someone edits the file while the user reads the diff.
	w.write(target, mainGo+"// changed meanwhile\n")
	tm.send("\r") // Allow once
	tm.expect("changed since the diff was shown", 20*time.Second)
	if data, _ := os.ReadFile(target); string(data) != mainGo+"// changed meanwhile\n" {
		t.Fatalf("the stale edit overwrote the file: %q", data)
	}
	// The model tries again; approved as shown, it is written.
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(tm.Screen(), "line diff; everything below is what will be written") < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	tm.send("\r")
	tm.expect("edit finished", 20*time.Second)
	if data, _ := os.ReadFile(target); string(data) != strings.Replace(mainGo, `"hello"`, `"hello, hush"`, 1)+"// changed meanwhile\n" {
		t.Errorf("the approved edit was not written: %q", data)
	}
	tm.quit()
}

// TestRunJSONPermissionCarriesTheDiff: in `hush run --json` the permission
// event of a write or edit names the file and carries the diff that was
// approved or denied, so CI can review what a run changed; every event
// still validates against docs/events.schema.json.
func TestRunJSONPermissionCarriesTheDiff(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(filepath.Join(w.project, "main.go"), mainGo)
	model := newFakeModel(t,
		step{calls: []fakeCall{{"edit", map[string]any{"path": "main.go", "old": `println("hello")`, "new": `println("hello, hush")`}}}},
		step{calls: []fakeCall{{"write", map[string]any{"path": "notes/denied.md", "content": "never written\n"}}}},
		step{text: "done"},
	)
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n"+
		"[[rules]]\ngate = \"tool.run:edit\"\nsubject = \"edit\"\ndecision = \"allow\"\n", model.URL()))
	evs, stderr, code := runJSON(t, w, "run", "--json", "edit and write")
	if code != 3 {
		t.Errorf("exit code %d, want 3 (a tool was denied)\n%s", code, stderr)
	}
	perms := ofType(evs, "permission")
	if len(perms) != 2 {
		t.Fatalf("permission events %v", perms)
	}
	edit, write := perms[0], perms[1]
	if edit.str("gate") != "tool.run:edit" || edit.str("decision") != "allow" || edit.str("path") != filepath.Join(w.project, "main.go") {
		t.Errorf("edit approval %v", edit)
	}
	for _, want := range []string{"--- a/main.go", "+++ b/main.go", "-\tprintln(\"hello\")", "+\tprintln(\"hello, hush\")"} {
		if !strings.Contains(edit.str("diff"), want) {
			t.Errorf("the edit's permission event lacks %q in its diff: %q", want, edit.str("diff"))
		}
	}
	if write.str("gate") != "tool.run:write" || write.str("decision") != "deny" || write.str("path") != filepath.Join(w.project, "notes", "denied.md") ||
		!strings.Contains(write.str("diff"), "+never written") {
		t.Errorf("write denial %v", write)
	}
	if _, err := os.Stat(filepath.Join(w.project, "notes", "denied.md")); err == nil {
		t.Errorf("the denied write happened")
	}
}

// TestLongDiffPagesInsideTheApproval: a write whose diff is longer than the
// terminal (300 lines on a 50-row PTY) is shown in a pager inside the
// approval, not dumped above it; paging brings the last line on screen
// before anything is chosen, and y still allows the write.
func TestLongDiffPagesInsideTheApproval(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var content strings.Builder
	for i := 1; i <= 299; i++ {
		fmt.Fprintf(&content, "line %03d of the generated file\n", i)
	}
	content.WriteString("last-line-marker-9f3 end of the file\n")
	model := newFakeModel(t,
		step{calls: []fakeCall{{"write", map[string]any{"path": "big.txt", "content": content.String()}}}},
		step{text: "write finished"},
	)
	w.config(fmt.Sprintf("[model]\nprovider = \"openai\"\nbase_url = %q\nmodel = \"fake\"\n", model.URL()))
	tm := startPTY(t, w, "chat")
	tm.expect("› ", 20*time.Second)
	tm.send("write the big file\r")
	tm.expect("Allow once", 20*time.Second)
	tm.expect("(more below)", 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(tm.Screen(), "last-line-marker-9f3") {
		t.Fatalf("the whole diff was printed above the prompt instead of paged:\n%s", tm.Screen())
	}
	if !strings.Contains(tm.Screen(), "+line 001 of the generated file") {
		t.Errorf("the pager does not start at the top of the diff:\n%s", tm.Screen())
	}
	// Page through with Space until the end: every page on the way is
	// shown. Each Space waits for its page: the chat draws a frame at most
	// every few ms, and two pages turned between two frames (a loaded
	// machine took two Spaces at once) leave one never drawn.
	lineNo := regexp.MustCompile(`\+line (\d{3}) of the generated file`)
	furthest := func() int {
		n := 0
		for _, m := range lineNo.FindAllStringSubmatch(tm.Screen(), -1) {
			if v, _ := strconv.Atoi(m[1]); v > n {
				n = v
			}
		}
		return n
	}
	for i := 0; i < 40 && !strings.Contains(tm.Screen(), "last-line-marker-9f3"); i++ {
		before := furthest()
		tm.send(" ")
		for deadline := time.Now().Add(10 * time.Second); furthest() == before && time.Now().Before(deadline) &&
			!strings.Contains(tm.Screen(), "last-line-marker-9f3"); {
			time.Sleep(20 * time.Millisecond)
		}
	}
	tm.expect("+last-line-marker-9f3 end of the file", 10*time.Second)
	tm.expect("(end of diff)", 10*time.Second)
	if !strings.Contains(tm.Screen(), "+line 150 of the generated file") {
		t.Errorf("paging skipped the middle of the diff")
	}
	if _, err := os.Stat(filepath.Join(w.project, "big.txt")); err == nil {
		t.Fatal("the file was written before anything was chosen")
	}
	tm.send("y")
	tm.expect("write finished", 20*time.Second)
	if data, _ := os.ReadFile(filepath.Join(w.project, "big.txt")); string(data) != content.String() {
		t.Errorf("big.txt holds %d bytes, want the approved content", len(data))
	}
	tm.quit()
}
