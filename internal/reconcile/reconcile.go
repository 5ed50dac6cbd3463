package reconcile

// Reconciliation after merges from other machines (through a git remote).
// The merge driver merges one note at a time; what spans notes is settled
// here, once the merge is made, by one commit:
//
//   - two machines that each started a session before they synced: the
//     merged current state holds one (notemerge.SessionWinner); the other is
//     recorded as sessions/<id>.md, abandoned, with everything it held;
//   - a machine that went on recording a session another machine had
//     ended: what it recorded joins that session's record;
//   - updates a compaction moved to the session's update log on one machine
//     and a merge brought back into the current state from another: taken
//     out of the current state again (they are in the log).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/notemerge"
	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// reconciledState is the state file holding the HEAD the last
// reconciliation ran at: merges after it are looked at.
const reconciledState = "reconciled"

// ReconcileReport is what Reconcile did.
type ReconcileReport struct {
	Merges int `json:"merges"` // merges looked at
	// Abandoned names the sessions (project/session) another machine's
	// session won the current state from: each is now recorded, status
	// abandoned, in its project's sessions/ folder.
	Abandoned []string `json:"abandoned,omitempty"`
	// Joined names the session records (project/session) that got what a
	// machine recorded after another machine had ended the session.
	Joined []string `json:"joined,omitempty"`
	// Moved counts the updates taken out of a current state because a
	// compaction had already moved them to the session's update log.
	Moved  int    `json:"moved,omitempty"`
	Commit string `json:"commit,omitempty"` // the commit, when something changed
}

// lostSession is one side of a merge whose session the merged current
// state does not hold.
type lostSession struct {
	project, session string
	side             []byte // that side's current state
}

// Reconcile settles, in one commit, what the merges since the last
// reconciliation (by `remote sync`, `git pull` or Obsidian Git; at most the
// newest 100 the first time) left across notes: see the file comment. It is
// idempotent: a merge looked at again changes nothing.
func (s *Service) Reconcile() (ReconcileReport, error) {
	var rep ReconcileReport
	since, _ := s.V.ReadState(reconciledState)
	merges, head, err := s.V.MergesSince(strings.TrimSpace(string(since)))
	if err != nil {
		return rep, err
	}
	rep.Merges = len(merges)
	var lost []lostSession
	for _, m := range merges {
		l, err := s.lostSessions(m)
		if err != nil {
			return rep, err
		}
		lost = append(lost, l...)
	}
	projects, err := s.ProjectNames()
	if err != nil {
		return rep, err
	}
	res, err := s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		rep.Abandoned, rep.Joined, rep.Moved = nil, nil, 0
		now := s.NowUTC()
		for _, l := range lost {
			kept, err := s.keepLostSession(tx, l, now)
			if err != nil {
				return vault.Change{}, err
			}
			switch kept {
			case keptRecorded:
				rep.Abandoned = append(rep.Abandoned, l.project+"/"+l.session)
			case keptJoined:
				rep.Joined = append(rep.Joined, l.project+"/"+l.session)
			}
		}
		for _, p := range projects {
			n, err := s.dropCompacted(tx, p)
			if err != nil {
				return vault.Change{}, err
			}
			rep.Moved += n
		}
		var parts []string
		if len(rep.Abandoned) > 0 {
			parts = append(parts, "recorded "+strings.Join(rep.Abandoned, ", ")+" (another machine's session holds the current state)")
		}
		if len(rep.Joined) > 0 {
			parts = append(parts, "added to the record of "+strings.Join(rep.Joined, ", ")+" what another machine recorded after it ended")
		}
		if rep.Moved > 0 {
			parts = append(parts, fmt.Sprintf("took %d updates already in the update log out of the current state", rep.Moved))
		}
		return vault.Change{Operation: "reconcile", Summary: strings.Join(parts, "; ")}, nil
	})
	if err != nil {
		return rep, err
	}
	rep.Commit = res.Commit
	if err := s.V.WriteState(reconciledState, []byte(head+"\n")); err != nil {
		return rep, err
	}
	return rep, nil
}

// lostSessions returns the sides of merge m whose session the merged
// current state of a project does not hold.
func (s *Service) lostSessions(m vault.MergeCommit) ([]lostSession, error) {
	changed, err := s.V.DiffNames(m.Ours, m.Theirs)
	if err != nil {
		return nil, err
	}
	var out []lostSession
	for _, rel := range changed {
		project, name, ok := strings.Cut(rel, "/")
		if !ok || name != session.CurrentStateNote {
			continue
		}
		read := func(commit string) (*session.Doc, []byte, error) {
			b, err := s.V.ReadAt(commit, rel)
			if errors.Is(err, os.ErrNotExist) {
				return nil, nil, nil
			}
			if err != nil {
				return nil, nil, err
			}
			d, err := s.ParseDoc(rel, b)
			if err != nil {
				return nil, nil, nil // a note that does not parse has no session to keep apart
			}
			return d, b, nil
		}
		ours, ob, err := read(m.Ours)
		if err != nil {
			return nil, err
		}
		theirs, tb, err := read(m.Theirs)
		if err != nil {
			return nil, err
		}
		if ours == nil || theirs == nil || ours.Prop("session") == theirs.Prop("session") {
			continue
		}
		merged, _, err := read(m.Commit)
		if err != nil {
			return nil, err
		}
		kept := ""
		if merged != nil {
			kept = merged.Prop("session")
		}
		for _, side := range []struct {
			d *session.Doc
			b []byte
		}{{ours, ob}, {theirs, tb}} {
			id := side.d.Prop("session")
			if id == "" || id == kept {
				continue
			}
			out = append(out, lostSession{project: project, session: id, side: side.b})
		}
	}
	return out, nil
}

