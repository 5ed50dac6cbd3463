package session

import (
	"bytes"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Ending a session: the archive note, the history and the state note reset
// to idle.

// End finishes the active session: active -> ending -> complete. The session
// is archived to sessions/<id>.md, added to session-history.md, and the
// current state is left idle with a link to it — one commit.
func (s *Service) End(project, summary string, next []string) (Outcome, error) {
	if err := CheckFields(append([]string{"project", project, "summary", summary}, Pairs("next", next)...)...); err != nil {
		return Outcome{}, err
	}
	if summary != "" {
		if err := CheckText("summary", summary, 2000); err != nil {
			return Outcome{}, err
		}
	}
	project, err := s.Project(project)
	if err != nil {
		return Outcome{}, err
	}
	var out Outcome
	out.Result, err = s.Transact(&out, func(tx *vault.Tx) (vault.Change, error) {
		d, st, err := s.ActiveDoc(tx, project, true)
		if err != nil {
			return vault.Change{}, err
		}
		now := s.NowUTC()
		// The phase the session ends in: COMPLETE through a passing end
		// gate, VIOLATION when MUSTs of the end checklist were unmet (they
		// go to the violations log, and the outcome names them).
		phase := PhaseComplete
		out.Violations, out.Unmet = nil, nil
		if proto, err := s.Protocol(project); err == nil {
			rep := s.Report(&st, proto, d) // both checklists: a SHOULD of either is reported
			var missing []Missing
			for _, m := range rep.Must {
				if strings.HasPrefix(m.ID, "e-") { // the end gate: the end checklist's MUSTs
					missing = append(missing, m)
				}
			}
			if len(missing) > 0 {
				if err := s.logViolations(tx, st, string(protocol.End), missing, now); err != nil {
					return vault.Change{}, err
				}
				phase, out.Violations = PhaseViolation, missing
			}
			out.Unmet = rep.Should
			// What the engine observed goes into the record: each item
			// shows what satisfied it.
			if d, err = s.tickObserved(d, st); err != nil {
				return vault.Change{}, err
			}
		}
		if err := s.archive(tx, d, st, StatusComplete, phase, summary, next, now); err != nil {
			return vault.Change{}, err
		}
		out.Phase = phase
		out.ID = st.Session
		return vault.Change{Operation: "end", Session: st.Session, Summary: FirstNonEmpty(summary, st.Objective)}, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if !out.Repeat {
		_ = s.V.WriteState("heartbeat-"+project, nil) // a heartbeat names its session: an ended one's counts for nothing
		s.setWorking(project, "")                     // ended here: nothing to tell this machine's agent about it
	}
	s.commitSessionLog(project, out.ID, &out.Result) // the session's command history is in git by its end
	s.packLooseObjects(&out.Result)
	out.State, err = s.Current(project)
	return out, err
}

// tickObserved returns d with the checklist lines of st's items that are
// done by what the engine observed (Report) ticked with that evidence, and
// the lines of stale items marked so, re-read; d itself when none changed.
func (s *Service) tickObserved(d *Doc, st State) (*Doc, error) {
	items := map[string]CheckItem{}
	for _, it := range append(append([]CheckItem{}, st.StartChecklist...), st.EndChecklist...) {
		items[it.ID] = it
	}
	changed := false
	for _, title := range []string{SecStart, SecEnd} {
		for _, l := range d.SectionLines(title) {
			c, ok := parseCheck(string(l.Content()))
			if !ok {
				continue
			}
			it, ok := items[c.ID]
			if !ok {
				continue
			}
			switch {
			case it.Done && strings.HasPrefix(it.Evidence, observedPrefix) && (!c.Done || c.Evidence != it.Evidence):
				c.Done, c.Evidence = true, it.Evidence
			case it.Stale != "" && c.Done:
				c.Done, c.Evidence = false, "stale: "+it.Stale
			default:
				continue
			}
			d.ReplaceLine(l.Offset, FormatCheck(c))
			changed = true
		}
	}
	if !changed {
		return d, nil
	}
	b, err := d.Bytes()
	if err != nil {
		return nil, err
	}
	nd, err := s.ParseDoc(d.Path, b)
	if err != nil {
		return nil, err
	}
	nd.Loc = d.Loc
	return nd, nil
}

// archive writes the session record sessions/<id>.md from the current-state
// note (with the end's summary and next steps), adds it to the history and
// resets the current state to idle.
func (s *Service) archive(tx *vault.Tx, d *Doc, st State, status, phase, summary string, next []string, now time.Time) error {
	if err := s.Record(tx, d, st, status, phase, summary, next, now); err != nil {
		return err
	}
	return resetState(tx, d, st, status, now)
}

// Record writes the session record sessions/<id>.md of session st from d (a
// current-state note holding it) with status, phase (kept when ""), the
// summary and next steps, points the session's decisions at the record and
// adds the session to the project's history. d itself is not changed.
func (s *Service) Record(tx *vault.Tx, d *Doc, st State, status, phase, summary string, next []string, now time.Time) error {
	rel := st.Project + "/" + SessionsDir + "/" + st.Session + ".md"
	if err := vault.CheckPath(rel); err != nil {
		return err
	}
	if tx.Exists(rel) {
		return errs.New(errs.SessionAlreadyActive, "cannot archive session %s: %s already exists", st.Session, rel).With("note", rel)
	}
	if len(next) == 0 {
		next = st.NextSteps
	}
	a, err := s.ParseDoc(rel, d.Note.Bytes())
	if err != nil {
		return err
	}
	if phase != "" {
		a.Set("phase", phase)
	}
	a.Retitle(st.Session)
	a.Set("type", "session")
	a.Set("status", status)
	a.Set("ended", now)
	a.Set("updated", now)
	if st.Started != nil {
		a.Set("duration_minutes", int(now.Sub(*st.Started).Minutes()))
	}
	a.Set("summary", OneLine(summary))
	a.SetSection(SecNext, append(BulletLines(next), a.OtherLines(SecNext)...))
	if summary != "" {
		a.SetSection(SecSummary, []string{summary})
	}
	ab, err := a.Bytes()
	if err != nil {
		return err
	}
	if err := tx.Write(rel, ab); err != nil {
		return err
	}
	if err := s.relinkSession(tx, st); err != nil {
		return err
	}
	st.Summary, st.NextSteps, st.Status = summary, next, status
	st.Ended = &now
	return s.AddToHistory(tx, st, now)
}

// resetState makes the current-state note d idle after session st ended
// with status.
func resetState(tx *vault.Tx, d *Doc, st State, status string, now time.Time) error {
	d.Set("status", StatusIdle)
	d.Set("session", "")
	d.Set("objective", "")
	d.Set("progress", 0)
	d.Set("progress_start", 0)
	d.Set("epic", "")
	d.Set("linear", "")
	d.Set("branch", "")
	d.Set("commit", "")
	d.Set("started", nil) // empty, not "": Obsidian types it datetime
	d.Set("continues", "")
	d.Set("phase", "")
	d.Set("last_session", SessionLink(st.Project, st.Session))
	BumpVersion(d, st, now)
	d.SetSection(SecObjective, []string{"_No active session._ The last one was " + SessionLink(st.Project, st.Session) + " (" + status + ")."})
	for _, sec := range []string{SecStart, SecUpdates, SecDecisions, SecBlockers, SecEnd, SecNext} {
		d.SetSection(sec, nil)
	}
	if _, ok := d.Section(SecCompactions); ok {
		d.SetSection(SecCompactions, nil)
	}
	d.resetWorkflow()
	b, err := d.Bytes()
	if err != nil {
		return err
	}
	return tx.Write(d.Path, b)
}

// relinkSession points the links that stood for session st while it was
// active (activeSessionLink, in its decision notes and its lines of
// session-decisions.md) at its record, now that archive has written it. Only
// that link text changes; a decision note that no longer has it (a person
// rewrote the line) or no longer exists is left as it is.
func (s *Service) relinkSession(tx *vault.Tx, st State) error {
	from, to := []byte(activeSessionLink(st.Project, st.Session)), []byte(SessionLink(st.Project, st.Session))
	for _, dec := range st.Decisions {
		rel := dec.Note + ".md"
		if vault.CheckPath(rel) != nil || !tx.Exists(rel) {
			continue
		}
		var out []byte
		if _, err := tx.ReadNote(rel, func(data []byte) error {
			if bytes.Contains(data, from) {
				out = bytes.ReplaceAll(data, from, to)
			}
			return nil
		}); err != nil {
			return err
		}
		if out != nil {
			if err := tx.Write(rel, out); err != nil {
				return err
			}
		}
	}
	if len(st.Decisions) == 0 {
		return nil
	}
	_, _, rel := Paths(st.Project)
	dd, err := s.ReadDoc(tx, rel)
	if err != nil {
		return err
	}
	b, err := dd.Bytes()
	if err != nil || !bytes.Contains(b, from) {
		return err
	}
	return tx.Write(rel, bytes.ReplaceAll(b, from, to))
}
