package tests

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hushcli/hush/toolset/mcp/oauthtest"
)

var authorizeURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/authorize\?[^\s]+`)

const oauthRule = "[[rules]]\ngate = \"vault.read:HUSH_MCP_OAUTH_LINEAR\"\nsubject = \"mcp:linear\"\ndecision = \"allow\"\n"

func (w *world) vaultFile() string {
	b, err := os.ReadFile(filepath.Join(w.dataDir, "vault.env"))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// TestOAuthMCPLoginThenRun: `hush mcp login linear` at a terminal shows
// the authorization URL, the "browser" follows it back to hush's loopback
// listener, and the tokens land in the vault file (raw bytes) — but on no
// screen, in no audit line, transcript or event. `hush run` then uses them
// through the gate without a new sign-in; denied, the server is not
// contacted and the run exits 3.
func TestOAuthMCPLoginThenRun(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newWorld(t)
	mcpConf := fmt.Sprintf("[mcp.linear]\nurl = %q\noauth = true\n", srv.URL)
	w.config(mcpConf)

	tm := startPTY(t, w, "mcp", "login", "linear")
	tm.expect("waiting up to 5m0s for the browser", 30*time.Second)
	link := authorizeURL.FindString(tm.Screen())
	if link == "" {
		t.Fatalf("no authorization URL on the screen:\n%s", tm.Screen())
	}
	resp, err := http.Get(link) // the browser: to the AS, then back to hush
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the loopback redirect answered %d", resp.StatusCode)
	}
	if code := tm.wait(30 * time.Second); code != 0 {
		t.Fatalf("login exit %d:\n%s", code, tm.Screen())
	}
	screen := tm.Screen()
	t.Logf("hush mcp login, as shown:\n%s", screen)
	for _, want := range []string{`mcp server "linear" asks you to sign in (OAuth)`, "its tokens are in the vault as HUSH_MCP_OAUTH_LINEAR",
		`mcp server "linear" is connected (1 tool)`, `gate = "vault.read:HUSH_MCP_OAUTH_LINEAR"`} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q", want)
		}
	}
	issued := srv.Issued()
	if len(issued) != 2 {
		t.Fatalf("%d tokens issued", len(issued))
	}
	raw := w.vaultFile()
	if !strings.Contains(raw, "HUSH_MCP_OAUTH_LINEAR=") || !strings.Contains(raw, issued[0]) || !strings.Contains(raw, issued[1]) {
		t.Fatal("positive control: the tokens are not in the vault file")
	}
	w.canaries["oauth-access"], w.canaries["oauth-refresh"] = issued[0], issued[1]
	w.assertNoCanary("the login screen", tm.Raw())

	t.Run("run uses the stored tokens", func(t *testing.T) {
		model := newFakeModel(t, step{calls: []fakeCall{{"mcp__linear__whoami", map[string]any{}}}}, step{text: "asked"})
		w.fakeModelConfig(model, oauthRule+"[[rules]]\ngate = \"tool.run:mcp__linear__*\"\nsubject = \"*\"\ndecision = \"allow\"\n"+mcpConf)
		before := len(srv.Bearers())
		evs, stderr, code := runJSON(t, w, "run", "--json", "who am i")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		f := ofType(evs, "tool.finished")
		if len(f) != 1 || f[0].str("status") != "ok" || !strings.Contains(f[0].str("result"), oauthtest.ToolText) {
			t.Fatalf("tool.finished %v\n%s", f, stderr)
		}
		if srv.Authorizes() != 1 {
			t.Errorf("%d sign-ins, want the login's only", srv.Authorizes())
		}
		for _, b := range srv.Bearers()[before:] {
			if b != issued[0] {
				t.Fatalf("the run sent bearer %q, want the stored access token", b)
			}
		}
		if !strings.Contains(w.audit(), `"tool":"mcp:linear","gate":"vault.read:HUSH_MCP_OAUTH_LINEAR","decision":"allow"`) {
			t.Errorf("the audit log does not name the read:\n%s", w.audit())
		}
		w.assertNoCanary("the transcript", w.transcripts())
		w.assertNoCanary("the audit log", w.audit())
	})

	t.Run("denied read: not contacted, exit 3", func(t *testing.T) {
		model := newFakeModel(t, step{text: "fine"})
		w.fakeModelConfig(model, mcpConf) // no rule: the read is denied in hush run
		before := len(srv.Bearers())
		evs, stderr, code := runJSON(t, w, "run", "--json", "hi")
		if code != 3 {
			t.Fatalf("exit %d, want 3: %s", code, stderr)
		}
		if n := len(srv.Bearers()) - before; n != 0 {
			t.Fatalf("the denied server was sent %d request(s)", n)
		}
		if p := ofType(evs, "permission"); len(p) != 1 || p[0].str("gate") != "vault.read:HUSH_MCP_OAUTH_LINEAR" || p[0].str("decision") != "deny" {
			t.Errorf("permission events %v", p)
		}
		w.assertNoCanary("the audit log", w.audit())
	})
}

// TestOAuthMCPRunWithoutSignIn: in hush run, an OAuth server nobody signed
// in to is not contacted; one sentence says to run hush mcp login and that
// its tools are unavailable, and the run exits 3, as when the gate refuses
// a server's start-up secret: in CI the turn ran without tools it was
// configured with.
func TestOAuthMCPRunWithoutSignIn(t *testing.T) {
	t.Parallel()
	srv := oauthtest.New(t)
	w := newWorld(t)
	model := newFakeModel(t, step{text: "fine"})
	w.fakeModelConfig(model, fmt.Sprintf("[mcp.linear]\nurl = %q\noauth = true\n", srv.URL))
	const sentence = "mcp server \"linear\" needs `hush mcp login linear` at a terminal: it signs in with OAuth and no sign-in is stored, so its tools are unavailable"
	evs, stderr, code := runJSON(t, w, "run", "--json", "hi")
	if code != 3 {
		t.Errorf("exit %d, want 3: %s", code, stderr)
	}
	if !strings.Contains(stderr, "hush: "+sentence+"\n") {
		t.Errorf("stderr %q, want %q", stderr, sentence)
	}
	if last := evs[len(evs)-1]; last.str("type") != "error" || last.str("kind") != "denied" || !strings.Contains(last.str("message"), sentence) {
		t.Errorf("last event %v, want a denied error that names the sign-in", last)
	}
	if got := ofType(evs, "turn.completed"); len(got) != 1 {
		t.Errorf("the turn did not run to its end: %v", got)
	}
	// Without --json, the same sentence and the same exit status.
	out, err := runHush(w, "run", "hi")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(out, sentence) {
		t.Errorf("hush run (%v):\n%s", err, out)
	}
	if n := len(srv.Bearers()); n != 0 || srv.Authorizes() != 0 {
		t.Errorf("%d request(s), %d sign-ins", n, srv.Authorizes())
	}
	out, _ = runHush(w, "mcp", "list")
	if !strings.Contains(out, "needs sign-in") || !strings.Contains(out, srv.URL+" (http, oauth)") {
		t.Errorf("mcp list:\n%s", out)
	}
	// Without a terminal, login says it needs one.
	out, err = runHush(w, "mcp", "login", "linear")
	if err == nil || !strings.Contains(out, "hush mcp login needs a terminal") {
		t.Errorf("login without a terminal (%v):\n%s", err, out)
	}
}
