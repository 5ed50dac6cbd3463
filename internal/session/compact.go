package session

// History compaction (seed 004 component 7): a long session's older updates
// move from the current-state note to the session's update log, so that the
// note, and every operation that rewrites and commits it, stays small
// however long the session runs. Decisions and blockers never move.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/sessionvault/sessionvault/internal/vault"
)

// Properties of the current state that compaction keeps: the highest update
// id moved to the log (ids go on from it), and a link to the log.
const (
	propCompacted  = "compacted_updates"
	propUpdatesLog = "updates_log"
)

// UpdatesLogPath is the vault-relative path of a session's update log, the
// note its compacted updates move to: <project>/sessions/<session>/updates.md.
func UpdatesLogPath(project, session string) string {
	return project + "/" + SessionsDir + "/" + session + "/updates.md"
}

// nextUpdateID is the id of the next update of the session in d: one past
// the highest in its Updates section or already moved to its log.
func (d *doc) nextUpdateID() string {
	return "u-" + strconv.Itoa(max(d.lastEntryNumber(secUpdates, 'u'), d.intProp(propCompacted))+1)
}

// compact moves the oldest updates of the session in d to its update log
// when the Updates section holds more than the vault's compact_updates
// (config.UpdatesKept), keeping the newest half: the lines move as they are
// (ids included), appended to the log in the order they had; the note
// records the highest id moved and links the log. Lines of the section that
// are not updates (a person's) stay where they are.
func (s *Service) compact(tx *vault.Tx, d *doc, st State) error {
	limit := s.V.Config.UpdatesKept()
	if limit <= 0 {
		return nil
	}
	var entries []int // indexes in lines of the update entries
	lines := d.sectionLines(secUpdates)
	for i, l := range lines {
		if m := idTail(l.Content()); m != nil && m[0] == 'u' {
			entries = append(entries, i)
		}
	}
	if len(entries) <= limit {
		return nil
	}
	move := entries[:len(entries)-limit/2]
	rel := UpdatesLogPath(st.Project, st.Session)
	log, err := tx.Read(rel)
	if errors.Is(err, os.ErrNotExist) {
		log = []byte(fmt.Sprintf("---\nsession: %s\nkind: updates\n---\n\n# Updates of %s\n\nThe older updates of %s, moved here from the current state as the session grew (compaction; newest last).\n\n## Updates\n\n",
			st.Session, st.Session, sessionLink(st.Project, st.Session)))
	} else if err != nil {
		return err
	}
	var b bytes.Buffer
	b.Write(log)
	if len(log) > 0 && log[len(log)-1] != '\n' {
		b.WriteString(d.newline())
	}
	highest := d.intProp(propCompacted)
	inLog := newKeyIndex(log)
	for _, i := range move {
		c := lines[i].Content()
		// Already in the log (another machine moved it, and a merge
		// brought it back into this state): only removed from the note.
		if id := idTail(c); id == nil || !inLog.has("^"+string(id)) {
			b.Write(c)
			b.WriteString(d.newline())
		}
		if n := idNumber(string(idTail(c))); n > highest {
			highest = n
		}
	}
	if err := tx.Write(rel, b.Bytes()); err != nil {
		return err
	}
	// Remove the moved lines, one edit per run of consecutive ones.
	for k := 0; k < len(move); {
		j := k
		for j+1 < len(move) && move[j+1] == move[j]+1 {
			j++
		}
		first, last := lines[move[k]], lines[move[j]]
		d.edit(first.Offset, last.Offset+len(last.Text), "")
		k = j + 1
	}
	d.set(propCompacted, highest)
	d.set(propUpdatesLog, link(rel, st.Session+" updates"))
	return nil
}

// idTail returns the block id ending an entry line (`^u-12`, or
// `^u-12-laptop` from a secondary machine; spaces after it allowed) as
// "u-12" or "u-12-laptop", or nil.
func idTail(line []byte) []byte {
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

// readCompacted puts the updates a compaction moved to the session's update
// log before those st read from d (the current state, or an archived
// record), so that st holds the whole session. A note that was never
// compacted reads nothing more; a log that is missing or broken is an error
// naming it.
func (s *Service) readCompacted(d *doc, st *State) error {
	if d.intProp(propCompacted) <= 0 || st.Session == "" {
		return nil
	}
	rel := UpdatesLogPath(st.Project, st.Session)
	data, err := s.V.ReadFile(rel)
	if err != nil {
		return fmt.Errorf("reading the compacted updates of session %s: %w", st.Session, err)
	}
	ld, err := s.parseDoc(rel, data)
	if err != nil {
		return err
	}
	st.Updates = append(readEntries(ld, st, secUpdates, parseUpdate), st.Updates...)
	return nil
}
