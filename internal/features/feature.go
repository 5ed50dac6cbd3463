package features

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/commandlog"
	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// FeatureStatuses are the statuses of a feature, in the order the .ai-session
// format lists them.
var FeatureStatuses = []string{session.FeatureActive, session.FeaturePaused, session.FeatureCompleted}

// PlanStatuses are the statuses of a task of an implementation plan:
// pending, in_progress, completed, blocked.
var PlanStatuses = []string{session.TaskPending, session.TaskInProgress, session.TaskCompleted, session.TaskBlocked}

// featureTransitions are the only status changes SetFeatureStatus allows: a
// completed feature is reopened (active) before it can be paused.
var featureTransitions = map[string][]string{
	session.FeatureActive:    {session.FeaturePaused, session.FeatureCompleted},
	session.FeaturePaused:    {session.FeatureActive, session.FeatureCompleted},
	session.FeatureCompleted: {session.FeatureActive},
}

// Feature is a feature plan as its note holds it. Times are UTC; nil when
// the property is empty or unreadable (Problems says which).
type Feature struct {
	ID          string     `json:"feature_id"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Status      string     `json:"status"`
	CreatedAt   *time.Time `json:"created_at"`
	StartedAt   *time.Time `json:"started_at"`
	LastActive  *time.Time `json:"last_active"`
	Phases      []Phase    `json:"phases"`
	// Note is the note's path from the vault root.
	Note     string            `json:"note"`
	Problems []session.Problem `json:"problems,omitempty"`
	Project  string            `json:"-"`
}

// Phase is one phase of an implementation plan (phases[] in the .ai-session
// format): its H2 section "## Phase: <name>".
type Phase struct {
	ID    string     `json:"phase_id"`
	Name  string     `json:"name"`
	Tasks []PlanTask `json:"tasks"`
	Line  int        `json:"line"` // the heading's line in the note

	sec markdown.Section
}

// PlanTask is one task of a phase (phases[].tasks[] in the .ai-session
// format).
type PlanTask struct {
	TaskID      string     `json:"task_id"`
	Description string     `json:"description"`
	Agent       string     `json:"agent"`
	Status      string     `json:"status"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	Artifacts   []string   `json:"artifacts"`
	// TaskNote is the task note (package tasks) the line links, from the vault
	// root without .md; "" when the id is written plain.
	TaskNote string `json:"task_note,omitempty"`
	BlockID  string `json:"block_id"`
	Line     int    `json:"line"`

	off int // the line's body offset
}

// Active reports whether the feature counts as active (in the active
// features list).
func (f Feature) Active() bool { return f.Status == session.FeatureActive }

// Task returns the plan's task id and its phase, or ok false.
func (f Feature) Task(id string) (PlanTask, Phase, bool) {
	for _, p := range f.Phases {
		for _, t := range p.Tasks {
			if t.TaskID == id {
				return t, p, true
			}
		}
	}
	return PlanTask{}, Phase{}, false
}

var (
	featureIDRe    = lazyregexp.New(`^[a-z0-9]+(?:-[a-z0-9]+)*-(\d{4}-\d{2}-\d{2})$`)
	planIDRe       = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	phaseIDLineRe  = lazyregexp.New(`^phase_id::\s*(\S+)\s*$`)
	planTaskRe     = lazyregexp.New(`^- \[(.)\] (\[\[[^\]]+\]\]|\S+) · (.*?) \^(t-\d+` + session.MachineSuffix + `)\s*$`)
	planFieldRe    = lazyregexp.New(` · \*\*(agent|status|started|completed|artifacts):\*\* `)
	planTaskIDRe   = lazyregexp.New(`\^t-\d+` + session.MachineSuffix + `\s*$`)
	codeSpanItemRe = lazyregexp.New("`([^`]+)`")
	planNumberRe   = lazyregexp.New(`(?m) \^t-(\d+)` + session.MachineSuffix + `[ \t]*\r?$`)
)

// CheckFeatureID validates a feature id:
// {slug}-{YYYY-MM-DD}, the slug lowercase letters and digits joined by
// single hyphens, the date a real ISO 8601 date; at most 100 characters.
// The error (errs.InvalidFeatureId) names flag and says what a valid id
// looks like.
func CheckFeatureID(flag, id string) error {
	bad := func(why string) error {
		return errs.New(errs.InvalidFeatureId, "--%s %q is not a feature id: %s; write {slug}-{YYYY-MM-DD}, e.g. ai-orchestrator-2025-01-09 (lowercase, hyphen-separated)", flag, id, why).With("flag", flag).With("feature", id)
	}
	if len(id) > 100 {
		return bad("longer than 100 characters")
	}
	m := featureIDRe().FindStringSubmatch(id)
	if m == nil {
		return bad("it does not end in a date after a lowercase slug")
	}
	if _, err := time.Parse("2006-01-02", m[1]); err != nil {
		return bad(m[1] + " is not a date")
	}
	return nil
}

