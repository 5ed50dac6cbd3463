package reconcile

import (
	"slices"
	"strings"

	"github.com/sessionvault/sessionvault/internal/notemerge"
	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// NoteOwnership is what the note merge of `remote sync` and the git merge
// driver (notemerge.MergeNotes) needs to know of the engine's notes: which
// sections are the lists the engine keeps, and which of their lines are
// its entries. Everything else is a person's text, merged as git merges
// text.
func NoteOwnership() notemerge.Ownership {
	return notemerge.Ownership{List: listSection, Owned: ownedSection, EntryID: engineEntryID, Record: isRecord}
}

// ownedSection reports whether the section title of the note at rel (type
// typ) is one the engine renders: a list it keeps, or its own prose in a
// current state or a session's record (notemerge.Ownership.Owned).
func ownedSection(rel, typ, title string) bool {
	if listSection(rel, typ, title) {
		return true
	}
	switch canonicalType(rel, typ) {
	case "session-state", "session":
		return slices.Contains(session.OwnedSections, title) || title == session.SecSummary
	}
	return false
}

// isRecord reports whether the note at rel (type typ) is a session's
// record, <project>/sessions/<session>.md (notemerge.Ownership.Record).
func isRecord(rel, typ string) bool {
	parts := strings.Split(rel, "/")
	return typ == "session" || len(parts) == 3 && parts[1] == session.SessionsDir
}

// stateLists are the sections of a current state (and of a session's
// record) that the engine keeps as lists of entries.
var stateLists = map[string]bool{
	session.SecStart: true, session.SecUpdates: true, session.SecDecisions: true, session.SecBlockers: true, session.SecInvocations: true,
	session.SecHandoffs: true, session.SecVerdicts: true, session.SecModes: true, session.SecEnd: true, session.SecCompactions: true,
}

// listSection reports whether the section title of the note at rel (type
// typ) is a list the engine keeps (notemerge.Ownership.List).
func listSection(rel, typ, title string) bool {
	if session.IsCommandLog(rel) || typ == "command-log" {
		return true // entries follow the intro, under the note's title
	}
	if parts := strings.Split(rel, "/"); len(parts) == 4 && parts[1] == session.SessionsDir && parts[3] == "archive.md" {
		return title == session.SecUpdates || title == session.SecInvocations || title == session.SecCompactions
	}
	switch canonicalType(rel, typ) {
	case "session-state", "session":
		return stateLists[title]
	case "session-decisions":
		return title == "Decisions"
	case "session-history":
		return title == session.SecRecent || title == session.SecOlder
	case "session-violations-log":
		return title == "Violations"
	case "checkpoints":
		return title == session.SecCheckpoints
	case "conflicts":
		return title == session.SecConflicts
	case "feature":
		return strings.HasPrefix(title, session.PhaseTitlePrefix)
	}
	return false
}

// canonicalType is typ, or where a note has no type property (a person
// broke it) and is one of the canonical notes, the type its name says.
func canonicalType(rel, typ string) string {
	if typ != "" {
		return typ
	}
	switch rel[strings.LastIndexByte(rel, '/')+1:] {
	case session.CurrentStateNote:
		return "session-state"
	case session.DecisionsNote:
		return "session-decisions"
	case session.HistoryNote:
		return "session-history"
	case session.ViolationsNote:
		return "session-violations-log"
	}
	return ""
}

// engineIDRe matches the block id of an entry the engine wrote: a letter
// and a number (u-12, d-3, c-1, t-4, h-9, k-2, ...) or a conflict's cf-N,
// each with a second machine's name after it (u-12-laptop), or a
// checkpoint's cp-<unix time>-<hex>.
var engineIDRe = lazyregexp.New(`^(?:(?:[a-z]|cf)-\d+` + session.MachineSuffix + `|cp-\d+-[0-9a-f]+)$`)

// engineEntryID is the id of an entry line the engine wrote, or ""
// (notemerge.Ownership.EntryID).
func engineEntryID(line string) string {
	if id := notemerge.EntryID(line); id != "" && engineIDRe().MatchString(id) {
		return id
	}
	return ""
}
