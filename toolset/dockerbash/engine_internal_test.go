package dockerbash

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

func frame(stream byte, payload string) []byte {
	h := make([]byte, 8, 8+len(payload))
	h[0] = stream
	binary.BigEndian.PutUint32(h[4:], uint32(len(payload)))
	return append(h, payload...)
}

func TestDemux(t *testing.T) {
	t.Parallel()
	cat := func(frames ...[]byte) io.Reader { return bytes.NewReader(bytes.Join(frames, nil)) }
	cases := []struct {
		name    string
		in      io.Reader
		want    string
		wantErr string
	}{
		{"stdout and stderr in order", cat(frame(1, "out 1\n"), frame(2, "err 1\n"), frame(1, ""), frame(1, "out 2\n")), "out 1\nerr 1\nout 2\n", ""},
		{"empty stream", cat(), "", ""},
		{"engine error stream", cat(frame(1, "partial\n"), frame(3, "cannot attach\nmore")), "partial\n", "the engine reported: cannot attach"},
		{"cut inside a header", cat(frame(1, "a"), []byte{1, 0, 0}), "a", "unexpected EOF"},
		{"cut inside a payload", cat(frame(1, "abc")[:9]), "a", "EOF"},
		{"unknown stream", cat(frame(9, "x")), "", "malformed (stream 9)"},
	}
	for _, c := range cases {
		var out bytes.Buffer
		err := demux(&out, c.in)
		if out.String() != c.want {
			t.Errorf("%s: out = %q, want %q", c.name, out.String(), c.want)
		}
		if (err == nil) != (c.wantErr == "") || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.wantErr)
		}
	}
}

func TestOlderAPI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"1.41", "1.47", true}, {"1.47", "1.41", false}, {"1.9", "1.30", true}, {"1.30", "1.30", false}, {"2.0", "1.47", false},
	} {
		if got := olderAPI(c.a, c.b); got != c.want {
			t.Errorf("olderAPI(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

func TestNewClientAddresses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		host, base, wantErr string
	}{
		{"", "http://docker", ""},
		{"unix:///run/user/1000/docker.sock", "http://docker", ""},
		{"tcp://10.0.0.2:2375", "http://10.0.0.2:2375", ""},
		{"https://engine.example:2376", "https://engine.example:2376", ""},
		{"ssh://me@host", "", "uses ssh://, which hush does not support"},
		{"/var/run/docker.sock", "", "is not an engine address"},
		{"tcp://", "", "is not an engine address"},
		{"tcp://u:hunter2@host:2375/extra", "", "DOCKER_HOST=tcp://u:xxxxx@host:2375/extra is not an engine address"},
	}
	for _, c := range cases {
		e, err := NewClient(map[string]string{envHost: c.host})
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%q: err = %v, want %q (and no password)", c.host, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", c.host, err)
		case e.base != c.base:
			t.Errorf("%q: base %q, want %q", c.host, e.base, c.base)
		}
	}
}

// fakeEngine answers on a unix socket like an engine of API version v.
func fakeEngine(t *testing.T, v string, h http.HandlerFunc) map[string]string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v != "" {
			w.Header().Set("Api-Version", v)
		}
		if r.URL.Path == "/_ping" {
			_, _ = io.WriteString(w, "OK")
			return
		}
		h(w, r)
	}))
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return map[string]string{envHost: "unix://" + sock}
}

// TestEngineVersionAndErrors: requests go to the lower of the engine's API
// version and the newest this client speaks (or DOCKER_API_VERSION), an
// engine too old is one sentence, and a refusal carries the engine's own
// message, with 404 told apart.
func TestEngineVersionAndErrors(t *testing.T) {
	t.Parallel()
	var paths []string
	handler := func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"message":"No such image: hush-test/absent:never"}`)
	}
	ctx := context.Background()
	for _, c := range []struct {
		engine, pinned, wantPath string
	}{
		{"1.41", "", "GET /v1.41/images/hush-test/absent:never/json"},
		{"1.52", "", "GET /v" + maxAPIVersion + "/images/hush-test/absent:never/json"},
		{"1.52", "1.43", "GET /v1.43/images/hush-test/absent:never/json"},
	} {
		paths = nil
		ambient := fakeEngine(t, c.engine, handler)
		if c.pinned != "" {
			ambient[envAPIVersion] = c.pinned
		}
		e, err := NewClient(ambient)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		err = e.ImageInspect(ctx, "hush-test/absent:never")
		if !isNotFound(err) || err.Error() != "No such image: hush-test/absent:never" {
			t.Errorf("engine %s: err = %v, want the engine's 404 message", c.engine, err)
		}
		if len(paths) != 1 || paths[0] != c.wantPath {
			t.Errorf("engine %s pinned %q: requests %q, want %q", c.engine, c.pinned, paths, c.wantPath)
		}
		e.Close()
	}

	old, err := NewClient(fakeEngine(t, "1.29", handler))
	if err != nil {
		t.Fatal(err)
	}
	if err := ping(ctx, old, nil); err == nil || err.Error() != "the engine speaks API 1.29, older than 1.30, which hush needs; upgrade Docker" {
		t.Errorf("old engine: %v", err)
	}
	if err := old.ImageInspect(ctx, "x"); err == nil || errors.Is(err, ErrNoEngine) {
		t.Errorf("a request before a successful Ping: %v", err)
	}
}