// readFeature reads a feature from its parsed note.
func readFeature(d *session.Doc, project string) Feature {
	f := Feature{Project: project, Note: d.Path, Phases: []Phase{}}
	f.ID = session.FirstNonEmpty(d.Prop("feature_id"), strings.TrimSuffix(path.Base(d.Path), ".md"))
	f.Name = d.Prop("name")
	f.Description = d.Prop("description")
	f.Status = d.Prop("status")
	if f.Status == "" {
		f.Status = session.FeatureActive
	}
	if !slices.Contains(FeatureStatuses, f.Status) {
		f.Problems = append(f.Problems, session.Problem{Note: d.Path, Line: d.Note.KeyLine("status"), Text: f.Status, Why: "status is not one of " + strings.Join(FeatureStatuses, ", ")})
	}
	for _, k := range []struct {
		key string
		t   **time.Time
	}{{"created_at", &f.CreatedAt}, {"started_at", &f.StartedAt}, {"last_active", &f.LastActive}} {
		if v := d.Prop(k.key); v != "" {
			if t, err := note.ParseTime(v, d.Loc); err == nil {
				u := t.UTC()
				*k.t = &u
			} else {
				f.Problems = append(f.Problems, session.Problem{Note: d.Path, Line: d.Note.KeyLine(k.key), Why: "cannot read " + k.key + ": " + err.Error()})
			}
		}
	}
	for _, s := range d.MD.Sections {
		if s.Level != 2 || !strings.HasPrefix(s.Title, session.PhaseTitlePrefix) {
			continue
		}
		p := Phase{Name: strings.TrimSpace(strings.TrimPrefix(s.Title, session.PhaseTitlePrefix)), Line: d.LineNo(s.Start), Tasks: []PlanTask{}, sec: s}
		for _, l := range markdown.Lines(d.Body, s.BodyStart, s.End) {
			line := string(l.Content())
			if m := phaseIDLineRe().FindStringSubmatch(strings.TrimSpace(line)); m != nil && p.ID == "" {
				p.ID = m[1]
				continue
			}
			if !planTaskIDRe().MatchString(line) {
				continue
			}
			t, why := parsePlanTask(line, d.Loc)
			if why != "" {
				f.Problems = append(f.Problems, session.Problem{Note: d.Path, Line: d.LineNo(l.Offset), Text: line, Why: "cannot read this task line back (" + why + "); it is kept as written"})
				continue
			}
			t.Line, t.off = d.LineNo(l.Offset), l.Offset
			p.Tasks = append(p.Tasks, t)
		}
		if p.ID == "" {
			p.ID = slugOr(p.Name, "phase")
		}
		f.Phases = append(f.Phases, p)
	}
	return f
}

// parsePlanTask reads one task line; why says what is wrong when it cannot.
func parsePlanTask(line string, loc *time.Location) (PlanTask, string) {
	m := planTaskRe().FindStringSubmatch(line)
	if m == nil {
		return PlanTask{}, "not `- [ ] TASK-ID · description · **status:** … ^t-N`"
	}
	t := PlanTask{BlockID: m[4], Artifacts: []string{}}
	if strings.HasPrefix(m[2], "[[") {
		target := session.Unlink(m[2])
		t.TaskID = path.Base(target)
		t.TaskNote = target
	} else {
		t.TaskID = m[2]
	}
	if !planIDRe().MatchString(t.TaskID) {
		return PlanTask{}, fmt.Sprintf("%q is not a task id", t.TaskID)
	}
	rest := session.Sep + m[3] // a line may have no description: its first field follows the id
	locs := planFieldRe().FindAllStringSubmatchIndex(rest, -1)
	end := len(rest)
	if len(locs) > 0 {
		end = locs[0][0]
	}
	t.Description = strings.TrimSpace(strings.TrimPrefix(rest[:end], session.Sep))
	for i, l := range locs {
		vend := len(rest)
		if i+1 < len(locs) {
			vend = locs[i+1][0]
		}
		label, value := rest[l[2]:l[3]], strings.TrimSpace(rest[l[1]:vend])
		switch label {
		case "agent":
			t.Agent = value
		case "status":
			t.Status = strings.ToLower(value)
		case "started", "completed":
			if value == "" || value == "-" || value == "—" {
				continue
			}
			tm, err := note.ParseTime(value, loc)
			if err != nil {
				return PlanTask{}, label + ": " + err.Error()
			}
			u := tm.UTC()
			if label == "started" {
				t.StartedAt = &u
			} else {
				t.CompletedAt = &u
			}
		case "artifacts":
			t.Artifacts = parseArtifacts(value)
		}
	}
	if t.Status == "" {
		t.Status = session.TaskPending
	}
	if !slices.Contains(PlanStatuses, t.Status) {
		return PlanTask{}, fmt.Sprintf("status %q is not one of %s", t.Status, strings.Join(PlanStatuses, ", "))
	}
	if box := m[1]; box == "x" || box == "X" {
		t.Status = session.TaskCompleted // ticked in Obsidian
	}
	return t, ""
}

