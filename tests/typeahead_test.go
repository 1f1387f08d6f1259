package tests

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Keys typed ahead of a form — while hush checks an answer between two
// of setup's forms, or while /model loads the server's list — are the
// form's: not echoed by the terminal's line mode, not typed into the
// chat's editor, and their Enter answers (in line mode it became a line
// feed, which answers nothing).

// TestSetupTypeAheadAnswersTheNextForm: the model's filter and Enter,
// typed while the key is being checked (the server takes 1.5 s), pick
// the second of the server's models.
func TestSetupTypeAheadAnswersTheNextForm(t *testing.T) {
	t.Parallel()
	for _, cols := range sizes {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.unsetEnv("OPENAI_API_KEY")
			key := canary("typedkey")
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/models" {
					http.NotFound(rw, r)
					return
				}
				time.Sleep(1500 * time.Millisecond)
				rw.Header().Set("Content-Type", "application/json")
				fmt.Fprint(rw, `{"object":"list","data":[{"id":"alpha-model","object":"model"},{"id":"beta-model","object":"model"}]}`)
			}))
			t.Cleanup(srv.Close)
			tm := startPTYSize(t, w, 40, cols, "setup")
			tm.expect("(1/5) Which kind of model server?", 20*time.Second)
			tm.send("\r")
			tm.expect("(2/5) Where is it?", 10*time.Second)
			tm.send("\x1b[B\x1b[B\x1b[B\r") // Another URL…
			tm.expect("(2/5) Base URL", 10*time.Second)
			tm.send(srv.URL + "/v1\r")
			tm.expect("(3/5) API key", 10*time.Second)
			time.Sleep(200 * time.Millisecond)
			tm.send(key + "\r")
			time.Sleep(500 * time.Millisecond) // the key is being checked
			tm.send("\x1b[B\x1b[Abeta\r")
			tm.expect("(5/5) Where should hush keep secrets?", 20*time.Second)
			tm.send("\r")
			if code := tm.wait(20 * time.Second); code != 0 {
				t.Fatalf("exit %d\n%s", code, tm.Screen())
			}
			configHas(t, w, "model", "beta-model")
			if raw := tm.Raw(); strings.Contains(raw, "^[") || strings.Contains(raw, key) {
				t.Errorf("the terminal echoed what was typed ahead (^[ or the key):\n%q", raw)
			}
		})
	}
}

// TestModelPickerTypeAhead: /model's filter and Enter, typed while the
// server's list loads (1.5 s), pick the model; nothing of it is left in
// the chat's editor or queued as a message.
func TestModelPickerTypeAhead(t *testing.T) {
	t.Parallel()
	for _, cols := range sizes {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			model := newFakeModel(t, step{text: "answered by b"})
			model.models = []string{"fake-a", "fake-b"}
			model.modelsDelay = 1500 * time.Millisecond
			chatConfig(w, model)
			tm := startPTYSize(t, w, 40, cols, "chat")
			tm.expect("› ", 20*time.Second)
			tm.send("/model\r")
			time.Sleep(500 * time.Millisecond) // the list is loading
			tm.send("\x1b[B\x1b[Afake-b\r")
			tm.expect("model: fake-b (from the next turn)", 20*time.Second)
			tm.send("hello\r")
			tm.expect("answered by b", 20*time.Second)
			tm.quit()
			if got := model.Received(); !strings.Contains(got, `"model":"fake-b"`) || strings.Contains(got, "fake-bhello") {
				t.Errorf("the next request was not hello to fake-b:\n%s", got)
			}
			if sc := tm.Screen(); strings.Contains(sc, "queued") || strings.Contains(tm.Raw(), "^[") {
				t.Errorf("what was typed ahead went to the chat or was echoed:\n%s", sc)
			}
		})
	}
}
