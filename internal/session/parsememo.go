package session

import (
	"bytes"
	"sync"

	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
)

// parsedNotesKept is how many parsed notes a Service keeps (parsedNotes).
const parsedNotesKept = 4

// parsedNotes keeps the notes a Service parsed last, by path and content.
// An operation reads a note, writes its new version and seals both, so one
// version is parsed two or three times an operation, and the next
// operation reads what this one wrote: each is parsed once. A parsed
// note.Note is never changed once its line table is filled (its methods
// return new notes) and neither are its sections, so the Docs opened on the
// same bytes share them; the memo parses its own copy of the bytes, which
// no caller gets to change. Safe for concurrent use; a nil *parsedNotes
// keeps nothing.
type parsedNotes struct {
	mu     sync.Mutex
	parsed []parsedNote // oldest first
}

// parsedNote is one parse: the note (its bytes are the key) and its
// sections (nil until first needed, for a parse kept by Doc.Bytes).
type parsedNote struct {
	n  *note.Note
	md *markdown.Doc
}

// scanSections returns the sections of n's body. They come from the line
// scanner, which finds what goldmark finds (markdown.TestScanMatchesGoldmark)
// at a fraction of the cost on long sessions; the session notes need no
// other structure.
func scanSections(n *note.Note) *markdown.Doc {
	return &markdown.Doc{Sections: markdown.ScanSections(n.Body())}
}

// keeps reports whether the memo keeps parses of the note rel: the
// project's canonical notes, which an operation reads, writes and seals
// (not the many notes a task graph reads once each).
func (m *parsedNotes) keeps(rel string) bool { return m != nil && isCanonical(rel) }

// get returns the parse of data as the note rel, if kept; the caller has
// checked that the memo keeps rel (keeps).
func (m *parsedNotes) get(rel string, data []byte) (parsedNote, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.parsed) - 1; i >= 0; i-- {
		if p := m.parsed[i]; p.n.Path() == rel && bytes.Equal(p.n.Bytes(), data) {
			if p.md == nil { // kept by Doc.Bytes: its sections on first use
				p.md = scanSections(p.n)
				m.parsed[i] = p
			}
			return p, true
		}
	}
	return parsedNote{}, false
}

// put keeps p, dropping the oldest parse past parsedNotesKept. The note's
// line table, which note.Note fills on first use, is filled first: what
// the memo shares is read only from then on, from any goroutine. The
// caller has checked that the memo keeps p's note (keeps).
func (m *parsedNotes) put(p parsedNote) {
	p.n.LineOf(0)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.parsed) == parsedNotesKept {
		m.parsed = append(m.parsed[:0], m.parsed[1:]...)
	}
	m.parsed = append(m.parsed, p)
}