func parseArtifacts(v string) []string {
	out := []string{}
	if ms := codeSpanItemRe().FindAllStringSubmatch(v, -1); len(ms) > 0 {
		for _, m := range ms {
			out = append(out, m[1])
		}
		return out
	}
	for _, a := range strings.Split(v, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// formatPlanTask renders a task line (see the package's feature format);
// taskNote is the task note's path without .md to link, or "".
func formatPlanTask(t PlanTask, taskNote string) string {
	var b strings.Builder
	box := " "
	if t.Status == session.TaskCompleted {
		box = "x"
	}
	b.WriteString("- [" + box + "] ")
	if taskNote != "" {
		b.WriteString(session.Link(taskNote, t.TaskID))
	} else {
		b.WriteString(t.TaskID)
	}
	b.WriteString(session.Sep + session.OneLine(t.Description))
	if t.Agent != "" {
		b.WriteString(session.Sep + "**agent:** " + t.Agent)
	}
	b.WriteString(session.Sep + "**status:** " + t.Status)
	if t.StartedAt != nil {
		b.WriteString(session.Sep + "**started:** " + note.FormatTime(*t.StartedAt))
	}
	if t.CompletedAt != nil {
		b.WriteString(session.Sep + "**completed:** " + note.FormatTime(*t.CompletedAt))
	}
	if len(t.Artifacts) > 0 {
		items := make([]string, len(t.Artifacts))
		for i, a := range t.Artifacts {
			items[i] = "`" + a + "`"
		}
		b.WriteString(session.Sep + "**artifacts:** " + strings.Join(items, ", "))
	}
	b.WriteString(" ^" + t.BlockID)
	return b.String()
}

// lastPlanNumber is the largest N among the note's ^t-N ids.
func lastPlanNumber(d *session.Doc) int {
	max := 0
	for _, m := range planNumberRe().FindAllSubmatch(d.Body, -1) {
		if n, _ := strconv.Atoi(string(m[1])); n > max {
			max = n
		}
	}
	return max
}

// NewFeatureOptions are the inputs of FeatureNew.
type NewFeatureOptions struct {
	Project     string
	Name        string // 1-200 characters
	ID          string // "" = the name's slug and today's date in the vault's time zone
	Description string // at most 2000 characters
}

// FeatureOutcome is what a feature operation did: the feature as written,
// the session whose active feature it set (or cleared), and the commit.
type FeatureOutcome struct {
	Feature Feature      `json:"feature"`
	Session string       `json:"session,omitempty"`
	Result  vault.Result `json:"git"`
}

// FeatureNew makes a feature note, active, and returns it; with a session
// active, the feature becomes its active feature (active_feature in the
// current state) in the same commit. The first feature of a project also
// gets the project's features.base. A malformed --id is
// errs.InvalidFeatureId; an existing one errs.FeatureAlreadyExists.
func (s *Service) FeatureNew(o NewFeatureOptions) (FeatureOutcome, error) {
	if err := session.CheckText("name", o.Name, 200); err != nil {
		return FeatureOutcome{}, err
	}
	if o.Description != "" {
		if err := session.CheckText("description", o.Description, 2000); err != nil {
			return FeatureOutcome{}, err
		}
	}
	if o.ID != "" {
		if err := CheckFeatureID("id", o.ID); err != nil {
			return FeatureOutcome{}, err
		}
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return FeatureOutcome{}, err
	}
	var out FeatureOutcome
	out.Result, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		now := s.NowUTC()
		id := o.ID
		if id == "" {
			loc, _ := s.V.Config.Location()
			if loc == nil {
				loc = time.UTC
			}
			id = slugOr(o.Name, "feature") + "-" + now.In(loc).Format("2006-01-02")
			if err := CheckFeatureID("id", id); err != nil {
				return vault.Change{}, err
			}
		}
		rel := session.FeaturePath(project, id)
		if tx.Exists(rel) {
			return vault.Change{}, errs.New(errs.FeatureAlreadyExists, "feature %s already exists (%s); see it with `%s`, or give another --id", id, rel, s.Command(project, "feature show "+id)).With("feature", id)
		}
		f := Feature{ID: id, Name: session.OneLine(o.Name), Description: session.OneLine(o.Description), Status: session.FeatureActive, CreatedAt: &now, StartedAt: &now, LastActive: &now}
		d, err := s.newFeatureDoc(tx, project, f)
		if err != nil {
			return vault.Change{}, err
		}
		if out.Feature, err = s.writeFeatureDoc(tx, d, project); err != nil {
			return vault.Change{}, err
		}
		if out.Session, err = s.setActiveFeature(tx, project, id, now); err != nil {
			return vault.Change{}, err
		}
		return vault.Change{Operation: "feature-new", Session: out.Session, Summary: id + " " + f.Name, Trailers: map[string]string{"Feature": id}}, nil
	})
	return out, err
}

