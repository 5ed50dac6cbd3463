package tasks

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Conflicts (the detect_conflicts and resolve_conflict MCP tools): found by
// DetectConflicts among the project's task notes, each recorded once in
// <project>/conflicts.md as an entry line with its id (cf-N), resolved there
// by ResolveConflict.
const (
	ConflictFile       = "file_conflict"
	ConflictLock       = "lock_collision"
	ConflictState      = "state_mismatch"
	ConflictDivergence = "version_divergence"

	// ResolutionStatus values.
	ResolutionUnresolved = "unresolved"
	ResolutionResolved   = "resolved"
	ResolutionIgnored    = "ignored"
)

// ConflictTypes are the types a conflict may have; DetectConflicts finds the
// first four (spec_contradiction and data_inconsistency have no source in
// a vault of notes and are never found).
var ConflictTypes = []string{ConflictState, ConflictFile, "spec_contradiction", ConflictDivergence, ConflictLock, "data_inconsistency"}

// ConflictActions are the actions that resolve a conflict.
var ConflictActions = []string{"use_a", "use_b", "merge", "custom", "ignore"}

// Conflict is a found or recorded conflict.
type Conflict struct {
	ID                  string           `json:"id,omitempty"`
	TaskA               string           `json:"task_a_id"`
	TaskB               string           `json:"task_b_id,omitempty"`
	Type                string           `json:"conflict_type"`
	Severity            string           `json:"severity"`
	Strength            float64          `json:"strength"`
	Description         string           `json:"description"`
	Evidence            ConflictEvidence `json:"evidence"`
	SuggestedResolution string           `json:"suggested_resolution,omitempty"`
	Status              string           `json:"status,omitempty"`
	DetectedAt          time.Time        `json:"detected_at"`
}

// ConflictEvidence is what a conflict was found on.
type ConflictEvidence struct {
	Field         string `json:"field"`
	ExpectedValue any    `json:"expected_value"`
	ActualValue   any    `json:"actual_value"`
	Location      string `json:"location"`
}

// ConflictBrief is a conflict as get_unified_context lists it.
type ConflictBrief struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Severity    string `json:"severity"`
	Description string `json:"description"`
}

// DetectResult is detect_conflicts's result: detected holds what this run
// found for the first time (now recorded, with ids), existing the recorded
// conflicts found again or still unresolved.
type DetectResult struct {
	Detected  []Conflict     `json:"detected"`
	Existing  []Conflict     `json:"existing"`
	Summary   ConflictCounts `json:"summary"`
	Timestamp time.Time      `json:"timestamp"`
	Result    vault.Result   `json:"result"`
}

// ConflictCounts is DetectResult's summary.
type ConflictCounts struct {
	New      int `json:"new_conflicts"`
	Existing int `json:"existing_conflicts"`
	Critical int `json:"critical_count"`
	High     int `json:"high_count"`
}

// key identifies a conflict across runs: its type, tasks and location.
func (c Conflict) key() string {
	a, b := c.TaskA, c.TaskB
	if b != "" && b < a {
		a, b = b, a
	}
	return c.Type + "|" + a + "|" + b + "|" + c.Evidence.Location
}

