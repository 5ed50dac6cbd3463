package features

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/commandlog"
	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// The .ai-session exchange (importer.AISession): export writes a
// project's feature notes and command history in that layout; import reads
// one back into feature notes and command logs. The notes stay the source
// of truth: state.yaml is derived on export and not imported.
//
// History entries belong to the feature that was the session's active
// feature when they were recorded. Entries recorded with no active feature
// (or naming a feature whose note is gone) have no place in the layout,
// which keeps history per feature: export leaves them out and counts them
// (AIExportReport.Unassigned). Imported entries go to a new command log per
// feature and import, <project>/sessions/import-<feature-id>[-N]/commands.md,
// oldest first; an entry the vault already holds (the same fields, the same
// feature, as many times as the source has it) is not imported again.

// AIExportReport is what ExportAISession read.
type AIExportReport struct {
	Features int `json:"features"`
	Entries  int `json:"entries"`
	// Unassigned counts the history entries left out: recorded with no
	// active feature, or naming a feature with no note.
	Unassigned int               `json:"unassigned"`
	Problems   []session.Problem `json:"problems,omitempty"`
}

// ExportAISession reads project's features and command history as an
// .ai-session folder (importer.AISession; its Files are the bytes to
// write). Feature note lines and log lines that cannot be read are left out
// and reported in Problems.
func (s *Service) ExportAISession(project string) (importer.AISession, AIExportReport, error) {
	var a importer.AISession
	var rep AIExportReport
	project, err := s.Project(project)
	if err != nil {
		return a, rep, err
	}
	features, err := s.featuresOf(project)
	if err != nil {
		return a, rep, err
	}
	logs, err := s.commandLogs(project)
	if err != nil {
		return a, rep, err
	}
	byFeature := map[string][]importer.AIHistoryEntry{}
	known := map[string]bool{}
	for _, f := range features {
		known[f.ID] = true
	}
	for _, l := range logs {
		rep.Problems = append(rep.Problems, l.Problems...)
		for _, e := range l.Entries {
			if e.FeatureID == "" || !known[e.FeatureID] {
				rep.Unassigned++
				continue
			}
			byFeature[e.FeatureID] = append(byFeature[e.FeatureID], importer.AIHistoryEntry{Timestamp: e.Timestamp, Command: e.Command,
				Arguments: e.Arguments, Model: e.Model, Agent: e.Agent, TaskID: e.TaskID, Status: e.Status, DurationMs: e.DurationMs, Error: e.Error})
		}
	}
	for _, f := range features {
		rep.Problems = append(rep.Problems, f.Problems...)
		af := importer.AIFeature{ID: f.ID, Name: f.Name, Description: f.Description, Status: f.Status,
			CreatedAt: f.CreatedAt, StartedAt: f.StartedAt, LastActive: f.LastActive}
		for _, p := range f.Phases {
			ap := importer.AIPhase{ID: p.ID, Name: p.Name}
			for _, t := range p.Tasks {
				ap.Tasks = append(ap.Tasks, importer.AITask{TaskID: t.TaskID, Description: t.Description, Agent: t.Agent, Status: t.Status,
					StartedAt: t.StartedAt, CompletedAt: t.CompletedAt, Artifacts: slices.Clone(t.Artifacts)})
			}
			af.Phases = append(af.Phases, ap)
		}
		h := byFeature[f.ID]
		// Oldest first; entries of the same second keep their order (their
		// log's, logs in session order).
		sort.SliceStable(h, func(i, j int) bool { return h[i].Timestamp.Before(h[j].Timestamp) })
		af.History = h
		rep.Entries += len(h)
		a.Features = append(a.Features, af)
	}
	rep.Features = len(a.Features)
	return a, rep, nil
}

// AIImportReport is what ImportAISession did.
type AIImportReport struct {
	// Features counts the feature notes made; Existing those already in
	// the vault (kept as they are, tasks they lack added: TasksAdded).
	Features   int `json:"features"`
	Existing   int `json:"existing"`
	TasksAdded int `json:"tasks_added"`
	// Entries counts the history entries imported; Duplicates those the
	// vault already held.
	Entries    int         `json:"entries"`
	Duplicates int         `json:"duplicates"`
	Skipped    []AISkipped `json:"skipped"`
}