// newFeatureDoc renders the note of feature f from the template (and the
// project's features.base when it is the first feature) through tx, and
// returns it parsed, not yet written.
func (s *Service) newFeatureDoc(tx *vault.Tx, project string, f Feature) (*session.Doc, error) {
	names, err := tx.List(project + "/" + session.FeaturesDir)
	if err != nil {
		return nil, err
	}
	first := !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, ".md") })
	if first && !tx.Exists(project+"/"+session.FeatureBase) {
		if err := s.writeFeatureBase(tx, project); err != nil {
			return nil, err
		}
	}
	tm := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return note.FormatTime(*t)
	}
	b, err := s.Render("feature.md", map[string]string{
		"ID": note.Scalar(f.ID), "Name": note.Scalar(f.Name), "Description": note.Scalar(f.Description),
		"Status": f.Status, "CreatedAt": tm(f.CreatedAt), "StartedAt": tm(f.StartedAt), "LastActive": tm(f.LastActive),
		"Heading": session.OneLine(f.Name),
	})
	if err != nil {
		return nil, err
	}
	return s.ParseDoc(session.FeaturePath(project, f.ID), b)
}

// writeFeatureBase writes the Obsidian base of project's features (the
// features.base template) and the engine's property types.
func (s *Service) writeFeatureBase(tx *vault.Tx, project string) error {
	b, err := s.Render(session.FeatureBase, map[string]string{"Project": project})
	if err != nil {
		return err
	}
	if err := tx.Write(project+"/"+session.FeatureBase, b); err != nil {
		return err
	}
	old, err := tx.Read(session.TypesFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if nb, changed, err := session.MergeTypes(old); err != nil {
		return err
	} else if changed {
		return tx.Write(session.TypesFile, nb)
	}
	return nil
}

// writeFeatureDoc writes d's queued edits through tx and returns the
// feature as written.
func (s *Service) writeFeatureDoc(tx *vault.Tx, d *session.Doc, project string) (Feature, error) {
	b, err := d.Bytes()
	if err != nil {
		return Feature{}, err
	}
	if err := tx.Write(d.Path, b); err != nil {
		return Feature{}, err
	}
	nd, err := s.ParseDoc(d.Path, b)
	if err != nil {
		return Feature{}, err
	}
	return readFeature(nd, project), nil
}

// setActiveFeature makes id (or, with id "", no feature) the active
// session's active feature, bumping the current state's version; it returns
// the session, "" when none is active (nothing is written then).
func (s *Service) setActiveFeature(tx *vault.Tx, project, id string, now time.Time) (string, error) {
	cur, _, _ := session.Paths(project)
	d, err := s.ReadDoc(tx, cur)
	if err != nil {
		return "", err
	}
	st := d.ReadLite(project)
	if !st.Active() {
		return "", nil
	}
	v := ""
	if id != "" {
		v = session.FeatureLink(project, id)
	}
	if d.Prop("active_feature") == v {
		return st.Session, nil
	}
	d.Set("active_feature", v)
	session.BumpVersion(d, st, now)
	b, err := d.Bytes()
	if err != nil {
		return "", err
	}
	return st.Session, tx.Write(cur, b)
}

// activeFeatureOf is the active session's active feature ("" when none is
// active or it has none).
func (s *Service) activeFeatureOf(tx *vault.Tx, project string) string {
	cur, _, _ := session.Paths(project)
	d, err := s.ReadDoc(tx, cur)
	if err != nil {
		return ""
	}
	if st := d.ReadLite(project); st.Active() {
		return st.ActiveFeature
	}
	return ""
}

func (s *Service) featureNotFound(project, id string) error {
	return errs.New(errs.FeatureNotFound, "feature %q not found: no %s (see `%s`)", id, session.FeaturePath(project, id), s.Command(project, "feature list")).With("feature", id)
}

// featureDoc reads feature id's note through tx (errs.FeatureNotFound when
// it has none).
func (s *Service) featureDoc(tx *vault.Tx, project, id string) (*session.Doc, Feature, error) {
	if vault.CheckName("feature id", id) != nil {
		return nil, Feature{}, s.featureNotFound(project, id)
	}
	rel := session.FeaturePath(project, id)
	if !tx.Exists(rel) {
		return nil, Feature{}, s.featureNotFound(project, id)
	}
	d, err := s.ReadDoc(tx, rel)
	if err != nil {
		return nil, Feature{}, err
	}
	return d, readFeature(d, project), nil
}

// Feature reads one feature (errs.FeatureNotFound when it has no note).
func (s *Service) Feature(project, id string) (Feature, error) {
	project, err := s.Project(project)
	if err != nil {
		return Feature{}, err
	}
	return s.readFeatureFile(project, id)
}

func (s *Service) readFeatureFile(project, id string) (Feature, error) {
	if vault.CheckName("feature id", id) != nil {
		return Feature{}, s.featureNotFound(project, id)
	}
	rel := session.FeaturePath(project, id)
	data, err := s.V.ReadFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return Feature{}, s.featureNotFound(project, id)
	}
	if err != nil {
		return Feature{}, err
	}
	d, err := s.ParseDoc(rel, data)
	if err != nil {
		return Feature{}, err
	}
	return readFeature(d, project), nil
}