// How keepLostSession kept a session.
const (
	keptAlready  = iota // its record already held everything
	keptRecorded        // recorded, abandoned
	keptJoined          // merged into the record another machine made
)

// keepLostSession keeps what l's side held of its session: as the
// session's record, abandoned, when there is none; merged by entry into the
// record when the session was ended elsewhere.
func (s *Service) keepLostSession(tx *vault.Tx, l lostSession, now time.Time) (int, error) {
	rel := l.project + "/" + session.SessionsDir + "/" + l.session + ".md"
	if err := vault.CheckPath(rel); err != nil {
		return keptAlready, err
	}
	cur := l.project + "/" + session.CurrentStateNote
	if !tx.Exists(rel) {
		d, err := s.ParseDoc(cur, l.side)
		if err != nil {
			return keptAlready, err
		}
		st := d.ReadState(l.project)
		winner := ""
		if c, err := s.ReadDoc(tx, cur); err == nil && c.Prop("session") != "" {
			winner = " " + c.Prop("session")
		}
		summary := "Abandoned: session" + winner + " was started on another machine before the two synced; the current state holds that one, and this record holds what this session had at the merge."
		return keptRecorded, s.Record(tx, d, st, session.StatusAbandoned, "", summary, nil, now)
	}
	record, err := s.ReadDoc(tx, rel)
	if err != nil {
		return keptAlready, err
	}
	side, err := s.ParseDoc(cur, l.side)
	if err != nil {
		return keptAlready, nil // a side that does not parse: its lines are in its commit
	}
	if !joinRecord(record, side) {
		return keptAlready, nil
	}
	b, err := record.Bytes()
	if err != nil {
		return keptAlready, err
	}
	return keptJoined, tx.Write(rel, b)
}

// joinRecord queues on record (a session's record) what side (a current
// state holding the same session) has and the record lacks: entries whose
// block id the record does not hold, placed in time order in the section
// of the same title, and a person's lines (not headings, list items or
// checklist items) not found in that section, at its end — in the sections
// the engine renders; a person's own sections stay where the merge kept
// them, in the current state. It reports
// whether anything was missing. Joining the same side again adds nothing.
func joinRecord(record, side *session.Doc) bool {
	have := session.NewKeyIndex(record.Body)
	added := false
	for _, sec := range side.MD.Sections {
		if sec.Level != 2 || !ownedSection(session.CurrentStateNote, "session-state", sec.Title) {
			continue // a person's own section: the merge kept it in the current state
		}
		var entries, others []string
		rs, found := record.Section(sec.Title)
		var present map[string]bool
		if found {
			present = map[string]bool{}
			for _, l := range markdown.Lines(record.Body, rs.BodyStart, rs.End) {
				present[strings.TrimRight(string(l.Content()), " \t\r\n")] = true
			}
		}
		for _, l := range markdown.Lines(side.Body, sec.BodyStart, sec.End) {
			t := strings.TrimRight(string(l.Content()), " \t\r\n")
			if id := session.IdTail(l.Content()); id != nil {
				if !have.Has("^" + string(id)) {
					entries = append(entries, t)
				}
				continue
			}
			trim := strings.TrimSpace(t)
			if trim == "" || strings.HasPrefix(trim, "#") || strings.HasPrefix(trim, "- ") || strings.HasPrefix(trim, "> ") || present[t] {
				continue
			}
			others = append(others, t)
		}
		if len(entries)+len(others) == 0 {
			continue
		}
		added = true
		if !found {
			record.AppendNewSection(sec.Title, strings.Join(append(entries, others...), record.Newline())+record.Newline())
			continue
		}
		lines := markdown.Lines(record.Body, rs.BodyStart, rs.End)
		nl := record.Newline()
		for _, e := range entries {
			// After the last entry of the section not later than e, else
			// before its first entry, else at its start.
			at, when := -1, notemerge.EntryTime(e)
			first := -1
			for _, l := range lines {
				c := string(l.Content())
				if session.IdTail(l.Content()) == nil {
					continue
				}
				if first < 0 {
					first = l.Offset
				}
				if t := notemerge.EntryTime(c); !t.IsZero() && !when.IsZero() && !t.After(when) {
					at = l.Offset + len(l.Text)
				}
			}
			switch {
			case at >= 0:
			case first >= 0 && !when.IsZero():
				at = first
			default:
				at = lastContentEnd(record.Body, lines, rs.BodyStart)
			}
			record.Edit(at, at, e+nl)
		}
		if len(others) > 0 {
			at := lastContentEnd(record.Body, lines, rs.BodyStart)
			record.Edit(at, at, strings.Join(others, nl)+nl)
		}
	}
	return added
}