// AISkipped is a part of the folder not imported, and why.
type AISkipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// ImportAISession writes the features and history of a (an .ai-session
// folder as read) into project, in one commit: a feature note for each
// feature the vault lacks (its status, times, plan as the folder has them),
// the tasks an existing feature's plan lacks (a task the vault has
// otherwise is kept as the vault has it, and reported), and the history
// entries the vault does not hold yet. Importing the same folder again
// changes nothing (no commit).
func (s *Service) ImportAISession(project string, a importer.AISession) (AIImportReport, vault.Result, error) {
	rep := AIImportReport{Skipped: []AISkipped{}}
	project, err := s.Project(project)
	if err != nil {
		return rep, vault.Result{}, err
	}
	held, err := s.heldEntries(project)
	if err != nil {
		return rep, vault.Result{}, err
	}
	res, err := s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		rep = AIImportReport{Skipped: []AISkipped{}}
		seen := maps.Clone(held)
		for _, f := range a.Features {
			if err := s.importFeature(tx, project, f, &rep); err != nil {
				return vault.Change{}, err
			}
			if !tx.Exists(session.FeaturePath(project, f.ID)) {
				continue // skipped: its history has no feature to go to
			}
			if err := s.importHistory(tx, project, f, seen, &rep); err != nil {
				return vault.Change{}, err
			}
		}
		return vault.Change{Operation: "import", Summary: fmt.Sprintf("ai-session: %d features, %d tasks added, %d history entries", rep.Features, rep.TasksAdded, rep.Entries)}, nil
	})
	return rep, res, err
}

// historyKey identifies a history entry of a feature by all its fields.
func historyKey(feature string, e CommandEntry) string {
	d := int64(-1)
	if e.DurationMs != nil {
		d = *e.DurationMs
	}
	b, _ := json.Marshal([]any{feature, note.FormatTime(e.Timestamp), e.Command, e.Arguments, e.Model, e.Agent, e.TaskID, e.Status, d, e.Error})
	return string(b)
}

// heldEntries counts the vault's history entries by historyKey.
func (s *Service) heldEntries(project string) (map[string]int, error) {
	logs, err := s.commandLogs(project)
	if err != nil {
		return nil, err
	}
	held := map[string]int{}
	for _, l := range logs {
		for _, e := range l.Entries {
			if e.FeatureID != "" {
				held[historyKey(e.FeatureID, e)]++
			}
		}
	}
	return held, nil
}

func (rep *AIImportReport) skip(path, reason string) {
	rep.Skipped = append(rep.Skipped, AISkipped{Path: path, Reason: reason})
}

// importFeature makes f's note, or adds the tasks the existing note lacks.
func (s *Service) importFeature(tx *vault.Tx, project string, f importer.AIFeature, rep *AIImportReport) error {
	planFile := f.ID + "/implementation-plan.yaml"
	if err := CheckFeatureID("feature_id", f.ID); err != nil {
		rep.skip(f.ID+"/", err.Error())
		return nil
	}
	if !slices.Contains(FeatureStatuses, f.Status) {
		rep.skip("active-features.yaml", fmt.Sprintf("feature %s: status %q is not one of %s", f.ID, f.Status, strings.Join(FeatureStatuses, ", ")))
		return nil
	}
	if session.CheckFields("name", f.Name, "description", f.Description) != nil || len(f.Name) > 800 || len(f.Description) > 8000 {
		rep.skip(planFile, "feature "+f.ID+": its name or description is too long or holds a NUL byte")
		return nil
	}
	rel := session.FeaturePath(project, f.ID)
	var d *session.Doc
	existing := tx.Exists(rel)
	if existing {
		var err error
		if d, _, err = s.featureDoc(tx, project, f.ID); err != nil {
			return err
		}
		rep.Existing++
	} else {
		var err error
		if d, err = s.newFeatureDoc(tx, project, Feature{ID: f.ID, Name: session.FirstNonEmpty(f.Name, f.ID), Description: f.Description,
			Status: f.Status, CreatedAt: f.CreatedAt, StartedAt: f.StartedAt, LastActive: f.LastActive}); err != nil {
			return err
		}
		rep.Features++
	}
	orig, _ := d.Bytes()
	for _, p := range f.Phases {
		name, id := session.FirstNonEmpty(p.Name, p.ID), p.ID
		if id == "" {
			id = slugOr(name, "phase")
		}
		if !planIDRe().MatchString(id) || session.CheckText("phase", name, 200) != nil {
			rep.skip(planFile, fmt.Sprintf("phase %q (%q): its id or name cannot be written as a section", id, name))
			continue
		}
		cur := readFeature(d, project)
		if !slices.ContainsFunc(cur.Phases, func(ph Phase) bool { return phaseMatches(ph, name, id) }) && len(p.Tasks) == 0 {
			d = s.reparsed(d, func(d *session.Doc) { addPhase(d, cur, name, id, nil) })
		}
		for _, t := range p.Tasks {
			where := planFile
			if t.Line > 0 {
				where += ":" + strconv.Itoa(t.Line)
			}
			pt := PlanTask{TaskID: t.TaskID, Description: t.Description, Agent: t.Agent, Status: t.Status, StartedAt: t.StartedAt, CompletedAt: t.CompletedAt, Artifacts: session.NonNil(slices.Clone(t.Artifacts))}
			desc, agent, status := pt.Description, pt.Agent, pt.Status
			o := PlanOptions{TaskID: pt.TaskID, Description: &desc, Agent: &agent, Status: &status, Artifacts: pt.Artifacts}
			if pt.Description == "" {
				o.Description = nil
			}
			if err := o.validate(); err != nil {
				rep.skip(where, "task "+pt.TaskID+" skipped: "+err.Error())
				continue
			}
			cur := readFeature(d, project)
			if have, _, ok := cur.Task(pt.TaskID); ok {
				if !reflectEqualTask(have, pt) {
					rep.skip(where, "task "+pt.TaskID+" differs from the vault's plan of "+f.ID+"; the vault's is kept")
				}
				continue
			}
			var perr error
			d = s.reparsed(d, func(d *session.Doc) { perr = s.putPlanTask(tx, d, cur, name, id, pt, false) })
			if perr != nil {
				return perr
			}
			if existing {
				rep.TasksAdded++
			}
		}
	}
	b, err := d.Bytes()
	if err != nil {
		return err
	}
	if !existing || !bytes.Equal(b, orig) {
		return tx.Write(rel, b)
	}
	return nil
}