// Features lists project's features, sorted by id; status ("" = all) keeps
// those with that status: Features(p, "active") is the active
// features list, a query over the notes.
func (s *Service) Features(project, status string) ([]Feature, error) {
	if status != "" && !slices.Contains(FeatureStatuses, status) {
		return nil, errs.New(errs.PlanValidationFailed, "--status %q is not one of %s", status, strings.Join(FeatureStatuses, ", ")).With("flag", "status")
	}
	project, err := s.Project(project)
	if err != nil {
		return nil, err
	}
	all, err := s.featuresOf(project)
	if err != nil {
		return nil, err
	}
	out := []Feature{}
	for _, f := range all {
		if status == "" || f.Status == status {
			out = append(out, f)
		}
	}
	return out, nil
}

func (s *Service) featuresOf(project string) ([]Feature, error) {
	ents, err := os.ReadDir(path.Join(s.V.Root, project, session.FeaturesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s/%s: %w", project, session.FeaturesDir, err)
	}
	var out []Feature
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		f, err := s.readFeatureFile(project, strings.TrimSuffix(e.Name(), ".md"))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// onFeature runs edit on feature id's note as one commit and returns the
// feature as written. edit queues its edits on d and returns the commit's
// description, or changed false to write nothing (then no commit is made).
// last_active becomes now (never earlier than it was: timestamps
// are monotonic) when the note changes.
func (s *Service) onFeature(project, id string, edit func(tx *vault.Tx, d *session.Doc, f Feature, now time.Time) (vault.Change, bool, error)) (FeatureOutcome, error) {
	project, err := s.Project(project)
	if err != nil {
		return FeatureOutcome{}, err
	}
	var out FeatureOutcome
	out.Result, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		d, f, err := s.featureDoc(tx, project, id)
		if err != nil {
			return vault.Change{}, err
		}
		now := s.NowUTC()
		ch, changed, err := edit(tx, d, f, now)
		if err != nil {
			return vault.Change{}, err
		}
		if changed {
			if f.LastActive == nil || now.After(*f.LastActive) {
				d.Set("last_active", now)
			}
		}
		if out.Feature, err = s.writeFeatureDoc(tx, d, project); err != nil {
			return vault.Change{}, err
		}
		if ch.Trailers == nil {
			ch.Trailers = map[string]string{}
		}
		ch.Trailers["Feature"] = f.ID
		out.Session = ch.Session
		return ch, nil
	})
	return out, err
}

