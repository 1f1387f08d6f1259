package executor

import (
	"testing"

	"github.com/hushcli/hush/executor/provider"
)

type usageSink struct {
	nopEvents
	got     []provider.Usage
	notices []string
}

func (u *usageSink) Usage(x provider.Usage) { u.got = append(u.got, x) }
func (u *usageSink) Notice(s string)        { u.notices = append(u.notices, s) }

type nopEvents struct{}

func (nopEvents) Text(string)                             {}
func (nopEvents) ToolStart(provider.ToolCall)             {}
func (nopEvents) ToolOutput(provider.ToolCall, []byte)    {}
func (nopEvents) ToolEnd(provider.ToolCall, string, bool) {}

// TestTeeForwardsUsageAndNotices: a second sink (telemetry) does not hide
// the token counts and connection notes from the first (the chat).
func TestTeeForwardsUsageAndNotices(t *testing.T) {
	t.Parallel()
	chat := &usageSink{}
	ev := Tee(chat, nopEvents{})
	ue, ok := ev.(UsageEvents)
	if !ok {
		t.Fatal("the tee of two sinks has no Usage")
	}
	ue.Usage(provider.Usage{InputTokens: 120, OutputTokens: 7})
	ev.(interface{ Notice(string) }).Notice("openai: retrying (2/3) after HTTP 503")
	if len(chat.got) != 1 || chat.got[0].InputTokens != 120 || chat.got[0].OutputTokens != 7 {
		t.Errorf("the chat got usage %+v, want one report of 120 in / 7 out", chat.got)
	}
	if len(chat.notices) != 1 || chat.notices[0] != "openai: retrying (2/3) after HTTP 503" {
		t.Errorf("the chat got notices %q", chat.notices)
	}
}
