package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestApprovalCommandKeepsItsGutterAt60Columns: a 260-character command
// on a 60- and a 140-column terminal is wrapped by hush to the width, each
// row behind the │ gutter (the continuation rows indented), none starting
// at the left edge, none wider than the screen; the rows put together are
// the whole command.
func TestApprovalCommandKeepsItsGutterAt60Columns(t *testing.T) {
	t.Parallel()
	long := "echo gutter-start"
	for i := 0; len(long) < 240; i++ {
		long += " && echo step-" + strings.Repeat(string(rune('a'+i%26)), 6)
	}
	long += " && echo gutter-end"
	for _, cols := range sizes {
		t.Run(fmt.Sprint(cols), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			model := newFakeModel(t, step{calls: []fakeCall{{"bash", map[string]any{"script": long}}}}, step{text: "long done"})
			chatConfig(w, model)
			tm := startPTYSize(t, w, 40, cols, "chat")
			tm.expect("› ", 20*time.Second)
			tm.send("run it\r")
			tm.expect("[n] Deny", 20*time.Second)
			rows := commandRows(t, tm.Screen())
			var joined strings.Builder
			for i, r := range rows {
				if !strings.HasPrefix(r, "  │ ") {
					t.Errorf("row %d of the command is not behind the gutter: %q", i, r)
				}
				if i > 0 && !strings.HasPrefix(r, "  │   ") {
					t.Errorf("continuation row %d is not indented: %q", i, r)
				}
				if n := len([]rune(r)); n > int(cols) {
					t.Errorf("row %d is %d columns wide at %d: %q", i, n, cols, r)
				}
				joined.WriteString(strings.TrimPrefix(strings.TrimPrefix(r, "  │ "), "  "))
			}
			// The first row holds cols-4 characters, each further one cols-6.
			want := 1 + (len(long)-(int(cols)-4)+int(cols)-7)/(int(cols)-6)
			if len(rows) != want || joined.String() != long {
				t.Fatalf("%d rows (want %d), together:\n%q\nwant %q\nscreen:\n%s", len(rows), want, joined.String(), long, tm.Screen())
			}
			tm.send("n")
			tm.expect("long done", 20*time.Second)
			tm.quit()
		})
	}
}

// commandRows is the rows of the last approval's command on screen: from
// the row after "command (…" to the row before the "in <dir>" line.
func commandRows(t *testing.T, screen string) []string {
	t.Helper()
	at := strings.LastIndex(screen, "command (1 line")
	if at < 0 {
		t.Fatalf("no command on screen:\n%s", screen)
	}
	lines := strings.Split(strings.ReplaceAll(screen[at:], "\r", ""), "\n")
	var rows []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "  in ") {
			return rows
		}
		rows = append(rows, l)
	}
	t.Fatalf("no end of the command on screen:\n%s", screen)
	return nil
}