// DetectConflicts finds conflicts among the active tasks (or those named)
// of the types asked (none: all): file_conflict (shared key files; high
// from 3, strength min(n/5, 1)), lock_collision (a lock held past its
// expiry), state_mismatch (a task note that differs from its last commit),
// version_divergence (a task note both sides of a merge changed). New ones
// are recorded in conflicts.md in one commit (none: no commit). An unknown
// type is errs.InvalidConflictType; an unknown task errs.TaskNotFound.
func (s *Service) DetectConflicts(project string, taskIDs, types []string) (DetectResult, error) {
	for _, t := range types {
		if !slices.Contains(ConflictTypes, t) {
			return DetectResult{}, errs.New(errs.InvalidConflictType, "conflict type %q is not one of %s", t, strings.Join(ConflictTypes, ", ")).With("flag", "type")
		}
	}
	project, err := s.Project(project)
	if err != nil {
		return DetectResult{}, err
	}
	tasks, err := s.tasksOf(project)
	if err != nil {
		return DetectResult{}, err
	}
	byID := taskIndex(tasks)
	for _, id := range taskIDs {
		if _, ok := byID[id]; !ok {
			return DetectResult{}, s.TaskNotFound(errs.TaskNotFound, project, id)
		}
	}
	want := func(t string) bool { return len(types) == 0 || slices.Contains(types, t) }
	in := func(id string) bool { return len(taskIDs) == 0 || slices.Contains(taskIDs, id) }
	now := s.NowUTC()
	var found []Conflict
	if want(ConflictFile) {
		found = append(found, fileConflicts(tasks, in)...)
	}
	if want(ConflictLock) {
		found = append(found, lockConflicts(tasks, in, now)...)
	}
	if want(ConflictState) {
		st, err := s.stateConflicts(tasks, in)
		if err != nil {
			return DetectResult{}, err
		}
		found = append(found, st...)
	}
	if want(ConflictDivergence) {
		div, err := s.divergences(project, tasks, in)
		if err != nil {
			return DetectResult{}, err
		}
		found = append(found, div...)
	}
	res := DetectResult{Detected: []Conflict{}, Existing: []Conflict{}, Timestamp: now}
	res.Result, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		d, recorded, err := s.conflictsDoc(tx, project)
		if err != nil {
			return vault.Change{}, err
		}
		byKey := map[string]Conflict{}
		next := 0
		for _, c := range recorded {
			byKey[c.key()] = c
			next = max(next, session.IdNumber(c.ID))
		}
		seen := map[string]bool{}
		var fresh []Conflict
		for _, c := range found {
			if seen[c.key()] {
				continue
			}
			seen[c.key()] = true
			if r, ok := byKey[c.key()]; ok {
				c.ID, c.Status, c.DetectedAt = r.ID, r.Status, r.DetectedAt
				res.Existing = append(res.Existing, c)
				continue
			}
			next++
			c.ID, c.Status, c.DetectedAt = "cf-"+strconv.Itoa(next)+s.IdSuffix(), ResolutionUnresolved, now
			fresh = append(fresh, c)
		}
		for _, r := range recorded {
			if !seen[r.key()] && r.Status == ResolutionUnresolved && (in(r.TaskA) || in(r.TaskB)) && want(r.Type) {
				res.Existing = append(res.Existing, r)
			}
		}
		res.Detected = append(res.Detected, fresh...)
		if len(fresh) == 0 {
			return vault.Change{}, nil
		}
		for _, c := range fresh {
			d.AppendLine(session.SecConflicts, formatConflict(project, c))
		}
		d.Set("unresolved", countUnresolved(recorded)+len(fresh))
		b, err := d.Bytes()
		if err != nil {
			return vault.Change{}, err
		}
		return vault.Change{Operation: "conflicts-detect", Summary: fmt.Sprintf("%d new conflicts", len(fresh))}, tx.Write(d.Path, b)
	})
	if err != nil {
		return DetectResult{}, err
	}
	for _, c := range append(append([]Conflict(nil), res.Detected...), res.Existing...) {
		switch c.Severity {
		case "critical":
			res.Summary.Critical++
		case "high":
			res.Summary.High++
		}
	}
	res.Summary.New, res.Summary.Existing = len(res.Detected), len(res.Existing)
	return res, nil
}

func shortCommit(h string) string { return h[:min(12, len(h))] }

func countUnresolved(cs []Conflict) int {
	n := 0
	for _, c := range cs {
		if c.Status == ResolutionUnresolved {
			n++
		}
	}
	return n
}

// fileConflicts pairs the active tasks that share key files.
func fileConflicts(tasks []Task, in func(string) bool) []Conflict {
	var out []Conflict
	for i, a := range tasks {
		if !a.Active() {
			continue
		}
		for _, b := range tasks[i+1:] {
			if !b.Active() || (!in(a.ID) && !in(b.ID)) {
				continue
			}
			var shared []string
			for _, f := range a.KeyFiles {
				if slices.Contains(b.KeyFiles, f) {
					shared = append(shared, f)
				}
			}
			if len(shared) == 0 {
				continue
			}
			sort.Strings(shared)
			sev := "medium"
			if len(shared) >= 3 {
				sev = "high"
			}
			out = append(out, Conflict{TaskA: a.ID, TaskB: b.ID, Type: ConflictFile, Severity: sev,
				Strength:            math.Min(float64(len(shared))/5, 1),
				Description:         fmt.Sprintf("%s and %s share %d key files: %s", a.ID, b.ID, len(shared), strings.Join(shared, ", ")),
				Evidence:            ConflictEvidence{Field: "key_files", ExpectedValue: "no key file in two active tasks", ActualValue: shared, Location: "key_files"},
				SuggestedResolution: "finish or pause one task, or split the shared files between them"})
		}
	}
	return out
}

