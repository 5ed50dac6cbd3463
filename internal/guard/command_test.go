package guard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/commandlog"
	"github.com/sessionvault/sessionvault/internal/filelock"
	"github.com/sessionvault/sessionvault/internal/integrity"
)

// commandVault is a vault root with project demo's session s-1 whose
// command log holds one entry (of a secondary machine, at 10:00:00, its
// last line not ended), logs committed a minute before now, and the model
// SessionStart recorded for Claude Code session cs.
func commandVault(t *testing.T, now time.Time) (root, log string) {
	t.Helper()
	root = t.TempDir()
	dir := filepath.Join(root, "demo", "sessions", "s-1")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "commands.md")
	head := "---\ntype: command-log\n---\n\n- 2026-11-26T10:00:00Z · success · `ls` ^h-1-laptop"
	if err := os.WriteFile(log, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(integrity.Path(root, ""), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		commandlog.CommittedFile("demo"): commandlog.CommittedRecord(now.Add(-time.Minute)),
		commandlog.ModelFile("demo"):     commandlog.ModelRecord("cs", "claude-opus-4-1"),
	} {
		if err := os.WriteFile(integrity.Path(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, log
}

var logCache = Cached{Facts: Facts{Session: "s-1", Active: true},
	Log: LogFacts{Known: true, IDSuffix: "-laptop", Task: "[[demo/tasks/t|t]]", Feature: "[[demo/features/f-2026-11-26|f-2026-11-26]]"}}

// RecordCommand writes the entry the full hook writes: the next id with the
// machine's suffix, a time no earlier than the last entry's, the duration
// from the call's start, the model SessionStart recorded when the input's
// is blank, the agent's type else its id, the active task and feature, a
// failed call's error — on a line of its own after a line cut short.
func TestRecordCommandWritesTheFullHooksEntry(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 59, 0, 0, time.UTC) // before the last entry: a clock gone back
	root, log := commandVault(t, now)
	if err := os.MkdirAll(integrity.Path(root, integrity.CallsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(callFile(root, "toolu_1"), []byte("1"), 0o644); err != nil { // started at the epoch's first ns
		t.Fatal(err)
	}
	call := CommandCall{Tool: "Bash", Input: []byte(`{"command":"make lint","description":"Lint"}`), Failed: true, Error: "exit status 2",
		ToolUseID: "toolu_1", AgentType: " ", AgentID: "agent-7", Model: " ", ClaudeSession: "cs"}
	if err := RecordCommand(root, "demo", logCache, call, time.Second, now); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(log)
	lines := strings.Split(string(data), "\n")
	want := "- 2026-11-26T10:00:00Z · failure · `make lint` · **args:** `{\"description\":\"Lint\"}` · **model:** claude-opus-4-1 · **agent:** agent-7 · " +
		"**task:** [[demo/tasks/t|t]] · **feature:** [[demo/features/f-2026-11-26|f-2026-11-26]] · **duration:** " +
		"%DUR% ms · **error:** `exit status 2` ^h-2-laptop"
	got := lines[len(lines)-2]
	i, j := strings.Index(got, "**duration:** "), strings.Index(got, " ms · **error")
	if i < 0 || j < i || !strings.HasPrefix(want, got[:i]) || got[:i]+"**duration:** %DUR%"+got[j:] != want || lines[len(lines)-3] != "- 2026-11-26T10:00:00Z · success · `ls` ^h-1-laptop" || lines[len(lines)-1] != "" {
		t.Errorf("log:\n%s\nwant its last line\n%s", data, want)
	}
	if _, err := os.Stat(callFile(root, "toolu_1")); !os.IsNotExist(err) {
		t.Error("the call's start record was not taken back")
	}
}

// What RecordCommand leaves to the full hook writes nothing: logs due for
// a commit, a log not made yet, a sessions folder that is a link, a session
// id that is not a plain name, no active session, log facts not cached. A
// lock held past the timeout is an error, not a hand-over.
func TestRecordCommandLeavesWhatItMustNotDo(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 5, 0, 0, time.UTC)
	call := CommandCall{Tool: "Bash", Input: []byte(`{"command":"ls"}`)}
	for name, setup := range map[string]func(root, log string) Cached{
		"due": func(root, _ string) Cached {
			os.WriteFile(integrity.Path(root, commandlog.CommittedFile("demo")), commandlog.CommittedRecord(now.Add(-time.Hour)), 0o644)
			return logCache
		},
		"no log yet": func(_, log string) Cached { os.Remove(log); return logCache },
		"a linked sessions folder": func(root, _ string) Cached {
			real := filepath.Join(root, "elsewhere")
			os.Rename(filepath.Join(root, "demo", "sessions"), real)
			os.Symlink(real, filepath.Join(root, "demo", "sessions"))
			return logCache
		},
		"a session id that is not plain": func(root, _ string) Cached {
			c := logCache
			c.Facts.Session = "../../s-1"
			return c
		},
		"no active session": func(string, string) Cached { c := logCache; c.Facts.Active = false; return c },
		"log facts unknown": func(string, string) Cached { c := logCache; c.Log.Known = false; return c },
	} {
		root, log := commandVault(t, now)
		c := setup(root, log)
		before, _ := os.ReadFile(log)
		if err := RecordCommand(root, "demo", c, call, time.Second, now); !errors.Is(err, ErrNotLean) {
			t.Errorf("%s: %v; want ErrNotLean", name, err)
		}
		if after, _ := os.ReadFile(log); string(after) != string(before) {
			t.Errorf("%s: the log was written", name)
		}
	}

	root, log := commandVault(t, now)
	f, err := os.OpenFile(log, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if held, err := filelock.TryLock(f); !held || err != nil {
		t.Fatalf("lock: %v %v", held, err)
	}
	if err := RecordCommand(root, "demo", logCache, call, 20*time.Millisecond, now); err == nil || errors.Is(err, ErrNotLean) || !strings.Contains(err.Error(), "has held") {
		t.Errorf("a held lock: %v; want an error saying so", err)
	}
}

// SettleToolCall keeps the noted call of a tool whose watched note changed
// (the full hook commits it) and clears one that changed nothing, or a
// record of another tool: here calls without a tool_use_id, in the
// project's one slot.
func TestSettleToolCall(t *testing.T) {
	root := t.TempDir()
	note := filepath.Join(root, "demo", "session-decisions.md")
	os.MkdirAll(filepath.Dir(note), 0o755)
	if err := os.WriteFile(note, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	record := func() []byte {
		data, _ := os.ReadFile(integrity.Path(root, integrity.ToolCallFile("demo")))
		return data
	}
	if SettleToolCall(root, "demo", "Bash", "") {
		t.Error("no noted call: changed")
	}
	watch := []string{"demo/session-decisions.md"}
	if err := NoteToolCall(root, "demo", "Bash", "", watch); err != nil {
		t.Fatal(err)
	}
	if SettleToolCall(root, "demo", "Bash", "") || len(record()) != 0 {
		t.Errorf("a call that changed nothing: changed, or its record %q kept", record())
	}
	NoteToolCall(root, "demo", "Bash", "", watch)
	os.WriteFile(note, []byte("a\nb\n"), 0o644)
	if !SettleToolCall(root, "demo", "Bash", "") || len(record()) == 0 {
		t.Error("a call that changed the note: not changed, or its record cleared")
	}
	if SettleToolCall(root, "demo", "Edit", "") || len(record()) != 0 {
		t.Error("another tool's record: not cleared")
	}
}
