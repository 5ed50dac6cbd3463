package session

// History compaction: a long session's older updates and agent invocations
// move from the current-state note to the session's archive note, so that
// the note, and every operation that rewrites and commits it, stays small
// however long the session runs. Decisions, verdicts and blockers never
// move.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Properties of the current state that compaction keeps: the highest
// number of each entry kind moved to the archive (ids go on from it), how
// many compactions ran, and a link to the archive note. updates_log is the
// link sessions compacted before the archive note had its name kept.
const (
	PropCompacted            = "compacted_updates"
	PropCompactedInvocations = "compacted_invocations"
	propCompactions          = "compactions"
	propArchive              = "archive"
	propUpdatesLog           = "updates_log"
)

// SecCompactions is the section of the current state (and of the archive
// note) that records each compaction.
const SecCompactions = "Compactions"

// compactionsKept bounds the Compactions section of the current state:
// past it, all but the newest compactionsKeep entries move to the archive.
const (
	compactionsKept = 10
	compactionsKeep = 5
)

// ArchivePath is the vault-relative path of a session's archive note, the
// note a compaction moves the older entries of its current state to:
// <project>/sessions/<session>/archive.md, one H2 section per kind
// (Updates, Agent invocations, Compactions), newest last.
func ArchivePath(project, session string) string {
	return project + "/" + SessionsDir + "/" + session + "/archive.md"
}

// UpdatesLogPath is the path of the update log of a session compacted
// before the archive note (<project>/sessions/<session>/updates.md): it is
// read back as the archive's oldest part, never written.
func UpdatesLogPath(project, session string) string {
	return project + "/" + SessionsDir + "/" + session + "/updates.md"
}

// compactKind is a kind of session entry compaction moves: the lines of an
// H2 section whose block ids start with letter, moved when there are more
// than limit (0: never), all but the newest keep.
type compactKind struct {
	section string
	letter  byte
	prop    string // the current state's property: the highest number moved
	limit   int
	keep    int
	// stays reports an entry that never moves (an agent invocation still in
	// progress: agent end and handoff find it in the note); nil: none.
	stays func(line []byte) bool
}

// compactKinds returns the kinds this vault compacts: updates
// (compact_updates, the newest half kept) and agent invocations
// (compact_invocations, the newest 3 kept).
// Decisions, verdicts and blockers never move.
func (s *Service) compactKinds() []compactKind {
	u, a := s.V.Config.UpdatesKept(), s.V.Config.InvocationsKept()
	return []compactKind{
		{SecUpdates, 'u', PropCompacted, u, u / 2, nil},
		{SecInvocations, 'a', PropCompactedInvocations, a, min(3, a), func(line []byte) bool {
			inv, ok := parseInvocation(string(line))
			return ok && inv.Status == InvocationInProgress
		}},
	}
}

// nextUpdateID is the id of the next update of the session in d: one past
// the highest in its Updates section or already moved to its archive.
func (d *Doc) nextUpdateID() string {
	return "u-" + strconv.Itoa(max(d.lastEntryNumber(SecUpdates, 'u'), d.IntProp(PropCompacted))+1)
}

// compactMove is what one compaction takes out of one kind's section.
type compactMove struct {
	kind  compactKind
	lines []markdown.Line // the entries moved, oldest first
}

