package reconcile

import (
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/vault"
)

// The note merge unifies by id only the engine's entries in the lists it
// keeps: every list section of the notes the engine writes is one, a
// person's sections and the engine's prose are not, and a person's block
// id is never an entry id.
func TestNoteOwnership(t *testing.T) {
	own := NoteOwnership()
	for _, c := range []struct {
		rel, typ, title string
		list            bool
	}{
		{"p/session-current-state.md", "session-state", "Updates", true},
		{"p/session-current-state.md", "session-state", "Start checklist", true},
		{"p/session-current-state.md", "session-state", "Compactions", true},
		{"p/session-current-state.md", "session-state", "Objective", false},
		{"p/session-current-state.md", "session-state", "Next steps", false},
		{"p/session-current-state.md", "session-state", "My notes", false},
		{"p/session-current-state.md", "", "Blockers", true}, // a person broke the type: its name says
		{"p/sessions/2026-11-26-session-01.md", "session", "Decisions", true},
		{"p/sessions/2026-11-26-session-01.md", "session", "Summary", false},
		{"p/sessions/2026-11-26-session-01/archive.md", "", "Updates", true},
		{"p/sessions/2026-11-26-session-01/commands.md", "command-log", "Commands of 2026-11-26-session-01", true},
		{"p/session-decisions.md", "session-decisions", "Decisions", true},
		{"p/session-history.md", "session-history", "Recent sessions", true},
		{"p/session-violations-log.md", "session-violations-log", "Violations", true},
		{"p/checkpoints.md", "checkpoints", "Checkpoints", true},
		{"p/conflicts.md", "conflicts", "Conflicts", true},
		{"p/features/f-1.md", "feature", "Phase: Core", true},
		{"p/features/f-1.md", "feature", "Notes", false},
		{"p/tasks/t.md", "task", "Technical decisions", false},
		{"p/ideas.md", "", "Updates", false}, // a person's note with a heading like the engine's
	} {
		if got := own.List(c.rel, c.typ, c.title); got != c.list {
			t.Errorf("List(%q, %q, %q) = %v, want %v", c.rel, c.typ, c.title, got, c.list)
		}
	}
	for line, id := range map[string]string{
		"- 2026-11-26T10:00:00Z · note · did it ^u-12":        "u-12",
		"- 2026-11-26T10:00:00Z · note · did it ^u-12-laptop": "u-12-laptop",
		"- [ ] **MUST** Read the state ^c-1":                  "c-1",
		"- cf-3 · lock · high ^cf-3":                          "cf-3",
		"- 2026-11-26 · [[p/x|x]] ^cp-1764151200-a1b2c3":      "cp-1764151200-a1b2c3",
		"alpha ^x":            "",
		"- one ^gh":           "",
		"- my own ^todo-list": "",
		"no id at all":        "",
	} {
		if got := own.EntryID(line); got != id {
			t.Errorf("EntryID(%q) = %q, want %q", line, got, id)
		}
	}
	if !own.Record("p/sessions/2026-11-26-session-01.md", "session") || own.Record(session.CurrentStateNote, "session-state") {
		t.Errorf("Record: a session's record is one, the current state is not")
	}
}

// A current state merged with NoteOwnership: the two machines' updates
// once each, in time order; a person's sections whole.
func TestNoteOwnershipMergesAState(t *testing.T) {
	base := "---\ntype: session-state\nsession: s-1\n---\n# Current session\n\n## Updates\n\n- 2026-11-26T10:00:00Z · note · one ^u-1\n\n## Next steps\n"
	ours := strings.Replace(base, "one ^u-1\n", "one ^u-1\n- 2026-11-26T10:02:00Z · note · two ^u-2\n", 1) + "\n## Mine\n\n- x ^gh\n"
	theirs := strings.Replace(base, "one ^u-1\n", "one ^u-1\n- 2026-11-26T10:01:00Z · note · other ^u-2-mb\n", 1) + "\n## Yours\n\n- y ^gh\n"
	got, conflicted := vault.MergeNotes(session.CurrentStateNote, []byte(base), []byte(ours), []byte(theirs), NoteOwnership())
	want := "---\ntype: session-state\nsession: s-1\n---\n# Current session\n\n## Updates\n\n- 2026-11-26T10:00:00Z · note · one ^u-1\n- 2026-11-26T10:01:00Z · note · other ^u-2-mb\n- 2026-11-26T10:02:00Z · note · two ^u-2\n\n## Next steps\n\n## Mine\n\n- x ^gh\n\n## Yours\n\n- y ^gh\n"
	if string(got) != want || conflicted {
		t.Fatalf("merge (conflicted %v):\n%s\nwant:\n%s", conflicted, got, want)
	}
}
