package guard

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// Post writes the heartbeat of an active session and the tool history's
// line, and leaves to the full hook — writing nothing — a call whose tool
// matches a `tool:` evidence pattern, a cache that does not know the
// patterns, a state that does not verify and a history due to be cut.
func TestPostLeavesWhatNeedsTheFullHook(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 11, 26, 18, 30, 5, 600, time.UTC)
	active := Cached{Facts: Facts{Session: "s-1", Active: true}, ToolEvidence: []string{"mcp__serena__.*", "Gr(ep"}, ToolEvidenceKnown: true}
	read := func(name string) string {
		data, _ := os.ReadFile(integrity.Path(root, name))
		return string(data)
	}
	if err := Post(root, "demo", active, ToolUse{Timestamp: at, Tool: "Read", Success: true}, nil, time.Second); err != nil {
		t.Fatal(err)
	}
	if got := read(HeartbeatFile("demo")); got != "2026-11-26T18:30:05Z s-1\n" {
		t.Errorf("heartbeat %q", got)
	}
	if got := read(ToolHistoryFile("demo")); got != `{"timestamp":"2026-11-26T18:30:05Z","tool":"Read","success":true}`+"\n" {
		t.Errorf("tool history %q", got)
	}
	before, _ := os.Stat(integrity.Path(root, HeartbeatFile("demo")))
	if err := Post(root, "demo", active, ToolUse{Timestamp: at.Add(2 * time.Second), Tool: "Read", Success: true}, nil, time.Second); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(integrity.Path(root, HeartbeatFile("demo")))
	if got := read(HeartbeatFile("demo")); got != "2026-11-26T18:30:07Z s-1\n" || !os.SameFile(before, after) {
		t.Errorf("the next heartbeat %q, in place %v; want it overwritten in place", got, os.SameFile(before, after))
	}
	idle := Cached{Facts: Facts{Session: "s-1"}}
	if err := Post(root, "demo", idle, ToolUse{Timestamp: at.Add(time.Minute), Tool: "Edit", Success: false}, nil, time.Second); err != nil {
		t.Fatal(err)
	}
	if got := read(HeartbeatFile("demo")); got != "2026-11-26T18:30:07Z s-1\n" {
		t.Errorf("no session active: heartbeat rewritten to %q", got)
	}
	if got := read(ToolHistoryFile("demo")); !strings.HasSuffix(got, `"tool":"Edit","success":false}`+"\n") {
		t.Errorf("no session active: tool history %q lacks the call", got)
	}

	unknown := active
	unknown.ToolEvidenceKnown = false
	unreadable := active
	unreadable.Facts.Unreadable = "the note does not parse"
	for name, c := range map[string]struct {
		cached Cached
		tool   string
	}{
		"a tool the evidence names":  {active, "mcp__serena__read_memory"},
		"patterns unknown":           {unknown, "Read"},
		"a state that does not read": {unreadable, "Read"},
	} {
		before := read(ToolHistoryFile("demo"))
		if err := Post(root, "demo", c.cached, ToolUse{Timestamp: at, Tool: c.tool, Success: true}, nil, time.Second); !errors.Is(err, ErrNotLean) {
			t.Errorf("%s: %v; want ErrNotLean", name, err)
		}
		if read(ToolHistoryFile("demo")) != before {
			t.Errorf("%s: the tool history was written", name)
		}
	}
	// An invalid pattern matches nothing (as RecordToolCall skips it).
	if err := Post(root, "demo", active, ToolUse{Timestamp: at, Tool: "Gr(ep", Success: true}, nil, time.Second); err != nil {
		t.Errorf("a tool named as an invalid pattern: %v", err)
	}

	if err := os.WriteFile(integrity.Path(root, ToolHistoryFile("demo")), []byte(strings.Repeat("x", MaxToolHistoryBytes-10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Post(root, "demo", active, ToolUse{Timestamp: at, Tool: "Read", Success: true}, nil, time.Second); !errors.Is(err, ErrNotLean) {
		t.Errorf("a history due to be cut: %v; want ErrNotLean", err)
	}
}
