package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// The command history records Bash and MCP tool calls only: Claude Code's
// other tools are not commands.
func TestRecordsCommand(t *testing.T) {
	for tool, want := range map[string]bool{
		"Bash": true, "mcp__github__create_pull_request": true, "mcp__sessionvault__session_update": true,
		"Read": false, "Edit": false, "Task": false, "BashOutput": false, "bash": false, "mcp_x": false, "": false,
	} {
		if got := RecordsCommand(tool); got != want {
			t.Errorf("RecordsCommand(%q) = %v, want %v", tool, got, want)
		}
	}
}

// A command's start, noted by PreToolUse, is taken back once by PostToolUse
// for the call's duration; noting the same call again keeps its first start.
func TestCallStartRoundTrip(t *testing.T) {
	f := newFixture(t)
	before := time.Now()
	if err := NoteCallStart(f.root, "Bash", "toolu_01AbC-x"); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	if err := NoteCallStart(f.root, "Bash", "toolu_01AbC-x"); err != nil { // a retried hook
		t.Fatal(err)
	}
	if err := NoteCallStart(f.root, "mcp__github__get_issue", "toolu_02"); err != nil {
		t.Fatal(err)
	}
	got, ok := TakeCallStart(f.root, "toolu_01AbC-x")
	if !ok {
		t.Fatal("no start recorded")
	}
	if got.Before(before.Truncate(time.Microsecond)) || got.After(after) {
		t.Errorf("start %v, want the first noting's, between %v and %v", got, before, after)
	}
	if _, ok := TakeCallStart(f.root, "toolu_01AbC-x"); ok {
		t.Error("a start was taken twice")
	}
	if _, ok := TakeCallStart(f.root, "toolu_02"); !ok {
		t.Error("the MCP call's start was not recorded")
	}
}

// Calls the history does not record, and ids that are not plain names
// (which could reach outside the records' folder), leave no record.
func TestCallStartIgnoresOtherToolsAndUnsafeIDs(t *testing.T) {
	f := newFixture(t)
	tests := []struct{ tool, id string }{
		{"Read", "toolu_1"},
		{"Edit", "toolu_2"},
		{"Bash", ""},
		{"Bash", "../escape"},
		{"Bash", "a/b"},
		{"Bash", "a b"},
		{"Bash", "toolu_é"},
		{"Bash", strings.Repeat("x", 129)},
	}
	for _, tc := range tests {
		if err := NoteCallStart(f.root, tc.tool, tc.id); err != nil {
			t.Errorf("%s %q: %v", tc.tool, tc.id, err)
		}
		if _, ok := TakeCallStart(f.root, tc.id); ok {
			t.Errorf("%s %q: a start was recorded", tc.tool, tc.id)
		}
	}
	if _, err := os.Stat(filepath.Join(f.root, filepath.FromSlash(integrity.StateDir), "escape")); err == nil {
		t.Error("an id wrote outside the records' folder")
	}
	if err := NoteCallStart(f.root, "Bash", strings.Repeat("x", 128)); err != nil {
		t.Fatal(err)
	}
	if _, ok := TakeCallStart(f.root, strings.Repeat("x", 128)); !ok {
		t.Error("a 128-character id was not recorded")
	}
}

// A record that is not a time gives no duration, and is removed.
func TestCorruptCallStart(t *testing.T) {
	f := newFixture(t)
	p := filepath.Join(f.root, filepath.FromSlash(integrity.StateDir), "calls", "toolu_9")
	writeFile(t, p, "yesterday")
	if _, ok := TakeCallStart(f.root, "toolu_9"); ok {
		t.Error("a corrupt record gave a start")
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the corrupt record was kept: %v", err)
	}
}

// A state folder the records cannot be written in is an error.
func TestCallStartUnwritable(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.root, filepath.FromSlash(integrity.StateDir), "calls"), "a file where the folder should be")
	if err := NoteCallStart(f.root, "Bash", "toolu_1"); err == nil {
		t.Error("no error")
	}
	g := newFixture(t)
	writeFile(t, filepath.Join(g.root, ".sessionvault"), "a file where the folder should be")
	if err := NoteCallStart(g.root, "Bash", "toolu_1"); err == nil {
		t.Error("no error")
	}
}

// Pruning removes the starts of calls interrupted long ago and keeps the
// recent ones; with no records yet it does nothing.
func TestPruneCallStarts(t *testing.T) {
	f := newFixture(t)
	PruneCallStarts(f.root, time.Hour) // no folder yet
	for _, id := range []string{"old", "recent"} {
		if err := NoteCallStart(f.root, "Bash", id); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(f.root, filepath.FromSlash(integrity.StateDir), "calls", "old"), old, old); err != nil {
		t.Fatal(err)
	}
	PruneCallStarts(f.root, time.Hour)
	if _, ok := TakeCallStart(f.root, "old"); ok {
		t.Error("an interrupted call's start was kept")
	}
	if _, ok := TakeCallStart(f.root, "recent"); !ok {
		t.Error("a recent call's start was pruned")
	}
}