// lastContentEnd is the offset just after the last non-blank line of a
// section's lines (after its first line break when all are blank, so that
// what goes there follows the heading's blank line).
func lastContentEnd(body []byte, lines []markdown.Line, start int) int {
	end := -1
	for _, l := range lines {
		if strings.TrimSpace(string(l.Content())) != "" {
			end = l.Offset + len(l.Text)
		}
	}
	if end >= 0 {
		return end
	}
	if len(lines) > 0 {
		return lines[0].Offset + len(lines[0].Text)
	}
	return start
}

// dropCompacted takes out of project's current state the entries (updates,
// agent invocations, compaction records) its session's archive note, or its
// older update log, already holds (a compaction moved them; a merge brought
// them back) and returns how many.
func (s *Service) dropCompacted(tx *vault.Tx, project string) (int, error) {
	cur := project + "/" + session.CurrentStateNote
	d, err := s.ReadDoc(tx, cur)
	if err != nil {
		return 0, err
	}
	st := d.ReadState(project)
	if st.Session == "" || d.IntProp(session.PropCompacted) <= 0 && d.IntProp(session.PropCompactedInvocations) <= 0 {
		return 0, nil
	}
	var logs [][]byte
	for _, rel := range []string{session.UpdatesLogPath(project, st.Session), session.ArchivePath(project, st.Session)} {
		log, err := tx.Read(rel)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		logs = append(logs, log)
	}
	var ins []*session.KeyIndex
	for _, log := range logs {
		ins = append(ins, session.NewKeyIndex(log))
	}
	n := 0
	for _, k := range []struct {
		section string
		letter  byte
	}{{session.SecUpdates, 'u'}, {session.SecInvocations, 'a'}, {session.SecCompactions, 'k'}} {
		for _, l := range session.EntryLines(d, k.section, k.letter) {
			key := "^" + string(session.IdTail(l.Content()))
			if slices.ContainsFunc(ins, func(in *session.KeyIndex) bool { return in.Has(key) }) {
				d.Edit(l.Offset, l.Offset+len(l.Text), "")
				n++
			}
		}
	}
	if n == 0 {
		return 0, nil
	}
	b, err := d.Bytes()
	if err != nil {
		return 0, err
	}
	return n, tx.Write(cur, b)
}

// HeartbeatRefs is the ref namespace heartbeats travel in between machines
// (vault.SyncOptions.SideRefs): refs/sessionvault/heartbeat/<machine>, a
// commit outside the branch whose tree holds one file per project, the
// machine's heartbeat state file ("<time> <session>").
const HeartbeatRefs = "refs/sessionvault/heartbeat/"

// ShareHeartbeats is the heartbeat half of `remote sync`: it takes from the
// other machines' heartbeat refs (as fetched) each beat of the session a
// project's current state holds that is later than this machine's record of
// it, then writes this machine's ref from its own beats, and returns that
// ref for the push. So a session that runs on another machine is not
// crashed here while its machine beats, and no heartbeat makes a commit on
// the branch.
func (s *Service) ShareHeartbeats() (string, error) {
	m, err := s.V.Machine()
	if err != nil {
		return "", err
	}
	own := HeartbeatRefs + m.Name
	refs, err := s.V.ReadSideRefs(HeartbeatRefs)
	if err != nil {
		return "", err
	}
	projects, err := s.ProjectNames()
	if err != nil {
		return "", err
	}
	mine := map[string][]byte{}
	for _, p := range projects {
		local, _ := s.V.ReadState("heartbeat-" + p)
		if len(bytes.TrimSpace(local)) > 0 {
			mine[p] = local
		}
		st, err := s.Current(p)
		if err != nil || st.Session == "" {
			continue
		}
		best := s.LastBeat(p, st.Session)
		var take []byte
		for name, files := range refs {
			if name == m.Name {
				continue
			}
			ts, id, _ := strings.Cut(strings.TrimSpace(string(files[p])), " ")
			t, err := time.Parse(time.RFC3339, ts)
			if err != nil || id != st.Session || (best != nil && !t.After(*best)) {
				continue
			}
			best, take = &t, files[p]
		}
		if take != nil {
			if err := s.V.WriteState("heartbeat-"+p, take); err != nil {
				return "", err
			}
		}
	}
	if len(mine) == 0 {
		return "", nil
	}
	return own, s.V.WriteSideRef(own, mine)
}
