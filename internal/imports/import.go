package imports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// ImportReport summarises an import of session logs.
type ImportReport struct {
	Sessions  int `json:"sessions"`  // archived sessions written
	Decisions int `json:"decisions"` // decision notes written
	Unchanged int `json:"unchanged"` // sessions already in the vault with the same bytes (or, for sources whose text the record keeps, from the same text)
	// Updated counts records rewritten because their source grew or changed
	// since an earlier import and nobody had edited the record since
	// (sources whose text the record keeps: Claude Code session notes,
	// aider chats).
	Updated int                `json:"updated"`
	Skipped []importer.Skipped `json:"skipped"` // sessions not written, and why
	// DryRun is true when nothing was written (--dry-run): the counts say
	// what an import would do.
	DryRun bool `json:"dry_run,omitempty"`
	// Records says, per source read, what the import did (or, in a dry run,
	// would do) with its record; the skipped ones are in Skipped.
	Records []RecordOutcome `json:"records,omitempty"`
}

// RecordOutcome is what an import did with one source's record.
type RecordOutcome struct {
	Source string `json:"source"` // the source's path, as in Skipped
	Record string `json:"record"` // the record's path in the vault
	// Action is "import" (a new record), "update" (rewritten from a
	// source that changed) or "unchanged".
	Action string `json:"action"`
}

// ImportSessions writes parsed session logs as archived sessions of the
// project — sessions/<id>.md with their checklists, updates, decisions and
// outcomes; a note per decision in decisions/; lines in session-decisions.md
// and entries in session-history.md — all in one commit. The notes are
// rendered only from the logs (no clock), so a second import finds them
// byte-identical and changes nothing.
func (s *Service) ImportSessions(project string, logs []importer.Session, progress func(done, total int)) (ImportReport, vault.Result, error) {
	return s.ImportSessionsWith(project, logs, ImportOptions{}, progress)
}

// ImportSessionsWith is ImportSessions with options: opt.DryRun reads
// everything and writes nothing, the report saying what an import would do.
func (s *Service) ImportSessionsWith(project string, logs []importer.Session, opt ImportOptions, progress func(done, total int)) (ImportReport, vault.Result, error) {
	rep := ImportReport{DryRun: opt.DryRun}
	project, err := s.Project(project)
	if err != nil {
		return rep, vault.Result{}, err
	}
	res, err := s.V.Transact(func(tx *vault.Tx) (vault.Change, error) {
		rep = ImportReport{DryRun: opt.DryRun} // Transact runs this again when HEAD moved: count once
		for i, l := range logs {
			if err := s.importOne(tx, project, l, &rep); err != nil {
				return vault.Change{}, fmt.Errorf("importing %s: %w", l.SourcePath, err)
			}
			if progress != nil {
				progress(i+1, len(logs))
			}
		}
		if opt.DryRun {
			return vault.Change{}, errDryRun
		}
		return vault.Change{Operation: "import", Summary: fmt.Sprintf("%d sessions and %d decisions from session logs", rep.Sessions, rep.Decisions)}, nil
	})
	if errors.Is(err, errDryRun) {
		return rep, vault.Result{}, nil
	}
	return rep, res, err
}

