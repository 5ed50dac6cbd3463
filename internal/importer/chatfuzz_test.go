package importer

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// Claude Code session notes and aider histories of any shape parse without
// a panic into sessions that keep the invariants; every aider chat is a
// piece of its file.
func FuzzParseChats(f *testing.F) {
	for _, p := range []string{
		"testdata/claude/repo/.claude/sessions/2025-01-16-1347-campaign-editor.md",
		"testdata/claude/repo/.claude/sessions/2025-04-01-0800.md",
		"testdata/aider/.aider.chat.history.md",
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("### Update - 12:15 PM\n**Summary**:\n## Session Summary\n**Duration**: 13:47 - 09:02\n"))
	f.Add([]byte("# aider chat started at 2024-13-45 99:99:99\n#### \n> \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ParseClaudeSession("2025-01-16-1347-fuzz.md", data, time.UTC); err == nil {
			checkInvariants(t, s)
			if len(s.UpdateTimes) != len(s.Updates) || !bytes.Equal(s.Original, data) || (!s.Ended.IsZero() && s.Ended.Before(s.Date)) {
				t.Errorf("session %+v", s)
			}
		}
		ss, _, err := ParseAiderHistory("h.md", data, time.UTC)
		if err == nil {
			for _, s := range ss {
				checkInvariants(t, s)
				if !bytes.Contains(data, s.Original) {
					t.Errorf("chat %s is not a piece of the file", s.ID)
				}
			}
		}
	})
}

// Big histories and notes parse in time: a 5 MB aider history of 2,000
// chats, a Claude session note of 20,000 lines.
func TestLargeChats(t *testing.T) {
	var h strings.Builder
	for i := 0; i < 2000; i++ {
		h.WriteString("\n# aider chat started at 2024-05-30 10:22:13\n\n#### do the thing  \n\n" + strings.Repeat("reply line with `code`\n", 100) + "\n> Applied edit to a.go  \n")
	}
	start := time.Now()
	ss, _, err := ParseAiderHistory("h.md", []byte(h.String()), time.UTC)
	if err != nil || len(ss) != 2000 || ss[1999].ID != "2024-05-30-aider-102213-2000" {
		t.Errorf("%v, %d chats", err, len(ss))
	}
	note := "# Development Session - 2025-01-16 13:47 - big\n\n" + strings.Repeat("### Update - 2025-01-16 14:00\n\n- **Summary**: x\n\n", 5000)
	if s, err := ParseClaudeSession("2025-01-16-1347-big.md", []byte(note), time.UTC); err != nil || len(s.Updates) != 5000 {
		t.Errorf("%v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("parsing took %v", d)
	}
}