// reparsed applies edit to d and returns the note parsed again (edits of
// one parse cannot build on each other).
func (s *Service) reparsed(d *session.Doc, edit func(*session.Doc)) *session.Doc {
	edit(d)
	b, err := d.Bytes()
	if err != nil {
		return d
	}
	nd, err := s.ParseDoc(d.Path, b)
	if err != nil {
		return d
	}
	return nd
}

// importHistory appends f's entries that the vault does not hold to a new
// import log of f.
func (s *Service) importHistory(tx *vault.Tx, project string, f importer.AIFeature, seen map[string]int, rep *AIImportReport) error {
	file := f.ID + "/history.jsonl"
	var entries []CommandEntry
	for _, h := range f.History {
		where := file
		if h.Line > 0 {
			where += ":" + strconv.Itoa(h.Line)
		}
		e := CommandEntry{Timestamp: h.Timestamp.UTC().Truncate(time.Second), Command: h.Command, Arguments: h.Arguments,
			Model: commandlog.Identifier(h.Model), Agent: commandlog.Identifier(h.Agent), TaskID: h.TaskID, Status: h.Status, DurationMs: h.DurationMs, Error: h.Error, FeatureID: f.ID}
		o := RecordOptions{Command: e.Command, Arguments: e.Arguments, Error: e.Error, Model: e.Model, Agent: e.Agent, TaskID: e.TaskID, Status: e.Status, DurationMs: e.DurationMs}
		if err := o.validate(); err != nil {
			rep.skip(where, "history entry skipped: "+err.Error())
			continue
		}
		k := historyKey(f.ID, e)
		if seen[k] > 0 {
			seen[k]--
			rep.Duplicates++
			continue
		}
		e.featureLinked = true
		e.taskLinked = e.TaskID != "" && vault.CheckName("task id", e.TaskID) == nil && tx.Exists(session.TaskPath(project, e.TaskID))
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Timestamp.Before(entries[j].Timestamp) })
	sessionID := "import-" + f.ID
	for n := 2; tx.Exists(session.CommandLogPath(project, sessionID)) || tx.Exists(project+"/"+session.SessionsDir+"/"+sessionID+".md"); n++ {
		sessionID = "import-" + f.ID + "-" + strconv.Itoa(n)
	}
	rel := session.CommandLogPath(project, sessionID)
	head, err := s.Render(session.CommandsNote, map[string]string{"Project": note.Scalar(project), "Session": note.Scalar(sessionID),
		"Started": note.FormatTime(entries[0].Timestamp),
		"Intro":   "The command history of feature " + session.FeatureLink(project, f.ID) + ", imported from an .ai-session folder. Append-only: sessionvault never rewrites a line."})
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.Write(head)
	for i, e := range entries {
		e.ID = "h-" + strconv.Itoa(i+1) + s.IdSuffix()
		b.WriteString(formatCommand(project, e) + "\n")
	}
	rep.Entries += len(entries)
	return tx.Write(rel, b.Bytes())
}
