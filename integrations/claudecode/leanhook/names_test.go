package leanhook

import (
	"testing"

	"github.com/sessionvault/sessionvault/internal/session"
)

// The lean hook hands on a Read of the notes the full hook records as
// evidence of reading: it knows them by the same names.
func TestStateNoteNames(t *testing.T) {
	if stateNote != session.CurrentStateNote || historyNote != session.HistoryNote {
		t.Errorf("the lean hook looks for %s and %s; the full hook records %s and %s", stateNote, historyNote, session.CurrentStateNote, session.HistoryNote)
	}
}