// divergences finds task notes that both parents of a merge changed since
// their merge base (the newest 100 merges).
func (s *Service) divergences(project string, tasks []Task, in func(string) bool) ([]Conflict, error) {
	merges, _, err := s.V.MergesSince("")
	if err != nil || len(merges) == 0 {
		return nil, nil // an unborn branch, or no merge: nothing diverged
	}
	notes := map[string]string{}
	for _, t := range tasks {
		if in(t.ID) {
			notes[t.Note] = t.ID
		}
	}
	var out []Conflict
	for _, m := range merges {
		base, err := s.V.MergeBase(m.Ours, m.Theirs)
		if err != nil || base == "" {
			continue
		}
		ours, err := s.V.DiffNames(base, m.Ours)
		if err != nil {
			return nil, err
		}
		theirs, err := s.V.DiffNames(base, m.Theirs)
		if err != nil {
			return nil, err
		}
		for _, p := range ours {
			id, ok := notes[p]
			if !ok || !slices.Contains(theirs, p) {
				continue
			}
			out = append(out, Conflict{TaskA: id, Type: ConflictDivergence, Severity: "low", Strength: 0.5,
				Description:         fmt.Sprintf("task %s was changed on both sides of merge %s since %s", id, shortCommit(m.Commit), shortCommit(base)),
				Evidence:            ConflictEvidence{Field: "note", ExpectedValue: m.Ours, ActualValue: m.Theirs, Location: "merge " + shortCommit(m.Commit)},
				SuggestedResolution: "check the merged note; use_a restores the first parent's version, use_b the second's"})
		}
	}
	return out, nil
}

// formatConflict renders a conflict's entry line:
// "- [ ] cf-1 · time · type · severity · strength · [[a]] ↔ [[b]] · location · description · unresolved ^cf-1".
func formatConflict(project string, c Conflict) string {
	tasks := session.TaskLink(project, c.TaskA)
	if c.TaskB != "" {
		tasks += " ↔ " + session.TaskLink(project, c.TaskB)
	}
	box := "[ ]"
	if c.Status != ResolutionUnresolved {
		box = "[x]"
	}
	clean := func(v string) string { return strings.ReplaceAll(session.OneLine(v), session.Sep, ", ") }
	return "- " + box + " " + c.ID + session.Sep + note.FormatTime(c.DetectedAt) + session.Sep + c.Type + session.Sep + c.Severity + session.Sep +
		strconv.FormatFloat(c.Strength, 'f', -1, 64) + session.Sep + tasks + session.Sep + clean(c.Evidence.Location) + session.Sep +
		clean(c.Description) + session.Sep + clean(c.Status) + " ^" + c.ID
}

// parseConflict reads an entry line of conflicts.md.
func parseConflict(line string) (Conflict, bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "- [") || len(t) < 6 {
		return Conflict{}, false
	}
	t = strings.TrimSpace(t[5:])
	if i := strings.LastIndex(t, " ^"); i >= 0 {
		t = t[:i]
	}
	f := strings.Split(t, session.Sep)
	if len(f) < 9 {
		return Conflict{}, false
	}
	c := Conflict{ID: f[0], Type: f[2], Severity: f[3], Description: f[7]}
	if tm, err := time.Parse(time.RFC3339, f[1]); err == nil {
		c.DetectedAt = tm
	}
	c.Strength, _ = strconv.ParseFloat(f[4], 64)
	a, b, _ := strings.Cut(f[5], " ↔ ")
	c.TaskA = path0(a)
	c.TaskB = path0(b)
	c.Evidence.Location = f[6]
	status := strings.TrimSpace(strings.Join(f[8:], session.Sep))
	switch word, _, _ := strings.Cut(status, " "); word {
	case ResolutionResolved, ResolutionIgnored, "investigating", "escalated":
		c.Status = word
	default:
		c.Status = ResolutionUnresolved
	}
	return c, true
}

func path0(v string) string {
	if ids := session.TaskIDs([]string{v}); len(ids) > 0 {
		return ids[0]
	}
	return ""
}

// conflictsDoc reads (or makes) conflicts.md and its entries.
func (s *Service) conflictsDoc(tx *vault.Tx, project string) (*session.Doc, []Conflict, error) {
	d, err := s.listNote(tx, project, session.ConflictsNote)
	if err != nil {
		return nil, nil, err
	}
	return d, conflicts(d), nil
}

// listNote reads a list the engine keeps in a project (checkpoints.md,
// conflicts.md) through tx, or — missing — opens it as its template makes
// it, to be written with the first line.
func (s *Service) listNote(tx *vault.Tx, project, name string) (*session.Doc, error) {
	rel := project + "/" + name
	if tx.Exists(rel) {
		return s.ReadDoc(tx, rel)
	}
	b, err := s.Render(name, map[string]string{"Project": note.Scalar(project)})
	if err != nil {
		return nil, err
	}
	return s.ParseDoc(rel, b)
}

