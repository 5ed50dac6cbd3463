package reconcile

import (
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/notemerge"
	"github.com/sessionvault/sessionvault/internal/session"
)

// The note merge unifies by id only the engine's entries in the lists it
// keeps: every list section of the notes the engine writes is one, a
// person's sections and the engine's prose are not, and a person's block
// id is never an entry id.
func TestNoteOwnership(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	base := "---\ntype: session-state\nsession: s-1\n---\n# Current session\n\n## Updates\n\n- 2026-11-26T10:00:00Z · note · one ^u-1\n\n## Next steps\n"
	ours := strings.Replace(base, "one ^u-1\n", "one ^u-1\n- 2026-11-26T10:02:00Z · note · two ^u-2\n", 1) + "\n## Mine\n\n- x ^gh\n"
	theirs := strings.Replace(base, "one ^u-1\n", "one ^u-1\n- 2026-11-26T10:01:00Z · note · other ^u-2-mb\n", 1) + "\n## Yours\n\n- y ^gh\n"
	got, conflicted := notemerge.MergeNotes(session.CurrentStateNote, []byte(base), []byte(ours), []byte(theirs), NoteOwnership())
	want := "---\ntype: session-state\nsession: s-1\n---\n# Current session\n\n## Updates\n\n- 2026-11-26T10:00:00Z · note · one ^u-1\n- 2026-11-26T10:01:00Z · note · other ^u-2-mb\n- 2026-11-26T10:02:00Z · note · two ^u-2\n\n## Next steps\n\n## Mine\n\n- x ^gh\n\n## Yours\n\n- y ^gh\n"
	if string(got) != want || conflicted {
		t.Fatalf("merge (conflicted %v):\n%s\nwant:\n%s", conflicted, got, want)
	}
}

// NoteOwnership over every canonical note and section: which sections are
// engine-owned lists merged by entry id (List), which the engine renders
// at all (Owned: its lists and, in a current state or a session's record,
// its own prose), with the type a note's name gives when a person removed
// its type property; everything else is a person's.
func TestNoteOwnershipTable(t *testing.T) {
	t.Parallel()
	own := NoteOwnership()
	const (
		state    = "p/session-current-state.md"
		record   = "p/sessions/2026-11-26-session-01.md"
		archive  = "p/sessions/2026-11-26-session-01/archive.md"
		commands = "p/sessions/2026-11-26-session-01/commands.md"
	)
	for _, c := range []struct {
		rel, typ, title string
		list, owned     bool
	}{
		// A current state and a session's record: the lists, the prose, a
		// person's sections.
		{state, "session-state", session.SecStart, true, true},
		{state, "session-state", session.SecUpdates, true, true},
		{state, "session-state", session.SecDecisions, true, true},
		{state, "session-state", session.SecBlockers, true, true},
		{state, "session-state", session.SecInvocations, true, true},
		{state, "session-state", session.SecHandoffs, true, true},
		{state, "session-state", session.SecVerdicts, true, true},
		{state, "session-state", session.SecModes, true, true},
		{state, "session-state", session.SecEnd, true, true},
		{state, "session-state", session.SecCompactions, true, true},
		{state, "session-state", session.SecObjective, false, true},
		{state, "session-state", session.SecNext, false, true},
		{state, "session-state", session.SecSummary, false, true},
		{state, "session-state", "My notes", false, false},
		{state, "session-state", "updates", false, false}, // titles match exactly
		{state, "", session.SecObjective, false, true},    // no type: the name says
		{record, "session", session.SecVerdicts, true, true},
		{record, "session", session.SecSummary, false, true},
		{record, "session", "Retro", false, false},
		// A session's archive and command log.
		{archive, "", session.SecUpdates, true, true},
		{archive, "", session.SecInvocations, true, true},
		{archive, "", session.SecCompactions, true, true},
		{archive, "", session.SecDecisions, false, false},
		{commands, "", "anything", true, true},
		{"p/elsewhere/log.md", "command-log", "Commands", true, true},
		// The project's other canonical notes, typed and by name.
		{"p/session-decisions.md", "session-decisions", "Decisions", true, true},
		{"p/session-decisions.md", "", "Decisions", true, true},
		{"p/session-decisions.md", "session-decisions", "Open questions", false, false},
		{"p/session-history.md", "session-history", session.SecRecent, true, true},
		{"p/session-history.md", "", session.SecOlder, true, true},
		{"p/session-history.md", "", "Highlights", false, false},
		{"p/session-violations-log.md", "", "Violations", true, true},
		{"p/session-violations-log.md", "session-violations-log", "Notes", false, false},
		{"p/checkpoints.md", "checkpoints", session.SecCheckpoints, true, true},
		{"p/conflicts.md", "conflicts", session.SecConflicts, true, true},
		{"p/conflicts.md", "conflicts", "Resolved by hand", false, false},
		{"p/features/parser.md", "feature", session.PhaseTitlePrefix + "Design", true, true},
		{"p/features/parser.md", "feature", "Phases", false, false},
		// A person's notes, whatever their headings.
		{"p/tasks/parser.md", "task", session.SecUpdates, false, false},
		{"p/notes/session-log.md", "", session.SecUpdates, false, false},
		{"p/ideas.md", "idea", "Decisions", false, false},
	} {
		if got := own.List(c.rel, c.typ, c.title); got != c.list {
			t.Errorf("List(%q, %q, %q) = %v, want %v", c.rel, c.typ, c.title, got, c.list)
		}
		if got := own.Owned(c.rel, c.typ, c.title); got != c.owned {
			t.Errorf("Owned(%q, %q, %q) = %v, want %v", c.rel, c.typ, c.title, got, c.owned)
		}
	}
	for _, c := range []struct {
		rel, typ string
		record   bool
	}{
		{record, "session", true},
		{record, "", true}, // by its place
		{"p/elsewhere/s.md", "session", true},
		{state, "session-state", false},
		{archive, "", false},
		{commands, "command-log", false},
		{"p/sessions.md", "", false},
	} {
		if got := own.Record(c.rel, c.typ); got != c.record {
			t.Errorf("Record(%q, %q) = %v, want %v", c.rel, c.typ, got, c.record)
		}
	}
	for line, id := range map[string]string{
		"- x ^a-3-laptop":         "a-3-laptop",
		"- x ^cf-12-mb":           "cf-12-mb",
		"- x ^k-2":                "k-2",
		"- x ^cp-1764151200-ff00": "cp-1764151200-ff00",
		"- x ^cp-1764151200-zz":   "", // not hex
		"- x ^U-1":                "",
		"- x ^ab-1":               "",
		"- x ^u-1-Laptop":         "",
		"- x ^u-1-":               "",
		"- x ^u-":                 "",
	} {
		if got := own.EntryID(line); got != id {
			t.Errorf("EntryID(%q) = %q, want %q", line, got, id)
		}
	}
}