// SetFeatureStatus changes feature id's status (active, paused,
// completed; errs.PlanValidationFailed otherwise). Allowed changes: active
// to paused or completed, paused to active or completed, completed to
// active (reopened); another is errs.InvalidFeatureTransition. With a
// session active, making a feature active makes it the session's active
// feature, and pausing or completing the session's active feature clears
// it. Setting the status it has changes nothing (no commit), except for
// making an active feature the session's.
func (s *Service) SetFeatureStatus(project, id, status string) (FeatureOutcome, error) {
	if !slices.Contains(FeatureStatuses, status) {
		return FeatureOutcome{}, errs.New(errs.PlanValidationFailed, "status %q is not one of %s", status, strings.Join(FeatureStatuses, ", ")).With("argument", "status")
	}
	return s.onFeature(project, id, func(tx *vault.Tx, d *session.Doc, f Feature, now time.Time) (vault.Change, bool, error) {
		changed := f.Status != status
		if changed && !slices.Contains(featureTransitions[f.Status], status) {
			return vault.Change{}, false, errs.New(errs.InvalidFeatureTransition, "feature %s is %s and cannot become %s; reopen it first with `%s`", f.ID, f.Status, status, s.Command(f.Project, "feature set-status "+f.ID+" active")).With("feature", f.ID).With("from", f.Status).With("to", status)
		}
		if changed {
			d.Set("status", status)
		}
		var sessionID string
		var err error
		if status == session.FeatureActive {
			sessionID, err = s.setActiveFeature(tx, f.Project, f.ID, now)
		} else if s.activeFeatureOf(tx, f.Project) == f.ID {
			sessionID, err = s.setActiveFeature(tx, f.Project, "", now)
		}
		if err != nil {
			return vault.Change{}, false, err
		}
		return vault.Change{Operation: "feature-status", Session: sessionID, Summary: f.ID + " " + status}, changed, nil
	})
}

// SwitchFeature makes feature id the active session's active feature
// (errs.NoActiveSession when none is active): command history recorded from
// then on names it. A paused feature becomes active; a completed one is
// errs.InvalidFeatureTransition (reopen it with SetFeatureStatus).
func (s *Service) SwitchFeature(project, id string) (FeatureOutcome, error) {
	return s.onFeature(project, id, func(tx *vault.Tx, d *session.Doc, f Feature, now time.Time) (vault.Change, bool, error) {
		if f.Status == session.FeatureCompleted {
			return vault.Change{}, false, errs.New(errs.InvalidFeatureTransition, "feature %s is completed; reopen it with `%s` (that also makes it the session's active feature)", f.ID, s.Command(f.Project, "feature set-status "+f.ID+" active")).With("feature", f.ID)
		}
		was := s.activeFeatureOf(tx, f.Project)
		sessionID, err := s.setActiveFeature(tx, f.Project, f.ID, now)
		if err != nil {
			return vault.Change{}, false, err
		}
		if sessionID == "" {
			return vault.Change{}, false, errs.New(errs.NoActiveSession, "no active session in project %s to switch the feature of; start one with `%s`", f.Project, s.Command(f.Project, "start --objective ...")).With("project", f.Project)
		}
		if f.Status != session.FeatureActive {
			d.Set("status", session.FeatureActive)
		}
		// Switching to the session's active feature changes nothing.
		return vault.Change{Operation: "feature-switch", Session: sessionID, Summary: "to " + f.ID}, f.Status != session.FeatureActive || was != f.ID, nil
	})
}

// PlanOptions are the inputs of UpdatePlan: one task of a feature's plan,
// added or changed. A nil field is left as it is (a new task needs a
// description).
type PlanOptions struct {
	Project   string
	FeatureID string
	// Phase names the task's phase: a phase of the plan with this name or
	// phase id, else a new one (with PhaseID, else the name's slug). ""
	// keeps an existing task's phase. A task given another phase moves.
	Phase   string
	PhaseID string
	TaskID  string
	// Description, Agent and Status replace the task's; Status is one of
	// PlanStatuses.
	Description *string
	Agent       *string
	Status      *string
	// StartedAt and CompletedAt set the times; by default a task gets
	// started_at when it first leaves pending and completed_at when it
	// becomes completed (it loses it when reopened).
	StartedAt, CompletedAt *time.Time
	// Artifacts are added to the task's (ClearArtifacts first empties them).
	Artifacts      []string
	ClearArtifacts bool
}

