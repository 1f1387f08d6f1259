package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type discardCloser struct{}

func (discardCloser) Write(p []byte) (int, error) { return len(p), nil }
func (discardCloser) Close() error                { return nil }

// TestSDKFlattensTheDecoderError is why garbage reads text: a server that
// answers the handshake with something that is not JSON-RPC reaches hush
// as the SDK's "client is closing: invalid character …", the decoder's
// *json.SyntaxError formatted with %v and gone from the chain. If this
// fails because errors.As now finds it, the SDK keeps the type: garbage's
// text fallback (garbageSigns) can go.
func TestSDKFlattensTheDecoderError(t *testing.T) {
	r, w := io.Pipe()
	go func() {
		_, _ = w.Write([]byte("Welcome to the server\n"))
		time.Sleep(200 * time.Millisecond)
		_ = w.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(ctx, &sdk.IOTransport{Reader: r, Writer: discardCloser{}}, nil)
	if err == nil {
		t.Fatal("the handshake with a server that wrote garbage succeeded")
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		t.Errorf("the SDK now keeps *json.SyntaxError in the handshake's error (%v): drop garbage's text fallback", err)
	}
	if got, want := garbage(err), "invalid character 'W' looking for beginning of value"; got != want {
		t.Errorf("garbage(%q) = %q, want %q", err, got, want)
	}
}

// TestGarbageFindsTheDecoderErrorByType: where the chain holds the
// decoder's error, garbage finds it whatever the surrounding text says;
// an error that is neither type nor sign is not garbage.
func TestGarbageFindsTheDecoderErrorByType(t *testing.T) {
	var v struct{ A int }
	syntaxErr := json.Unmarshal([]byte("<html>"), &v)
	typeErr := json.Unmarshal([]byte(`{"A":"x"}`), &v)
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.Join(errors.New("calling \"tools/call\""), syntaxErr), "invalid character '<' looking for beginning of value"},
		{errors.Join(errors.New("reading"), typeErr), "cannot unmarshal string into Go struct field .A of type int"},
		{errors.New("connection reset by peer"), ""},
		{nil, ""},
	} {
		if got := garbage(c.err); got != c.want {
			t.Errorf("garbage(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
