package wizard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hushcli/hush/config"
)

// CheckTimeout bounds the one request CheckKey makes.
const CheckTimeout = 10 * time.Second

// Check is the outcome of CheckKey.
type Check struct {
	// OK: the server answered and did not reject the key (a server without
	// a model list counts: the key could not be checked, but it is there).
	OK bool
	// Message is one sentence for the person; it never holds the key.
	Message string
	// Unreachable: no answer at all (refused, no such host, timeout), so
	// the URL is what to fix.
	Unreachable bool
	// Skipped: nothing was checked (a stored key hush would not send).
	Skipped bool
	// Rejected: the server refused the key, or wants one (HTTP 401, 403),
	// so the key is what to fix.
	Rejected bool
	// Models is the server's model list, when it sent one.
	Models []string
}

// CheckKey makes the cheapest request that proves the base URL answers and
// accepts the key: GET the model list (OpenAI-compatible {base}/models,
// Anthropic {base}/v1/models). Redirects are not followed, so the key is
// sent to the configured host and nowhere else.
func CheckKey(ctx context.Context, client *http.Client, provider, baseURL, key string) Check {
	base := strings.TrimRight(baseURL, "/")
	var endpoint string
	switch provider {
	case config.ProviderAnthropic:
		if base == "" {
			base = "https://api.anthropic.com"
		}
		endpoint = base + "/v1/models"
	default:
		if base == "" {
			base = "https://api.openai.com/v1"
		}
		endpoint = base + "/models"
	}
	shown := displayURL(endpoint)
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return Check{Message: fmt.Sprintf("%s is not a URL hush can request", shown)}
	}
	if key != "" {
		if provider == config.ProviderAnthropic {
			req.Header.Set("x-api-key", key)
		} else {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	if provider == config.ProviderAnthropic {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		return Check{Unreachable: true, Message: fmt.Sprintf("cannot reach %s: %s", shown, reason(err))}
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		models := modelIDs(body)
		listed := ""
		if len(models) > 0 {
			listed = fmt.Sprintf(" with %d model(s)", len(models))
		}
		if key == "" {
			return Check{OK: true, Models: models, Message: fmt.Sprintf("%s answered%s (no key sent)", shown, listed)}
		}
		return Check{OK: true, Models: models, Message: fmt.Sprintf("the key works: %s answered%s", shown, listed)}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		if key == "" {
			return Check{Rejected: true, Message: fmt.Sprintf("%s wants a key (HTTP %d)", shown, resp.StatusCode)}
		}
		return Check{Rejected: true, Message: fmt.Sprintf("%s rejected the key (HTTP %d)", shown, resp.StatusCode)}
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		return Check{OK: true, Message: fmt.Sprintf("%s answered, but has no model list (HTTP %d); the key was not checked", shown, resp.StatusCode)}
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return Check{Message: fmt.Sprintf("%s redirects elsewhere (HTTP %d); hush does not follow it with your key — check the base URL", shown, resp.StatusCode)}
	}
	return Check{Message: fmt.Sprintf("unexpected answer from %s: HTTP %d", shown, resp.StatusCode)}
}

// modelIDs reads a model list in the OpenAI and Anthropic shape,
// {"data":[{"id":"…"}, …]}; nil for anything else. Ids with control
// characters are dropped: they are shown in the terminal.
func modelIDs(body []byte) []string {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil {
		return nil
	}
	var out []string
	for _, m := range list.Data {
		if m.ID != "" && len(m.ID) <= 200 && sanitizeLine(m.ID) == m.ID && !strings.ContainsRune(m.ID, ' ') {
			out = append(out, m.ID)
		}
	}
	return out
}

// reason is the cause of a failed request without the request line (which
// repeats the URL) — e.g. "connection refused", "no such host".
func reason(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", CheckTimeout)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return "no such host"
		}
		return "name lookup failed"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		msg := op.Err.Error()
		// "connect: connection refused" → "connection refused"
		if _, after, ok := strings.Cut(msg, ": "); ok {
			msg = after
		}
		return msg
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// displayURL shows a URL without any credentials it may carry.
func displayURL(raw string) string {
	if raw == "" {
		return "the provider's public endpoint"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "the configured URL"
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}
