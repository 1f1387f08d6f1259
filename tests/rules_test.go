package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sizes are the terminal widths every test here runs at.
var sizes = []uint16{60, 140}

// TestProjectRulesLastAndFitCompounds: p at the approval of a pipeline
// saves one rule per command under the project in config.toml; after a
// restart, a compound of those commands runs without a prompt, and one
// with a $(…) or a part no rule covers is asked about.
func TestProjectRulesLastAndFitCompounds(t *testing.T) {
	t.Parallel()
	for _, cols := range sizes {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			first := newFakeModel(t,
				step{calls: []fakeCall{{"bash", map[string]any{"script": "echo alpha one 2>&1 | tail -n 1"}}}},
				step{text: "first done"},
			)
			chatConfig(w, first)
			tm := startPTYSize(t, w, 40, cols, "chat")
			tm.expect("› ", 20*time.Second)
			tm.send("run it\r")
			tm.expect("[n] Deny", 20*time.Second)
			screen := strings.Join(strings.Fields(tm.Screen()), " ")
			if !strings.Contains(screen, `save command = "echo alpha:*", command = "tail:*" to your config.toml`) {
				t.Fatalf("the rules to be saved are not shown before saving:\n%s", tm.Screen())
			}
			tm.send("p")
			tm.expect("first done", 20*time.Second)
			tm.quit()
			cfg, _ := os.ReadFile(filepath.Join(w.configDir, "config.toml"))
			if !strings.Contains(string(cfg), `command = "echo alpha:*"`) || !strings.Contains(string(cfg), `command = "tail:*"`) ||
				!strings.Contains(string(cfg), "[[projects.") {
				t.Fatalf("config.toml after p:\n%s", cfg)
			}

			// A new hush: the saved rules are there.
			second := newFakeModel(t,
				step{calls: []fakeCall{{"bash", map[string]any{"script": "echo alpha two | tail -n 1 && echo alpha three"}}}},
				step{calls: []fakeCall{{"bash", map[string]any{"script": "echo alpha $(echo four) | tail -n 1"}}}},
				step{calls: []fakeCall{{"bash", map[string]any{"script": "echo alpha five | wc -l"}}}},
				step{text: "second done"},
			)
			cfgText := strings.Replace(string(cfg), first.URL(), second.URL(), 1)
			w.config(cfgText)
			tm = startPTYSize(t, w, 40, cols, "chat")
			tm.expect("› ", 20*time.Second)
			tm.send("again\r")
			tm.expect("[n] Deny", 30*time.Second)
			if got := tm.Screen(); !strings.Contains(got, "four") {
				t.Fatalf("the first prompt is not the $(…) command:\n%s", got)
			}
			tm.send("n")
			tm.expect("wc -l", 30*time.Second)
			tm.expect("[n] Deny", 30*time.Second)
			tm.send("n")
			tm.expect("second done", 30*time.Second)
			tm.quit()
			sent := second.Received()
			if !strings.Contains(sent, "alpha two") || !strings.Contains(sent, "alpha three") {
				t.Errorf("the compound allowed by the saved rules did not run:\n%s", sent)
			}
			if strings.Count(sent, "the user denied this bash call") < 2 {
				t.Errorf("the $(…) and the uncovered command were not both asked and denied:\n%s", sent)
			}
			if strings.Contains(sent, `"content":"four`) || strings.Contains(sent, `"content":"1\n`) {
				t.Errorf("a denied command ran:\n%s", sent)
			}
		})
	}
}

// TestEscAtApprovalEndsTheTurn: Esc at an approval denies the call, runs
// nothing more and sends the model no further request; the prompt is back
// in the editor. Its control: n at the same approval lets the turn go on.
func TestEscAtApprovalEndsTheTurn(t *testing.T) {
	t.Parallel()
	for _, cols := range sizes {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			for _, key := range []string{"\x1b", "n"} {
				w := newWorld(t)
				model := newFakeModel(t,
					step{calls: []fakeCall{{"bash", map[string]any{"script": "touch ran"}}}},
					step{text: "the turn went on"},
				)
				chatConfig(w, model)
				tm := startPTYSize(t, w, 40, cols, "chat")
				tm.expect("› ", 20*time.Second)
				tm.send("make the file\r")
				tm.expect("[n] Deny", 20*time.Second)
				tm.send(key)
				if key == "n" {
					tm.expect("the turn went on", 20*time.Second)
					if model.Requests() != 2 {
						t.Errorf("n: %d requests, want 2", model.Requests())
					}
					tm.quit()
					continue
				}
				tm.expect("turn stopped at the approval", 20*time.Second)
				time.Sleep(time.Second) // a further request would have been sent by now
				if n := model.Requests(); n != 1 {
					t.Errorf("Esc: the model got %d requests, want 1", n)
				}
				if _, err := os.Stat(filepath.Join(w.project, "ran")); err == nil {
					t.Error("Esc: the command ran")
				}
				lines := strings.Split(strings.TrimRight(tm.Screen(), "\n "), "\n")
				editor := ""
				for i := len(lines) - 1; i >= 0; i-- {
					if strings.Contains(lines[i], "› ") {
						editor = lines[i]
						break
					}
				}
				if !strings.Contains(editor, "make the file") {
					t.Errorf("Esc: the prompt is not back in the editor:\n%s", tm.Screen())
				}
				tm.send("\x15") // Ctrl-U empties the editor, so Ctrl-D quits
				tm.quit()
			}
		})
	}
}

