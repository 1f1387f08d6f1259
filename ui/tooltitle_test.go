package ui

import (
	"encoding/json"
	"testing"
)

func TestToolTitle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, args, result, want string
	}{
		{"read", `{"path":"wordcount/wc.py"}`, "", "Read wordcount/wc.py"},
		{"read", `{"path":"wordcount/wc.py"}`, "1\tx\n[lines 1–120 of wordcount/wc.py (3.2 KiB)]", "Read wordcount/wc.py (1–120)"},
		{"read", `{"path":"a.go","offset":10,"limit":5}`, "", "Read a.go (10–14)"},
		{"edit", `{"path":"wordcount/wc.py","old":"a","new":"b"}`, "", "Edit wordcount/wc.py +1 −1"},
		{"edit", `{"path":"wc.py","old":"a","new":"b\nc"}`, "[edited wc.py (+3 −2 lines)]", "Edit wc.py +3 −2"},
		{"write", `{"path":"n.txt","content":"a\nb\n"}`, "", "Write n.txt (2 lines)"},
		{"grep", `{"pattern":"count_words"}`, "a.py:1:x\n[3 matching lines in 2 files]", `Grep "count_words" · 3 matches`},
		{"grep", `{"pattern":"x","path":"src"}`, "[no matches for x]", `Grep "x" in src · no matches`},
		{"glob", `{"pattern":"**/*.py"}`, "a.py\n[12 files match **/*.py]", "Glob **/*.py · 12 files"},
		{"glob", `{"pattern":"*.md"}`, "[1 file matches *.md]", "Glob *.md"},
		{"bash", `{"script":"go test ./...","env":{"POS":"${GRANTED}"}}`, "", "bash go test ./...  env: POS=${GRANTED}"},
		{"mcp:fs:list", `{"dir":"/tmp","all":true}`, "", "mcp:fs:list all: true · dir: /tmp"},
	} {
		if got := ToolTitle(tc.name, json.RawMessage(tc.args), tc.result, 200); got != tc.want {
			t.Errorf("ToolTitle(%s, %s, %q) = %q, want %q", tc.name, tc.args, tc.result, got, tc.want)
		}
	}
}

// TestPreviewCountsHiddenLines: a cut preview knows how many lines it did
// not show, an unfinished last one included.
func TestPreviewCountsHiddenLines(t *testing.T) {
	t.Parallel()
	p := toolPreview{max: 3}
	var shown []string
	shown = append(shown, p.add("1\n2\n")...)
	shown = append(shown, p.add("3\n4\n5")...)
	shown = append(shown, p.add("\n6\n7")...)
	if len(shown) != 3 || p.hidden() != 4 {
		t.Errorf("shown %q, hidden %d; want 3 shown and 4 hidden", shown, p.hidden())
	}
	var l lastOutput
	l.add([]byte("1\n2\n3\n4\n5\n6\n7"))
	l.shown = 3
	if r := l.rest(); len(r) != 4 || r[0] != "4" || r[3] != "7" {
		t.Errorf("Ctrl-O would show %q, want lines 4 to 7", r)
	}
}