func (o PlanOptions) validate() error {
	if !planIDRe().MatchString(o.TaskID) {
		return errs.New(errs.PlanValidationFailed, "--task %q is not a task id: letters, digits, '-', '_' and '.', at most 100", o.TaskID).With("flag", "task")
	}
	if o.Description != nil {
		if err := session.CheckText("description", *o.Description, 500); err != nil {
			return err
		}
		if planFieldRe().MatchString(session.OneLine(*o.Description)) || planTaskIDRe().MatchString(*o.Description) {
			return errs.New(errs.PlanValidationFailed, "--description %q holds a field label (` · **status:** `) or ends in a block id", *o.Description).With("flag", "description")
		}
	}
	if o.Agent != nil && *o.Agent != "" && !commandlog.AgentRe().MatchString(*o.Agent) {
		return errs.New(errs.PlanValidationFailed, "--agent %q is not an agent identifier: letters, digits and . _ : / @ + -, at most 100", *o.Agent).With("flag", "agent")
	}
	if o.Status != nil && !slices.Contains(PlanStatuses, *o.Status) {
		return errs.New(errs.PlanValidationFailed, "--status %q is not one of %s", *o.Status, strings.Join(PlanStatuses, ", ")).With("flag", "status")
	}
	if o.Phase != "" {
		if err := session.CheckText("phase", o.Phase, 200); err != nil {
			return err
		}
	}
	if o.PhaseID != "" && !planIDRe().MatchString(o.PhaseID) {
		return errs.New(errs.PlanValidationFailed, "--phase-id %q is not an id: letters, digits, '-', '_' and '.', at most 100", o.PhaseID).With("flag", "phase-id")
	}
	for _, a := range o.Artifacts {
		if strings.TrimSpace(a) == "" || strings.ContainsAny(a, "`\n\r") || len(a) > 500 {
			return errs.New(errs.PlanValidationFailed, "--artifact %q is empty, longer than 500 bytes, or holds a backquote or a line break", a).With("flag", "artifact")
		}
	}
	return session.CheckFields("phase", o.Phase, "agent", deref(o.Agent))
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// UpdatePlan adds task o.TaskID to feature o.FeatureID's plan, or changes
// it, in one commit (see PlanOptions). A new task without a description, or
// without a phase, is errs.PlanValidationFailed. The feature's last_active
// becomes now.
func (s *Service) UpdatePlan(o PlanOptions) (FeatureOutcome, error) {
	if err := o.validate(); err != nil {
		return FeatureOutcome{}, err
	}
	return s.onFeature(o.Project, o.FeatureID, func(tx *vault.Tx, d *session.Doc, f Feature, now time.Time) (vault.Change, bool, error) {
		old, oldPhase, exists := f.Task(o.TaskID)
		t := old
		if !exists {
			if o.Description == nil || o.Phase == "" {
				return vault.Change{}, false, errs.New(errs.PlanValidationFailed, "task %s is not in the plan of %s yet: give its --phase and --description", o.TaskID, f.ID).With("task", o.TaskID)
			}
			t = PlanTask{TaskID: o.TaskID, Status: session.TaskPending, Artifacts: []string{}}
		}
		applyPlanOptions(&t, o, now)
		if exists && reflectEqualTask(old, t) && (o.Phase == "" || phaseMatches(oldPhase, o.Phase, o.PhaseID)) {
			return vault.Change{Operation: "feature-plan", Summary: f.ID + ": " + t.TaskID}, false, nil
		}
		if err := s.putPlanTask(tx, d, f, o.Phase, o.PhaseID, t, exists); err != nil {
			return vault.Change{}, false, err
		}
		return vault.Change{Operation: "feature-plan", Session: s.activeSessionOf(tx, f.Project), Summary: f.ID + ": " + t.TaskID + " " + t.Status}, true, nil
	})
}

// activeSessionOf is project's active session id, "" when none.
func (s *Service) activeSessionOf(tx *vault.Tx, project string) string {
	cur, _, _ := session.Paths(project)
	if d, err := s.ReadDoc(tx, cur); err == nil {
		if st := d.ReadLite(project); st.Active() {
			return st.Session
		}
	}
	return ""
}

func applyPlanOptions(t *PlanTask, o PlanOptions, now time.Time) {
	if o.Description != nil {
		t.Description = session.OneLine(*o.Description)
	}
	if o.Agent != nil {
		t.Agent = *o.Agent
	}
	if o.Status != nil && *o.Status != t.Status {
		t.Status = *o.Status
		if t.Status != session.TaskPending && t.StartedAt == nil {
			n := now
			t.StartedAt = &n
		}
		if t.Status == session.TaskCompleted && t.CompletedAt == nil {
			n := now
			t.CompletedAt = &n
		}
		if t.Status != session.TaskCompleted {
			t.CompletedAt = nil
		}
	}
	if o.StartedAt != nil {
		v := o.StartedAt.UTC()
		t.StartedAt = &v
	}
	if o.CompletedAt != nil {
		v := o.CompletedAt.UTC()
		t.CompletedAt = &v
	}
	if o.ClearArtifacts {
		t.Artifacts = []string{}
	}
	for _, a := range o.Artifacts {
		if !slices.Contains(t.Artifacts, a) {
			t.Artifacts = append(t.Artifacts, a)
		}
	}
}

func reflectEqualTask(a, b PlanTask) bool {
	eqT := func(x, y *time.Time) bool { return (x == nil) == (y == nil) && (x == nil || x.Equal(*y)) }
	return a.Description == b.Description && a.Agent == b.Agent && a.Status == b.Status &&
		eqT(a.StartedAt, b.StartedAt) && eqT(a.CompletedAt, b.CompletedAt) && slices.Equal(a.Artifacts, b.Artifacts)
}

func phaseMatches(p Phase, name, id string) bool {
	if id != "" {
		return p.ID == id
	}
	return p.ID == name || strings.EqualFold(p.Name, name) || p.ID == slugOr(name, "")
}

// slugOr is slug(s), or fallback when s has no letter or digit.
func slugOr(s, fallback string) string {
	if strings.Trim(session.SlugRe().ReplaceAllString(strings.ToLower(s), "-"), "-") == "" {
		return fallback
	}
	return session.Slug(s)
}

// putPlanTask queues on d the line of task t: in place when it exists and
// stays in its phase, else (new, or moving) at the end of phase
// phaseName's section, made after the last phase section when missing.
func (s *Service) putPlanTask(tx *vault.Tx, d *session.Doc, f Feature, phaseName, phaseID string, t PlanTask, exists bool) error {
	taskNote := ""
	if vault.CheckName("task id", t.TaskID) == nil && tx.Exists(session.TaskPath(f.Project, t.TaskID)) {
		taskNote = f.Project + "/" + session.TasksDir + "/" + t.TaskID
	}
	old, oldPhase, _ := f.Task(t.TaskID)
	if exists && (phaseName == "" || phaseMatches(oldPhase, phaseName, phaseID)) {
		d.ReplaceLine(old.off, formatPlanTask(t, taskNote))
		return nil
	}
	if t.BlockID == "" {
		t.BlockID = "t-" + strconv.Itoa(lastPlanNumber(d)+1) + s.IdSuffix()
	}
	line := formatPlanTask(t, taskNote)
	if exists {
		end := markdown.LineEnd(d.Body, old.off)
		d.Edit(old.off, end, "")
	}
	for _, p := range f.Phases {
		if phaseMatches(p, phaseName, phaseID) {
			d.AppendLineIn(p.sec, line)
			return nil
		}
	}
	if phaseID == "" {
		phaseID = slugOr(phaseName, "phase-"+strconv.Itoa(len(f.Phases)+1))
	}
	addPhase(d, f, phaseName, phaseID, []string{line})
	return nil
}

// addPhase queues the section of a new phase (name, id) holding lines
// (none: an empty phase) after the last phase section of f, else at the
// note's end.
func addPhase(d *session.Doc, f Feature, name, id string, lines []string) {
	nl := d.Newline()
	text := "## " + session.PhaseTitlePrefix + session.OneLine(name) + nl + nl + "phase_id:: " + id + nl
	if len(lines) > 0 {
		text += nl + strings.Join(lines, nl) + nl
	}
	at := len(d.Body)
	if n := len(f.Phases); n > 0 {
		at = f.Phases[n-1].sec.End
	}
	prefix := ""
	if at > 0 && !bytes.HasSuffix(d.Body[:at], []byte("\n")) {
		prefix = nl
	}
	if at > 0 && !bytes.HasSuffix(d.Body[:at], []byte(nl+nl)) {
		prefix += nl
	}
	if at < len(d.Body) {
		text += nl
	}
	d.Edit(at, at, prefix+text)
}