func conflicts(d *session.Doc) []Conflict {
	var out []Conflict
	for _, l := range d.SectionLines(session.SecConflicts) {
		if c, ok := parseConflict(string(l.Content())); ok {
			out = append(out, c)
		}
	}
	return out
}

// recordedConflicts reads conflicts.md (none when it is missing).
func (s *Service) recordedConflicts(project string) ([]Conflict, error) {
	rel := project + "/" + session.ConflictsNote
	data, err := s.V.ReadFile(rel)
	if err != nil {
		return nil, nil
	}
	d, err := s.ParseDoc(rel, data)
	if err != nil {
		return nil, err
	}
	return conflicts(d), nil
}

// Conflicts lists the recorded conflicts of project.
func (s *Service) Conflicts(project string) ([]Conflict, error) {
	project, err := s.Project(project)
	if err != nil {
		return nil, err
	}
	return s.recordedConflicts(project)
}

// ResolveOptions are the inputs of ResolveConflict (the resolve_conflict MCP
// tool).
type ResolveOptions struct {
	Project    string
	ID         string
	Action     string // use_a, use_b, merge, custom, ignore
	Value      string // custom's resolved value (recorded)
	Notes      string
	ResolvedBy string // "" = the active session, else this machine
}

// ResolveOutcome is resolve_conflict's result.
type ResolveOutcome struct {
	ConflictID     string       `json:"conflict_id"`
	PreviousStatus string       `json:"previous_status"`
	NewStatus      string       `json:"new_status"`
	Action         string       `json:"action"`
	Notes          string       `json:"notes,omitempty"`
	Timestamp      time.Time    `json:"timestamp"`
	Result         vault.Result `json:"result"`
}

// ResolveConflict records a resolution of conflict id in conflicts.md and
// applies its side effects in the same commit: a lock_collision's lock is
// released (any action but ignore); a state_mismatch resolved use_b puts
// the task note back as it was committed when the conflict was found; a
// version_divergence resolved use_a or use_b restores the merge's first or
// second parent's version of the note. ignore marks it ignored: detect then
// reports it as existing. Unknown id: errs.ConflictNotFound; resolved or
// ignored before: errs.ConflictAlreadyResolved.
func (s *Service) ResolveConflict(o ResolveOptions) (ResolveOutcome, error) {
	if !slices.Contains(ConflictActions, o.Action) {
		return ResolveOutcome{}, errs.New(errs.UpdateValidationFailed, "--action %q is not one of %s", o.Action, strings.Join(ConflictActions, ", ")).With("flag", "action")
	}
	if o.Action == "custom" && strings.TrimSpace(o.Value) == "" {
		return ResolveOutcome{}, errs.New(errs.UpdateValidationFailed, "--action custom needs --value (the resolved value)").With("flag", "value")
	}
	if err := session.CheckText("notes", o.Notes, 500); err != nil && o.Notes != "" {
		return ResolveOutcome{}, err
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return ResolveOutcome{}, err
	}
	out := ResolveOutcome{ConflictID: o.ID, Action: o.Action, Notes: o.Notes}
	out.Result, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		d, _, err := s.conflictsDoc(tx, project)
		if err != nil {
			return vault.Change{}, err
		}
		var c Conflict
		off := -1
		for _, l := range d.SectionLines(session.SecConflicts) {
			if x, ok := parseConflict(string(l.Content())); ok && x.ID == o.ID {
				c, off = x, l.Offset
			}
		}
		if off < 0 {
			return vault.Change{}, errs.New(errs.ConflictNotFound, "conflict %q not found in %s/%s (see `%s`)", o.ID, project, session.ConflictsNote, s.Command(project, "conflicts list")).With("conflict", o.ID)
		}
		if c.Status == ResolutionResolved || c.Status == ResolutionIgnored {
			return vault.Change{}, errs.New(errs.ConflictAlreadyResolved, "conflict %s is already %s", c.ID, c.Status).With("conflict", c.ID)
		}
		now := s.NowUTC()
		out.PreviousStatus, out.Timestamp = c.Status, now
		if err := s.applyResolution(tx, project, c, o.Action); err != nil {
			return vault.Change{}, (&errs.Error{Code: errs.ResolutionFailed, Message: fmt.Sprintf("resolving %s with %s: %v", c.ID, o.Action, err), Err: err}).With("conflict", c.ID)
		}
		who := o.ResolvedBy
		if who == "" {
			who = s.holder(tx, project)
		}
		c.Status = ResolutionResolved
		if o.Action == "ignore" {
			c.Status = ResolutionIgnored
		}
		out.NewStatus = c.Status
		status := c.Status + " (" + o.Action + ") " + note.FormatTime(now) + " by " + who
		if o.Value != "" {
			status += ", value: " + o.Value
		}
		if o.Notes != "" {
			status += ": " + o.Notes
		}
		c.Status = status
		d.ReplaceLine(off, formatConflict(project, c))
		d.Set("unresolved", max(0, d.IntProp("unresolved")-1))
		b, err := d.Bytes()
		if err != nil {
			return vault.Change{}, err
		}
		return vault.Change{Operation: "conflicts-resolve", Summary: c.ID + " " + o.Action, Trailers: map[string]string{"Conflict": c.ID, "Action": o.Action}}, tx.Write(d.Path, b)
	})
	if err != nil {
		return ResolveOutcome{}, err
	}
	return out, nil
}