// compact moves the oldest entries of each kind (compactKinds) of the
// session in d to its archive note when a section holds more than the
// kind's limit: the lines move as they are (ids included), appended to the
// archive's section of that kind in the order they had; the note records
// the highest number moved, links the archive and gains a compaction entry
// in its Compactions section (`- <time> · N updates · M agent invocations →
// [[archive]] ^k-K`; read back as a Compaction), whose own older entries
// move to the archive past compactionsKept. Lines of a section that are not
// entries of its kind (a person's) stay where they are.
func (s *Service) compact(tx *vault.Tx, d *Doc, st State, now time.Time) error {
	var moves []compactMove
	for _, k := range s.compactKinds() {
		if k.limit <= 0 {
			continue
		}
		entries := EntryLines(d, k.section, k.letter)
		if len(entries) <= k.limit {
			continue
		}
		var move []markdown.Line
		for _, l := range entries[:len(entries)-k.keep] {
			if (k.stays == nil || !k.stays(l.Content())) && !d.edited(l.Offset, l.Offset+len(l.Text)) {
				move = append(move, l)
			}
		}
		if len(move) > 0 {
			moves = append(moves, compactMove{k, move})
		}
	}
	if len(moves) == 0 {
		return nil
	}
	rel := ArchivePath(st.Project, st.Session)
	ad, known, err := s.openArchive(tx, st)
	if err != nil {
		return err
	}
	counts := map[byte]int{}
	for _, m := range moves {
		highest := d.IntProp(m.kind.prop)
		n := s.moveLines(d, ad, known, m.kind.section, m.lines)
		counts[m.kind.letter] = n
		for _, l := range m.lines {
			if k := IdNumber(string(IdTail(l.Content()))); k > highest {
				highest = k
			}
		}
		d.Set(m.kind.prop, highest)
	}
	k := d.IntProp(propCompactions) + 1
	d.Set(propCompactions, k)
	archiveLink := Link(rel, st.Session+" archive")
	d.Set(propArchive, archiveLink)
	d.AppendLine(SecCompactions, formatCompaction(Compaction{ID: "k-" + strconv.Itoa(k), Time: now,
		Updates: counts['u'], Invocations: counts['a'], Archive: archiveLink}))
	if old := EntryLines(d, SecCompactions, 'k'); len(old)+1 > compactionsKept {
		s.moveLines(d, ad, known, SecCompactions, old[:len(old)+1-compactionsKeep])
	}
	b, err := ad.Bytes()
	if err != nil {
		return err
	}
	return tx.Write(rel, b)
}

// edited reports whether an edit queued on d touches the body range
// [start, end) (the operation changed that line: it stays for this
// compaction, which moves lines as they were read).
func (d *Doc) edited(start, end int) bool {
	for _, e := range d.edits {
		if e.start < end && e.end > start || e.start == e.end && e.start >= start && e.start < end {
			return true
		}
	}
	return false
}

// EntryLines returns the lines of d's section title that are entries of
// the kind letter (end with a block id ^<letter>-N).
func EntryLines(d *Doc, title string, letter byte) []markdown.Line {
	var out []markdown.Line
	for _, l := range d.SectionLines(title) {
		if id := IdTail(l.Content()); id != nil && id[0] == letter {
			out = append(out, l)
		}
	}
	return out
}

// moveLines appends lines of d (entries of section title) to the same
// section of the archive ad, except those the archive already holds
// (another machine moved them, and a merge brought them back into this
// state), and removes them all from d, one edit per run of consecutive
// lines. It returns how many it appended.
func (s *Service) moveLines(d, ad *Doc, known func(id []byte) bool, title string, lines []markdown.Line) int {
	var b strings.Builder
	n := 0
	for _, l := range lines {
		c := l.Content()
		if id := IdTail(c); id == nil || !known(id) {
			if n > 0 {
				b.WriteString(ad.Newline())
			}
			b.Write(c)
			n++
		}
	}
	if n > 0 {
		ad.AppendLine(title, b.String())
	}
	for i := 0; i < len(lines); {
		j := i
		for j+1 < len(lines) && lines[j+1].Offset == lines[j].Offset+len(lines[j].Text) {
			j++
		}
		d.Edit(lines[i].Offset, lines[j].Offset+len(lines[j].Text), "")
		i = j + 1
	}
	return n
}

// openArchive reads the archive note of st's session through tx (a new one
// from its template when missing) and returns it with a test of whether an
// entry id is already archived, in it or in the session's older update log.
func (s *Service) openArchive(tx *vault.Tx, st State) (*Doc, func([]byte) bool, error) {
	rel := ArchivePath(st.Project, st.Session)
	data, err := tx.Read(rel)
	if errors.Is(err, os.ErrNotExist) {
		data = []byte(fmt.Sprintf("---\nsession: %s\nkind: archive\n---\n\n# Archive of %s\n\nWhat compaction moved out of the current state of %s as the session grew: its older updates and agent invocations, and the record of each compaction (newest last in each section). Decisions, verdicts and blockers are never moved.\n",
			st.Session, st.Session, SessionLink(st.Project, st.Session)))
	} else if err != nil {
		return nil, nil, err
	}
	ad, err := s.ParseDoc(rel, data)
	if err != nil {
		return nil, nil, err
	}
	in := NewKeyIndex(data)
	legacy, err := tx.Read(UpdatesLogPath(st.Project, st.Session))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	old := NewKeyIndex(legacy)
	return ad, func(id []byte) bool { return in.Has("^"+string(id)) || old.Has("^"+string(id)) }, nil
}

