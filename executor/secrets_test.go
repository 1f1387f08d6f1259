package executor_test

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hushcli/hush/executor"
	"github.com/hushcli/hush/executor/provider"
)

// TestRedactorFollowsTheVaultBetweenTurns: the agent reuses its redactor
// while the vault is unchanged, so it must notice every change — a
// secret stored, changed or removed between turns — on the next turn. A
// value printed by a tool before it is stored is the positive control:
// it shows the output really carries the value.
func TestRedactorFollowsTheVaultBetweenTurns(t *testing.T) {
	t.Parallel()
	const first, second = "canary-later-value-11", "canary-rotated-value-12"
	script := "echo a=" + first + " b=" + second
	f := newFixture(t, allowBash,
		provider.Response{ToolCalls: []provider.ToolCall{call("c1", script, "")}}, provider.Response{Text: "1"},
		provider.Response{ToolCalls: []provider.ToolCall{call("c2", script, "")}}, provider.Response{Text: "2"},
		provider.Response{ToolCalls: []provider.ToolCall{call("c3", script, "")}}, provider.Response{Text: "3"},
		provider.Response{ToolCalls: []provider.ToolCall{call("c4", script, "")}}, provider.Response{Text: "4"},
	)
	var mu sync.Mutex
	vault := map[string]string{"STORED": "canary-stored-value-2"}
	f.agent.Secrets = func() (map[string]string, error) {
		mu.Lock()
		defer mu.Unlock()
		return vault, nil // the same map every time, changed in place: the worst case for a cache
	}
	set := func(change func(map[string]string)) {
		mu.Lock()
		defer mu.Unlock()
		change(vault)
	}
	tests := []struct {
		name   string
		change func(map[string]string)
		want   string
	}{
		{"not yet stored", func(map[string]string) {}, "a=" + first + " b=" + second},
		{"stored", func(v map[string]string) { v["LATER"] = first }, "a=[REDACTED:LATER] b=" + second},
		{"rotated", func(v map[string]string) { v["LATER"] = second }, "a=" + first + " b=[REDACTED:LATER]"},
		{"removed", func(v map[string]string) { maps.DeleteFunc(v, func(k, _ string) bool { return k == "LATER" }) }, "a=" + first + " b=" + second},
	}
	for _, tt := range tests { // in order: each turn sees the vault the last one left
		set(tt.change)
		added, err := f.agent.Turn(context.Background(), nil, "go")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := added[2].Text; !strings.HasPrefix(got, tt.want+"\n") {
			t.Errorf("%s: tool result %q, want it to start %q", tt.name, got, tt.want)
		}
	}
}

// TestVersionedSecretsSkipTheVault: with SecretsVersion set, a turn at an
// unchanged version reads no secrets and keeps its redactor, and a new
// version brings the vault's new contents into the very next turn.
func TestVersionedSecretsSkipTheVault(t *testing.T) {
	t.Parallel()
	const first, second = "canary-versioned-value-21", "canary-versioned-value-22"
	script := "echo a=" + first + " b=" + second
	var steps []provider.Response
	for i := range 4 {
		steps = append(steps, provider.Response{ToolCalls: []provider.ToolCall{call("c"+strconv.Itoa(i), script, "")}}, provider.Response{Text: "ok"})
	}
	f := newFixture(t, allowBash, steps...)
	var (
		mu      sync.Mutex
		vault   = map[string]string{"LATER": first}
		version = uint64(1)
		reads   int
		verErr  error
	)
	f.agent.Secrets = func() (map[string]string, error) {
		mu.Lock()
		defer mu.Unlock()
		reads++
		return maps.Clone(vault), nil
	}
	f.agent.SecretsVersion = func() (uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		return version, verErr
	}
	tests := []struct {
		name      string
		change    func()
		want      string
		wantReads int
	}{
		{"first turn reads", func() {}, "a=[REDACTED:LATER] b=" + second, 1},
		{"same version: no read", func() {}, "a=[REDACTED:LATER] b=" + second, 1},
		{"new version: read", func() { vault["LATER"] = second; version++ }, "a=" + first + " b=[REDACTED:LATER]", 2},
		{"no version to be had: read", func() { vault["LATER"] = first; verErr = errors.New("cannot tell") }, "a=[REDACTED:LATER] b=" + second, 3},
	}
	for _, tt := range tests {
		mu.Lock()
		tt.change()
		mu.Unlock()
		added, err := f.agent.Turn(context.Background(), nil, "go")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := added[2].Text; !strings.HasPrefix(got, tt.want+"\n") {
			t.Errorf("%s: tool result %q, want it to start %q", tt.name, got, tt.want)
		}
		mu.Lock()
		if reads != tt.wantReads {
			t.Errorf("%s: %d vault reads so far, want %d", tt.name, reads, tt.wantReads)
		}
		mu.Unlock()
	}
}

// TestSecretCacheSharesOneSnapshot: everyone asking at the same vault
// version gets the very same redactor and secret set; a secret stored
// after that is in the next snapshot, for all of them.
func TestSecretCacheSharesOneSnapshot(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	vault := map[string]string{"A_TOKEN": "canary-cache-a-31"}
	version := uint64(1)
	c := executor.NewSecretCache(func() (map[string]string, error) {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(vault), nil
	}, func() (uint64, error) {
		mu.Lock()
		defer mu.Unlock()
		return version, nil
	})
	turn, err := c.Current()
	if err != nil {
		t.Fatal(err)
	}
	background, _ := c.Current()
	mcpServer, _ := c.Current()
	if turn.Redactor != background.Redactor || turn.Redactor != mcpServer.Redactor || turn.Secrets != mcpServer.Secrets {
		t.Fatal("callers at one version got different snapshots")
	}
	if got := turn.Redactor.String("x canary-cache-b-32"); got != "x canary-cache-b-32" {
		t.Fatalf("positive control: an unstored value was changed: %q", got)
	}
	mu.Lock()
	vault["B_TOKEN"], version = "canary-cache-b-32", 2
	mu.Unlock()
	next, err := c.Current()
	if err != nil {
		t.Fatal(err)
	}
	if next.Redactor == turn.Redactor {
		t.Fatal("a new vault version kept the old snapshot")
	}
	if got := next.Redactor.String("x canary-cache-b-32"); got != "x [REDACTED:B_TOKEN]" {
		t.Errorf("stored mid-session: %q, want it scrubbed", got)
	}
	if !next.Secrets.HasValue("canary-cache-b-32") {
		t.Error("the new snapshot's secret set lacks the stored value")
	}
	var none *executor.SecretCache
	if snap, err := none.Current(); err != nil || snap.Redactor.String("canary-cache-a-31") != "canary-cache-a-31" {
		t.Errorf("nil cache: %v", err)
	}
}