// applyResolution carries out a resolution's side effects on the notes.
func (s *Service) applyResolution(tx *vault.Tx, project string, c Conflict, action string) error {
	switch {
	case c.Type == ConflictLock && action != "ignore":
		d, _, err := s.taskDoc(tx, project, c.TaskA, errs.TaskNotFound)
		if err != nil {
			return err
		}
		clearLock(d)
		b, err := d.Bytes()
		if err != nil {
			return err
		}
		return tx.Write(d.Path, b)
	case c.Type == ConflictState && action == "use_b":
		rel, commit, ok := strings.Cut(c.Evidence.Location, "@")
		if !ok {
			return errors.New("the conflict does not name the commit to restore")
		}
		old, err := s.V.ReadAt(commit, rel)
		if err != nil {
			return err
		}
		return tx.Write(rel, old)
	case c.Type == ConflictDivergence && (action == "use_a" || action == "use_b"):
		merge := strings.TrimPrefix(c.Evidence.Location, "merge ")
		parent := merge + "^1"
		if action == "use_b" {
			parent = merge + "^2"
		}
		rel := session.TaskPath(project, c.TaskA)
		old, err := s.V.ReadAt(parent, rel)
		if err != nil {
			return err
		}
		return tx.Write(rel, old)
	}
	return nil
}

// lockConflicts are the task locks held past their expiry (ConflictLock),
// of the tasks that in selects.
func lockConflicts(tasks []Task, in func(string) bool, now time.Time) []Conflict {
	var found []Conflict
	for _, t := range tasks {
		if in(t.ID) && t.Lock != nil && t.Lock.Expired(now) {
			found = append(found, Conflict{TaskA: t.ID, Type: ConflictLock, Severity: "high", Strength: 1,
				Description:         fmt.Sprintf("task %s is still locked by %s, whose lock expired at %s", t.ID, t.Lock.Holder, note.FormatTime(t.Lock.ExpiresAt)),
				Evidence:            ConflictEvidence{Field: "lock_expires", ExpectedValue: "a lock released or renewed before it expires", ActualValue: note.FormatTime(t.Lock.ExpiresAt), Location: "locked_by " + t.Lock.Holder},
				SuggestedResolution: "resolve it (any action) to release the lock"})
		}
	}
	return found
}

// stateConflicts are the task notes (of the tasks that in selects) that differ
// from their last commit (ConflictState): edited outside sessionvault.
func (s *Service) stateConflicts(tasks []Task, in func(string) bool) ([]Conflict, error) {
	var found []Conflict
	var rels []string
	for _, t := range tasks {
		if in(t.ID) {
			rels = append(rels, t.Note)
		}
	}
	changed, err := s.V.ChangedSinceHead(rels)
	if err != nil {
		return nil, err
	}
	head, _ := s.V.Head()
	for _, rel := range changed {
		id := strings.TrimSuffix(rel[strings.LastIndex(rel, "/")+1:], ".md")
		found = append(found, Conflict{TaskA: id, Type: ConflictState, Severity: "medium", Strength: 0.8,
			Description:         fmt.Sprintf("%s differs from its last commit %s (edited outside sessionvault)", rel, shortCommit(head)),
			Evidence:            ConflictEvidence{Field: "note", ExpectedValue: head, ActualValue: "edited", Location: rel + "@" + shortCommit(head)},
			SuggestedResolution: "use_a keeps the edit (it is committed as the person's), use_b puts back the committed version"})
	}
	return found, nil
}