func (s *Service) importOne(tx *vault.Tx, project string, l importer.Session, rep *ImportReport) error {
	if err := vault.CheckName("session id", l.ID); err != nil {
		rep.Skipped = append(rep.Skipped, importer.Skipped{Path: l.SourcePath, Reason: err.Error()})
		return nil
	}
	rel := project + "/" + session.SessionsDir + "/" + l.ID + ".md"
	st := importedState(project, l)
	started := *st.Started
	// Decisions: a note each, named by the session's date.
	seen := map[string]int{}
	for i, d := range l.Decisions {
		title := session.FirstNonEmpty(d.Title, d.Choice, "Decision "+strconv.Itoa(i+1))
		key := strings.ToLower(session.LinkLabel(title))
		if seen[key]++; seen[key] > 1 {
			title += " (" + strconv.Itoa(seen[key]) + ")"
		}
		dec := session.Decision{ID: "d-" + strconv.Itoa(i+1), Time: started, Title: title, Choice: session.FirstNonEmpty(d.Choice, title),
			Rationale: session.FirstNonEmpty(d.Rationale, "Not recorded in the session log."), Alternatives: d.Alternatives}
		dec.Note = project + "/" + session.DecisionsDir + "/" + started.Format("2006-01-02") + "-" + session.Slug(l.ID+"-"+title)
		st.Decisions = append(st.Decisions, dec)
	}
	data, err := s.renderArchived(st, l)
	if err != nil {
		return err
	}
	if len(data) > note.MaxSize {
		rep.Skipped = append(rep.Skipped, importer.Skipped{Path: l.SourcePath, Reason: fmt.Sprintf("its record would be %d bytes, over the 10 MB a vault note may have", len(data))})
		return nil
	}
	cur, err := tx.Read(rel)
	switch {
	case err == nil && bytes.Equal(cur, data):
		rep.Unchanged++
		rep.Records = append(rep.Records, RecordOutcome{Source: l.SourcePath, Record: rel, Action: "unchanged"})
		return nil
	case err == nil && l.Original != nil:
		return s.reimport(tx, rel, cur, data, st, l, rep)
	case err == nil:
		rep.Skipped = append(rep.Skipped, importer.Skipped{Path: l.SourcePath, Reason: "the vault already has a different " + rel + "; kept the vault's copy"})
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := tx.Write(rel, data); err != nil {
		return err
	}
	rep.Sessions++
	rep.Records = append(rep.Records, RecordOutcome{Source: l.SourcePath, Record: rel, Action: "import"})
	for _, dec := range st.Decisions {
		nrel := dec.Note + ".md"
		if tx.Exists(nrel) {
			continue
		}
		nb, err := s.DecisionNote(st.Session, session.SessionLink(project, st.Session), dec)
		if err != nil {
			return err
		}
		if err := tx.Write(nrel, nb); err != nil {
			return err
		}
		rep.Decisions++
		if err := s.LogDecision(tx, project, session.SessionLink(project, st.Session), dec, started, false); err != nil {
			return err
		}
	}
	when := started
	if st.Ended != nil {
		when = *st.Ended
	}
	return s.AddToHistory(tx, st, when)
}

// importedState is the State of an imported session's record (its
// decisions are added by importOne).
func importedState(project string, l importer.Session) session.State {
	started := l.Date.UTC()
	st := session.State{Project: project, Session: l.ID, Status: session.StatusComplete, Objective: session.FirstNonEmpty(l.Objective, l.ID),
		Branch: l.Branch, Commit: l.StartCommit, Started: &started}
	if !l.Ended.IsZero() {
		e := l.Ended.UTC()
		st.Ended = &e
	}
	st.Summary = strings.Join(l.Outcomes, " ")
	if l.Original != nil {
		st.Summary = strings.Join(l.Outcomes, "; ")
	}
	st.NextSteps = l.NextSteps
	return st
}

// renderArchived renders an imported session's record from the current-state
// template, deterministically.
func (s *Service) renderArchived(st session.State, l importer.Session) ([]byte, error) {
	tmpl, err := s.Render(session.CurrentStateNote, map[string]string{"Project": st.Project, "Now": note.FormatTime(*st.Started)})
	if err != nil {
		return nil, err
	}
	d, err := s.ParseDoc(st.Project+"/"+session.SessionsDir+"/"+st.Session+".md", tmpl)
	if err != nil {
		return nil, err
	}
	d.Retitle(st.Session)
	d.Set("type", "session")
	d.Set("status", session.StatusComplete)
	d.Set("session", st.Session)
	d.Set("objective", st.Objective)
	d.Set("branch", st.Branch)
	d.Set("commit", st.Commit)
	d.Set("end_commit", l.EndCommit)
	d.Set("started", *st.Started)
	d.Set("ended", session.TimeOrEmpty(st.Ended))
	d.Set("summary", clip(session.OneLine(st.Summary), 200))
	d.Set("source", l.SourcePath)
	d.Set("source_format", l.Format)
	d.Set("source_status", session.OneLine(l.Status))
	if len(l.Issues) > 0 {
		d.Set("issues", l.Issues)
	}
	if len(l.Estimated) > 0 {
		d.Set("estimated", l.Estimated) // what the source did not say exactly
	}
	d.SetSection(session.SecObjective, []string{st.Objective})
	var start, end []string
	for _, c := range l.Checklist {
		switch c.Phase {
		case importer.PhaseStart:
			start = append(start, session.FormatCheck(session.CheckItem{ID: "c-" + strconv.Itoa(len(start)+1), Level: c.Level, Step: c.Step, Done: c.Done}))
		case importer.PhaseEnd:
			end = append(end, session.FormatCheck(session.CheckItem{ID: "e-" + strconv.Itoa(len(end)+1), Level: c.Level, Step: c.Step, Done: c.Done}))
		}
	}
	d.SetSection(session.SecStart, start)
	// The source's own checklists (a Todo list) of a record that keeps its
	// source, kept as checklists under their heading.
	var others []string
	lists := map[string][]string{}
	for _, c := range l.Checklist {
		if c.Phase == importer.PhaseStart || c.Phase == importer.PhaseEnd || l.Original == nil {
			continue
		}
		if slices.Contains(session.OwnedSections, c.Phase) || c.Phase == session.SecSummary || c.Phase == secOriginal {
			c.Phase = "Checklist: " + c.Phase
		}
		if _, ok := lists[c.Phase]; !ok {
			others = append(others, c.Phase)
		}
		box := " "
		if c.Done {
			box = "x"
		}
		lists[c.Phase] = append(lists[c.Phase], "- ["+box+"] "+session.OneLine(c.Step))
	}
	var updates []string
	for i, u := range l.Updates {
		if strings.TrimSpace(u) == "" {
			continue
		}
		at := *st.Started
		if i < len(l.UpdateTimes) && !l.UpdateTimes[i].IsZero() {
			at = l.UpdateTimes[i].UTC()
		}
		updates = append(updates, session.FormatUpdate(session.Update{ID: "u-" + strconv.Itoa(i+1), Time: at, Type: "note", Message: u}))
	}
	d.SetSection(session.SecUpdates, updates)
	var decisions []string
	for _, dec := range st.Decisions {
		decisions = append(decisions, session.FormatDecision(dec))
	}
	d.SetSection(session.SecDecisions, decisions)
	d.SetSection(session.SecBlockers, nil)
	d.SetSection(session.SecEnd, end)
	d.SetSection(session.SecNext, session.BulletLines(st.NextSteps))
	if len(l.Outcomes) > 0 {
		d.SetSection(session.SecSummary, session.BulletLines(l.Outcomes))
	}
	for _, title := range others {
		d.SetSection(title, lists[title])
	}
	if l.Original != nil {
		keepOriginal(d, l)
	}
	data, err := d.Bytes()
	if err != nil || !importer.KeepsDigest(l.Format) {
		return data, err
	}
	return stampRecord(s, st.Project+"/"+session.SessionsDir+"/"+st.Session+".md", data)
}

// propRecordSHA is the property of a record that keeps a digest of its
// source (no Reparse): the SHA-256 of the record as the import wrote it,
// without this property. A record that still has it is unedited, and is
// rewritten when its source changed.
const propRecordSHA = "record_sha256"

// stampRecord returns data (a record rel as rendered) with propRecordSHA.
func stampRecord(s *Service, rel string, data []byte) ([]byte, error) {
	d, err := s.ParseDoc(rel, data)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	d.Set(propRecordSHA, hex.EncodeToString(sum[:]))
	return d.Bytes()
}

// unedited reports whether the record rel (its bytes cur) is still as the
// import wrote it: its propRecordSHA matches its bytes without it.
func unedited(s *Service, rel string, cur []byte) bool {
	d, err := s.ParseDoc(rel, cur)
	if err != nil {
		return false
	}
	want := d.Prop(propRecordSHA)
	if want == "" {
		return false
	}
	d.Unset(propRecordSHA)
	b, err := d.Bytes()
	if err != nil {
		return false
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]) == want
}

// clip shortens s to at most n runes, ending in "…" when cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