// Compaction is one compaction of a session's history, an entry of its
// Compactions section: when it ran, how many updates and agent invocations
// it moved, and the archive note it moved them to.
type Compaction struct {
	ID          string    `json:"id"` // k-N
	Time        time.Time `json:"compacted_at"`
	Updates     int       `json:"updates"`
	Invocations int       `json:"agent_invocations"`
	Archive     string    `json:"note_path"` // wikilink to the archive note
}

// formatCompaction is a compaction entry's line.
func formatCompaction(c Compaction) string {
	return fmt.Sprintf("- %s · %d updates · %d agent invocations → %s ^%s", note.FormatTime(c.Time), c.Updates, c.Invocations, c.Archive, c.ID)
}

var compactionRe = lazyregexp.New(`^- (\S+) · (\d+) updates · (\d+) agent invocations → (\[\[[^\]]*\]\]) \^(k-\d+)\s*$`)

// parseCompaction reads a compaction entry's line back.
func parseCompaction(line string) (Compaction, bool) {
	m := compactionRe().FindStringSubmatch(line)
	if m == nil {
		return Compaction{}, false
	}
	t, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		return Compaction{}, false
	}
	u, _ := strconv.Atoi(m[2])
	a, _ := strconv.Atoi(m[3])
	return Compaction{ID: m[5], Time: t, Updates: u, Invocations: a, Archive: m[4]}, true
}

// IdTail returns the block id ending an entry line (`^u-12`, or
// `^u-12-laptop` from a secondary machine; spaces after it allowed) as
// "u-12" or "u-12-laptop", or nil.
func IdTail(line []byte) []byte {
	t := bytes.TrimRight(line, " \t\r\n\v\f")
	i := bytes.LastIndexByte(t, '^')
	if i < 0 || len(t)-i < 4 {
		return nil
	}
	id := t[i+1:]
	if id[0] < 'a' || id[0] > 'z' || id[1] != '-' {
		return nil
	}
	digits := 0
	for _, c := range id[2:] {
		if c < '0' || c > '9' {
			break
		}
		digits++
	}
	if digits == 0 {
		return nil
	}
	if tail := id[2+digits:]; len(tail) > 0 && (len(tail) < 2 || tail[0] != '-' || vault.MachineName(string(tail[1:])) != string(tail[1:])) {
		return nil
	}
	return id
}

// readCompacted puts the entries a compaction moved to the session's
// archive note (and, before it, to its older update log) before those st
// read from d (the current state, or an archived record), so that st holds
// the whole session. A note that was never compacted reads nothing more; an
// archive that is missing or broken is an error naming it.
func (s *Service) readCompacted(d *Doc, st *State) error {
	if st.Session == "" || d.IntProp(PropCompacted) <= 0 && d.IntProp(PropCompactedInvocations) <= 0 {
		return nil
	}
	var updates []Update
	var invocations []AgentInvocation
	for _, rel := range []string{UpdatesLogPath(st.Project, st.Session), ArchivePath(st.Project, st.Session)} {
		data, err := s.V.ReadFile(rel)
		if errors.Is(err, os.ErrNotExist) && !(rel == ArchivePath(st.Project, st.Session) && d.Prop(propArchive) != "") {
			continue // a session compacted before the archive note has only its update log, and the reverse
		}
		if err != nil {
			return fmt.Errorf("reading the archived entries of session %s: %w", st.Session, err)
		}
		ad, err := s.ParseDoc(rel, data)
		if err != nil {
			return err
		}
		updates = append(updates, readEntries(ad, st, SecUpdates, parseUpdate)...)
		invocations = append(invocations, readEntries(ad, st, SecInvocations, parseInvocation)...)
		st.Compactions = append(readEntries(ad, st, SecCompactions, parseCompaction), st.Compactions...)
	}
	st.Updates = append(updates, st.Updates...)
	st.Workflow.AgentHistory = append(invocations, st.Workflow.AgentHistory...)
	return nil
}