// TestHTTPApprovalShowsHeadersAndBody: the http approval shows the method,
// the URL, each header (a ${NAME} as the name, never its value) and the
// body's first 20 lines; s names the host.
func TestHTTPApprovalShowsHeadersAndBody(t *testing.T) {
	t.Parallel()
	for _, cols := range sizes {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			var body strings.Builder
			for i := 1; i <= 25; i++ {
				fmt.Fprintf(&body, "row%02d\n", i)
			}
			model := newFakeModel(t,
				step{calls: []fakeCall{{"http", map[string]any{"method": "POST", "url": "https://api.example.test/v1/items",
					"headers": map[string]string{"Authorization": "Bearer ${GRANTED}", "X-Trace": "t-42"}, "body": body.String()}}}},
				step{text: "http done"},
			)
			chatConfig(w, model)
			tm := startPTYSize(t, w, 60, cols, "chat")
			tm.expect("› ", 20*time.Second)
			tm.send("post it\r")
			tm.expect("[n] Deny", 20*time.Second)
			screen := tm.Screen()
			flat := strings.Join(strings.Fields(screen), " ")
			for _, want := range []string{"POST https://api.example.test/v1/items", "Authorization: Bearer ${GRANTED}", "X-Trace: t-42",
				"row01", "row20", "5 more lines", "Allow http requests to api.example.test for this session"} {
				if !strings.Contains(flat, want) {
					t.Errorf("the approval lacks %q:\n%s", want, screen)
				}
			}
			if strings.Contains(screen, "│ row21") {
				t.Errorf("more than 20 body lines before v:\n%s", screen)
			}
			tm.send("v")
			tm.expect("whole body (25 lines)", 10*time.Second)
			tm.expect("│ row25", 10*time.Second)
			tm.send("n")
			tm.expect("http done", 20*time.Second)
			tm.quit()
			w.assertNoCanary("the screen", tm.Raw())
			if strings.Contains(tm.Raw(), w.granted) {
				t.Error("the granted value reached the screen")
			}
		})
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colourSGR returns the SGR sequences in raw that set a colour (30–49,
// 90–107, 38;…, 48;…) or reverse video (7).
func colourSGR(raw string) []string {
	var out []string
	for _, m := range sgr.FindAllStringSubmatch(raw, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			var n int
			if _, err := fmt.Sscan(p, &n); err != nil {
				continue
			}
			if n == 7 || (n >= 30 && n <= 49) || (n >= 90 && n <= 107) {
				out = append(out, m[0])
				break
			}
		}
	}
	return out
}

// TestDiffBidiEscapedAndNoColor: a write whose content holds U+202E shows
// the diff with \u202e, and the raw bytes never carry the character; with
// NO_COLOR=1 the raw output has no colour or reverse-video SGR at all. The
// control: the same prompt without NO_COLOR is coloured.
func TestDiffBidiEscapedAndNoColor(t *testing.T) {
	t.Parallel()
	for _, cols := range sizes {
		for _, noColor := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d/no_color=%t", cols, noColor), func(t *testing.T) {
				t.Parallel()
				w := newWorld(t)
				if noColor {
					w.env = append(w.env, "NO_COLOR=1")
				}
				model := newFakeModel(t,
					step{calls: []fakeCall{{"write", map[string]any{"path": "notes.txt", "content": "user: admin\u202e // check\nsecond line\n"}}}},
					step{text: "WRITE-FINISHED"},
				)
				chatConfig(w, model)
				tm := startPTYSize(t, w, 40, cols, "chat")
				tm.expect("› ", 20*time.Second)
				tm.send("write it\r")
				tm.expect("[n] Deny", 20*time.Second)
				tm.send("y")
				tm.expect("WRITE-FINISHED", 20*time.Second)
				tm.quit()
				raw := tm.Raw()
				if strings.Contains(raw, "\u202e") {
					t.Errorf("U+202E reached the terminal raw")
				}
				if !strings.Contains(raw, `admin\u202e // check`) {
					t.Errorf("the diff does not show the character escaped:\n%q", tm.Screen())
				}
				got := colourSGR(raw)
				if noColor && len(got) > 0 {
					t.Errorf("NO_COLOR=1, yet colour SGR sequences: %q", got[:min(len(got), 10)])
				}
				if !noColor && !strings.Contains(raw, "\x1b[32m+user: admin") {
					t.Errorf("control: the coloured diff is missing: %q", got)
				}
			})
		}
	}
}
