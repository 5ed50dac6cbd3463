package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Task contexts (seed 002 §4.1.1, §4.1.2, §4.1.5, §4.2, §8.2): one note per
// task, <project>/tasks/<task-id>.md. Properties hold the fields a query
// reads (status, phase, relationships as quoted wikilinks, the lock); the
// sections hold what a person reads and edits in Obsidian (immediate
// context, key files, technical decisions, resume prompt). Every other
// section and line a person writes is theirs and kept byte for byte.
const (
	TasksDir          = "tasks"
	GlobalContextNote = "global-context.md"

	secImmediate = "Immediate context"
	secKeyFiles  = "Key files"
	secTechDec   = "Technical decisions"
	secResume    = "Resume prompt"

	// TaskLockTTL is how long a task lock holds unless renewed (seed 002
	// §8.2.1: 5 minutes).
	TaskLockTTL = 5 * time.Minute
)

// TaskStatus values (seed 002 §4.2.1).
const (
	TaskPending    = "pending"
	TaskInProgress = "in_progress"
	TaskCompleted  = "completed"
	TaskBlocked    = "blocked"
	TaskArchived   = "archived"
)

// TaskStatuses lists the TaskStatus values in the seed's order.
var TaskStatuses = []string{TaskPending, TaskInProgress, TaskCompleted, TaskBlocked, TaskArchived}

// ChangeType values of a task version (seed 002 §4.2.2), written in the
// commit trailer "Change-Type".
var ChangeTypes = []string{"manual", "auto_save", "checkpoint", "recovery", "migration"}

// taskSections are the sections of a task note the engine writes; the rest
// are the person's.
var taskSections = []string{secImmediate, secKeyFiles, secTechDec, secResume}

// taskProps are the task note's properties the engine writes; any other is
// the person's.
var taskProps = []string{"type", "task_id", "name", "status", "phase", "iteration", "score", "priority", "key_files",
	"locked_elements", "blocks", "depends_on", "related_to", "parent", "created", "updated", "last_session_at",
	"locked_by", "locked_at", "lock_expires", "tags"}

// ImmediateContext is what a task is in the middle of (seed 002 §4.2.11),
// the bullets of a task note's "Immediate context" section.
type ImmediateContext struct {
	WorkingOn  string   `json:"working_on"`
	LastAction string   `json:"last_action"`
	NextStep   string   `json:"next_step"`
	Blockers   []string `json:"blockers"`
	Notes      string   `json:"notes,omitempty"`
}

// TaskLock is who holds a task and until when (seed 002 §8.2.1); Holder is
// a session id, or "machine:<name>" outside a session.
type TaskLock struct {
	Holder    string    `json:"session_id"`
	LockedAt  time.Time `json:"locked_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Expired reports whether the lock's time ran out at now.
func (l *TaskLock) Expired(now time.Time) bool { return l != nil && !now.Before(l.ExpiresAt) }

// Task is a task context as its note holds it. Relationship lists hold task
// ids (the notes hold them as wikilinks).
type Task struct {
	ID                 string           `json:"task_id"`
	Name               string           `json:"name"`
	Status             string           `json:"status"`
	Phase              string           `json:"current_phase"`
	Iteration          int              `json:"iteration"`
	Score              *float64         `json:"score,omitempty"`
	Priority           int              `json:"priority"`
	KeyFiles           []string         `json:"key_files"`
	LockedElements     []string         `json:"locked_elements"`
	Blocks             []string         `json:"blocks"`
	DependsOn          []string         `json:"depends_on"`
	RelatedTo          []string         `json:"related_to"`
	Parent             string           `json:"parent,omitempty"`
	Immediate          ImmediateContext `json:"immediate_context"`
	TechnicalDecisions []string         `json:"technical_decisions"`
	ResumePrompt       string           `json:"resume_prompt,omitempty"`
	Lock               *TaskLock        `json:"lock,omitempty"`
	Updated            *time.Time       `json:"updated,omitempty"`
	Note               string           `json:"note"` // path from the vault root
	Project            string           `json:"-"`
}

// Active reports whether the task still counts for conflicts and locks:
// not completed and not archived.
func (t Task) Active() bool { return t.Status != TaskCompleted && t.Status != TaskArchived }

func taskPath(project, id string) string { return project + "/" + TasksDir + "/" + id + ".md" }

func taskLink(project, id string) string { return link(project+"/"+TasksDir+"/"+id, id) }

func taskLinks(project string, ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, taskLink(project, id))
	}
	return out
}

// taskIDs turns a relationship property's values (wikilinks, paths or bare
// ids) into task ids.
func taskIDs(values []string) []string {
	var out []string
	for _, v := range values {
		if id := path.Base(Unlink(v)); id != "" && id != "." {
			out = append(out, strings.TrimSuffix(id, ".md"))
		}
	}
	return out
}

// readTask reads a task from its parsed note.
func (d *doc) readTask(project string) Task {
	t := Task{Project: project, Note: d.path}
	t.ID = d.prop("task_id")
	if t.ID == "" {
		t.ID = strings.TrimSuffix(path.Base(d.path), ".md")
	}
	t.Name = d.prop("name")
	t.Status = d.prop("status")
	if t.Status == "" {
		t.Status = TaskPending
	}
	t.Phase = d.prop("phase")
	t.Iteration = d.intProp("iteration")
	if v := d.prop("score"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			t.Score = &f
		}
	}
	t.Priority = d.intProp("priority")
	t.LockedElements = d.n.GetList("locked_elements")
	t.Blocks = taskIDs(d.n.GetList("blocks"))
	t.DependsOn = taskIDs(d.n.GetList("depends_on"))
	t.RelatedTo = taskIDs(d.n.GetList("related_to"))
	if p := taskIDs([]string{d.prop("parent")}); len(p) > 0 {
		t.Parent = p[0]
	}
	t.Updated = d.timeProp("updated")
	if holder := d.prop("locked_by"); holder != "" {
		l := &TaskLock{Holder: holder}
		if at := d.timeProp("locked_at"); at != nil {
			l.LockedAt = *at
		}
		if exp := d.timeProp("lock_expires"); exp != nil {
			l.ExpiresAt = *exp
		}
		t.Lock = l
	}
	t.Immediate = d.readImmediate()
	// Key files are a property (for queries) and a section (for reading):
	// an item a person added to either counts.
	t.KeyFiles = unionStrings(d.listItems(secKeyFiles, unquoteCode), d.n.GetList("key_files"))
	t.TechnicalDecisions = d.listItems(secTechDec, strings.TrimSpace)
	t.ResumePrompt = strings.TrimSpace(d.sectionText(secResume))
	// Lists are [] in JSON, never null.
	for _, l := range []*[]string{&t.KeyFiles, &t.LockedElements, &t.Blocks, &t.DependsOn, &t.RelatedTo, &t.TechnicalDecisions, &t.Immediate.Blockers} {
		*l = nonNil(*l)
	}
	return t
}

// listItems returns the "- " items of section title, each through clean.
func (d *doc) listItems(title string, clean func(string) string) []string {
	var out []string
	for _, l := range d.sectionLines(title) {
		t := strings.TrimSpace(string(l.Content()))
		if item, ok := strings.CutPrefix(t, "- "); ok {
			if v := clean(strings.TrimSpace(item)); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// sectionText returns an H2 section's body as written.
func (d *doc) sectionText(title string) string {
	s, ok := d.section(title)
	if !ok {
		return ""
	}
	return string(d.body[s.BodyStart:s.End])
}

func unquoteCode(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return s[1 : len(s)-1]
	}
	return s
}

func unionStrings(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range append(append([]string(nil), a...), b...) {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// immediate context bullets: "- **Working on:** value".
var immediateLabels = []struct{ label, key string }{
	{"Working on", "working_on"}, {"Last action", "last_action"}, {"Next step", "next_step"},
	{"Blockers", "blockers"}, {"Notes", "notes"},
}

func (d *doc) readImmediate() ImmediateContext {
	var ic ImmediateContext
	for _, item := range d.listItems(secImmediate, strings.TrimSpace) {
		label, value, ok := strings.Cut(item, ":")
		if !ok {
			continue
		}
		label = strings.ToLower(strings.Trim(strings.TrimSpace(label), "*_ "))
		value = strings.TrimSpace(strings.TrimLeft(value, "*_"))
		value = strings.TrimSpace(strings.TrimLeft(value, "*_ "))
		switch label {
		case "working on":
			ic.WorkingOn = value
		case "last action":
			ic.LastAction = value
		case "next step":
			ic.NextStep = value
		case "blockers":
			if value != "" && !strings.EqualFold(value, "none") {
				for _, b := range strings.Split(value, "; ") {
					if b = strings.TrimSpace(b); b != "" {
						ic.Blockers = append(ic.Blockers, b)
					}
				}
			}
		case "notes":
			ic.Notes = value
		}
	}
	return ic
}

func immediateLines(ic ImmediateContext) []string {
	val := func(v string) string {
		if v = oneLine(v); v != "" {
			return " " + v
		}
		return ""
	}
	blockers := "none"
	if len(ic.Blockers) > 0 {
		var bs []string
		for _, b := range ic.Blockers {
			bs = append(bs, oneLine(b))
		}
		blockers = strings.Join(bs, "; ")
	}
	lines := []string{
		"- **Working on:**" + val(ic.WorkingOn),
		"- **Last action:**" + val(ic.LastAction),
		"- **Next step:**" + val(ic.NextStep),
		"- **Blockers:** " + blockers,
	}
	if ic.Notes != "" {
		lines = append(lines, "- **Notes:**"+val(ic.Notes))
	}
	return lines
}

func keyFileLines(files []string) []string {
	if len(files) == 0 {
		return []string{"_None yet._"}
	}
	var out []string
	for _, f := range files {
		out = append(out, "- `"+f+"`")
	}
	return out
}

// TaskUpdate is a partial update of a task (seed 002 §4.1.2 updates): a nil
// field is left as it is.
type TaskUpdate struct {
	Name               *string           `json:"name,omitempty"`
	Phase              *string           `json:"current_phase,omitempty"`
	Iteration          *int              `json:"iteration,omitempty"`
	Score              *float64          `json:"score,omitempty"`
	Status             *string           `json:"status,omitempty"`
	Priority           *int              `json:"priority,omitempty"`
	Immediate          *ImmediateContext `json:"immediate_context,omitempty"`
	KeyFiles           []string          `json:"key_files,omitempty"`
	TechnicalDecisions []string          `json:"technical_decisions,omitempty"`
	ResumePrompt       *string           `json:"resume_prompt,omitempty"`
	LockedElements     []string          `json:"locked_elements,omitempty"`
	// ImmediateFields changes some fields of the immediate context and keeps
	// the others as the note holds them when the operation runs (after
	// Immediate, when both are given): task update's --working-on,
	// --last-action, --next-step, --blocker and --notes. Read inside the
	// operation, so a change another process made to the other fields
	// meanwhile is kept.
	ImmediateFields *ImmediatePatch `json:"-"`
	// SetKeyFiles, SetDecisions and SetLocked say the matching list is
	// given (an empty list clears it).
	SetKeyFiles, SetDecisions, SetLocked bool `json:"-"`
}

// ImmediatePatch is a change of some fields of a task's immediate context:
// a nil field is kept as it is; Blockers set to an empty list clears them.
type ImmediatePatch struct {
	WorkingOn, LastAction, NextStep, Notes *string
	Blockers                               *[]string
}

// apply returns ic with p's fields changed.
func (p ImmediatePatch) apply(ic ImmediateContext) ImmediateContext {
	for _, f := range []struct {
		v   *string
		dst *string
	}{{p.WorkingOn, &ic.WorkingOn}, {p.LastAction, &ic.LastAction}, {p.NextStep, &ic.NextStep}, {p.Notes, &ic.Notes}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if p.Blockers != nil {
		ic.Blockers = append([]string(nil), *p.Blockers...)
	}
	return ic
}

func (u TaskUpdate) validate() error {
	if u.Status != nil && !slices.Contains(TaskStatuses, *u.Status) {
		return errs.New(errs.UpdateValidationFailed, "status %q is not one of %s", *u.Status, strings.Join(TaskStatuses, ", ")).With("flag", "status")
	}
	if u.Iteration != nil && *u.Iteration < 0 {
		return errs.New(errs.UpdateValidationFailed, "iteration %d is negative", *u.Iteration).With("flag", "iteration")
	}
	if u.Score != nil && (*u.Score < 0 || *u.Score > 1e9) {
		return errs.New(errs.UpdateValidationFailed, "score %v is out of range", *u.Score).With("flag", "score")
	}
	for flag, v := range map[string]*string{"name": u.Name, "phase": u.Phase} {
		if v != nil {
			if err := checkText(flag, *v, 500); err != nil && flag == "phase" && *v == "" {
				continue
			} else if err != nil {
				return err
			}
		}
	}
	if u.ResumePrompt != nil && len(*u.ResumePrompt) > 16<<10 {
		return errs.New(errs.UpdateValidationFailed, "--resume-prompt is %d bytes; at most 16384", len(*u.ResumePrompt)).With("flag", "resume-prompt")
	}
	for _, f := range append(append([]string(nil), u.KeyFiles...), u.LockedElements...) {
		if strings.TrimSpace(f) == "" || strings.ContainsAny(f, "\n\r`") {
			return errs.New(errs.UpdateValidationFailed, "key file or locked element %q is empty or holds a line break or a backquote", f).With("flag", "key-file")
		}
	}
	return nil
}

// apply queues u's edits on d (a task note) at now.
func (d *doc) applyTask(cur Task, u TaskUpdate, now time.Time) {
	if u.Name != nil {
		d.set("name", oneLine(*u.Name))
	}
	if u.Phase != nil {
		d.set("phase", oneLine(*u.Phase))
	}
	if u.Iteration != nil {
		d.set("iteration", *u.Iteration)
	}
	if u.Score != nil {
		d.set("score", *u.Score)
	}
	if u.Status != nil {
		d.set("status", *u.Status)
	}
	if u.Priority != nil {
		d.set("priority", *u.Priority)
	}
	if u.Immediate != nil || u.ImmediateFields != nil {
		ic := cur.Immediate
		if u.Immediate != nil {
			ic = *u.Immediate
		}
		if u.ImmediateFields != nil {
			ic = u.ImmediateFields.apply(ic)
		}
		d.setSection(secImmediate, append(immediateLines(ic), d.otherLines(secImmediate)...))
	}
	if u.SetKeyFiles || len(u.KeyFiles) > 0 {
		d.set("key_files", nonNil(u.KeyFiles))
		d.setSection(secKeyFiles, append(keyFileLines(u.KeyFiles), d.personLines(secKeyFiles)...))
	}
	if u.SetDecisions || len(u.TechnicalDecisions) > 0 {
		lines := []string{"_None yet._"}
		if len(u.TechnicalDecisions) > 0 {
			lines = bulletLines(u.TechnicalDecisions)
		}
		d.setSection(secTechDec, append(lines, d.personLines(secTechDec)...))
	}
	if u.ResumePrompt != nil {
		var lines []string
		if p := strings.TrimSpace(strings.ReplaceAll(*u.ResumePrompt, "\r\n", "\n")); p != "" {
			lines = strings.Split(p, "\n")
		}
		d.setSection(secResume, lines)
	}
	if u.SetLocked || len(u.LockedElements) > 0 {
		d.set("locked_elements", nonNil(u.LockedElements))
	}
	d.set("updated", now)
}

// personLines is otherLines without the engine's own placeholder.
func (d *doc) personLines(title string) []string {
	var out []string
	for _, l := range d.otherLines(title) {
		if strings.TrimSpace(l) != "_None yet._" {
			out = append(out, l)
		}
	}
	return out
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// NewTaskOptions are the inputs of TaskNew.
type NewTaskOptions struct {
	Project   string
	Name      string
	ID        string // "" = from the name
	Priority  int
	KeyFiles  []string
	DependsOn []string
	Blocks    []string
	RelatedTo []string
	Parent    string
}

// TaskOutcome is what a task operation did: the task as written, its
// version (the number of commits that touched its note), and the commits.
type TaskOutcome struct {
	Task    Task         `json:"task"`
	Version int          `json:"version"`
	Result  vault.Result `json:"result"`
}

// TaskNew makes a task note and returns it; the id is the name's slug
// (made unique with -2, -3, …) unless o.ID is given. Relationships must name
// existing tasks (errs.TaskNotFound); one that would close a cycle of
// depends_on/blocks is refused (errs.TaskGraphCycle).
func (s *Service) TaskNew(o NewTaskOptions) (TaskOutcome, error) {
	if err := checkText("name", o.Name, 200); err != nil {
		return TaskOutcome{}, err
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return TaskOutcome{}, err
	}
	if err := (TaskUpdate{KeyFiles: o.KeyFiles}).validate(); err != nil {
		return TaskOutcome{}, err
	}
	var out TaskOutcome
	res, err := s.update(nil, func(tx *vault.Tx) (vault.Change, error) {
		id := o.ID
		if id == "" {
			id = slug(o.Name)
			if id == "" {
				id = "task"
			}
			base := id
			for i := 2; tx.Exists(taskPath(project, id)); i++ {
				id = base + "-" + strconv.Itoa(i)
			}
		} else if tx.Exists(taskPath(project, id)) {
			return vault.Change{}, errs.New(errs.UpdateValidationFailed, "task %s already exists (%s)", id, taskPath(project, id)).With("task", id)
		}
		if err := vault.CheckName("task id", id); err != nil {
			return vault.Change{}, err
		}
		for _, ref := range append(append(append(append([]string(nil), o.DependsOn...), o.Blocks...), o.RelatedTo...), nonEmpty(o.Parent)...) {
			if vault.CheckName("task id", ref) != nil || !tx.Exists(taskPath(project, ref)) {
				return vault.Change{}, errs.New(errs.TaskNotFound, "task %q not found in %s/%s (see `%s`)", ref, project, TasksDir, s.Command(project, "task list")).With("task", ref)
			}
		}
		if len(o.DependsOn)+len(o.Blocks) > 0 {
			// Only an ordering link can close a cycle.
			tasks, err := s.readTasks(tx, project)
			if err != nil {
				return vault.Change{}, err
			}
			t := Task{ID: id, Name: o.Name, Status: TaskPending, DependsOn: o.DependsOn, Blocks: o.Blocks, Project: project}
			if cyc := findCycle(append(tasks, t)); cyc != nil {
				return vault.Change{}, errs.New(errs.TaskGraphCycle, "task %s would close a cycle: %s", id, strings.Join(cyc, " → ")).With("cycle", cyc)
			}
		}
		parent := `""`
		if o.Parent != "" {
			parent = note.Scalar(taskLink(project, o.Parent))
		}
		b, err := s.render("task.md", map[string]string{
			"ID": note.Scalar(id), "Name": note.Scalar(oneLine(o.Name)), "Priority": strconv.Itoa(o.Priority),
			"KeyFiles": note.ListValue(nonNil(o.KeyFiles)), "Blocks": note.ListValue(taskLinks(project, o.Blocks)),
			"DependsOn": note.ListValue(taskLinks(project, o.DependsOn)), "RelatedTo": note.ListValue(taskLinks(project, o.RelatedTo)),
			"Parent": parent, "Now": note.FormatTime(s.now()), "Heading": oneLine(o.Name),
			"KeyFilesList": strings.Join(keyFileLines(o.KeyFiles), "\n"),
		})
		if err != nil {
			return vault.Change{}, err
		}
		rel := taskPath(project, id)
		if err := tx.Write(rel, b); err != nil {
			return vault.Change{}, err
		}
		d, err := s.parseDoc(rel, b)
		if err != nil {
			return vault.Change{}, err
		}
		out.Task = d.readTask(project)
		return vault.Change{Operation: "task-new", Summary: id + " " + oneLine(o.Name), Trailers: map[string]string{"Task": id, "Change-Type": "manual"}}, nil
	})
	out.Result = res
	if err == nil {
		out.Version = 1
	}
	return out, err
}

func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

func taskIndex(tasks []Task) map[string]Task {
	m := make(map[string]Task, len(tasks))
	for _, t := range tasks {
		m[t.ID] = t
	}
	return m
}

// readTasks reads every task note of project, sorted by id.
func (s *Service) readTasks(tx *vault.Tx, project string) ([]Task, error) {
	names, err := tx.List(project + "/" + TasksDir)
	if err != nil {
		return nil, err
	}
	var out []Task
	for _, n := range names {
		if !strings.HasSuffix(n, ".md") {
			continue
		}
		d, err := s.readDoc(tx, project+"/"+TasksDir+"/"+n)
		if err != nil {
			return nil, err
		}
		out = append(out, d.readTask(project))
	}
	return out, nil
}

// Tasks reads every task of project (no commit), sorted by id.
func (s *Service) Tasks(project string) ([]Task, error) {
	project, err := s.Project(project)
	if err != nil {
		return nil, err
	}
	return s.tasksOf(project)
}

func (s *Service) tasksOf(project string) ([]Task, error) {
	dir := path.Join(s.V.Root, project, TasksDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s/%s: %w", project, TasksDir, err)
	}
	var ids []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
			ids = append(ids, strings.TrimSuffix(e.Name(), ".md"))
		}
	}
	// The notes are read and parsed on every core: a graph of 1,000 tasks
	// is mostly YAML parsing.
	out := make([]Task, len(ids))
	errs := make([]error, len(ids))
	workers := min(runtime.GOMAXPROCS(0), len(ids))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(ids); i += workers {
				out[i], errs[i] = s.readTaskFile(project, ids[i])
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (s *Service) readTaskFile(project, id string) (Task, error) {
	rel := taskPath(project, id)
	data, err := s.V.ReadFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return Task{}, s.taskNotFound(errs.TaskNotFound, project, id)
	}
	if err != nil {
		return Task{}, err
	}
	d, err := s.parseDoc(rel, data)
	if err != nil {
		return Task{}, err
	}
	return d.readTask(project), nil
}

func (s *Service) taskNotFound(code errs.Code, project, id string) error {
	return errs.New(code, "task %q not found: no %s (see `%s`)", id, taskPath(project, id), s.Command(project, "task list")).With("task", id)
}

// Task reads one task (errs.TaskNotFound when it has no note).
func (s *Service) Task(project, id string) (Task, error) {
	project, err := s.Project(project)
	if err != nil {
		return Task{}, err
	}
	if err := vault.CheckName("task id", id); err != nil {
		return Task{}, s.taskNotFound(errs.TaskNotFound, project, id)
	}
	return s.readTaskFile(project, id)
}

// SaveTaskOptions are the inputs of SaveTask (seed 002 §4.1.2).
type SaveTaskOptions struct {
	Project       string
	TaskID        string
	Updates       TaskUpdate
	ChangeSummary string
	ChangeType    string // a ChangeType; "" = manual
	Holder        string // the session saving ("" = the active session, else this machine)
}

// SaveTask applies a partial update to a task's note in one commit whose
// trailers name the task and the change type, and returns the task and its
// new version. A task another holder has locked (and whose lock has not
// expired) is refused (errs.TaskLocked), its locked elements included.
func (s *Service) SaveTask(o SaveTaskOptions) (TaskOutcome, error) {
	if err := o.Updates.validate(); err != nil {
		return TaskOutcome{}, err
	}
	if o.ChangeType == "" {
		o.ChangeType = "manual"
	}
	if !slices.Contains(ChangeTypes, o.ChangeType) {
		return TaskOutcome{}, errs.New(errs.UpdateValidationFailed, "change type %q is not one of %s", o.ChangeType, strings.Join(ChangeTypes, ", ")).With("flag", "change-type")
	}
	if err := checkText("summary", o.ChangeSummary, 500); err != nil && o.ChangeSummary != "" {
		return TaskOutcome{}, err
	}
	start := time.Now()
	out, err := s.onTask(o.Project, o.TaskID, o.Holder, true, func(d *doc, t Task, _ string, now time.Time) vault.Change {
		d.applyTask(t, o.Updates, now)
		summary := o.ChangeSummary
		if summary == "" {
			summary = "context saved"
		}
		return vault.Change{Operation: "task-save", Summary: t.ID + ": " + oneLine(summary),
			Trailers: map[string]string{"Task": t.ID, "Change-Type": o.ChangeType, "Duration-Ms": strconv.FormatInt(time.Since(start).Milliseconds(), 10)}}
	})
	if err != nil {
		return out, err
	}
	out.Version, err = s.taskVersionCount(out.Task.Project, out.Task.ID)
	return out, err
}

// onTask runs edit on task id's note as one commit and returns the task as
// written. edit gets the note to queue its edits on, the task as it reads,
// the holder (holder, else the active session, else this machine) and the
// time, and returns the commit's description. With checkLock, a task
// another holder has locked is errs.TaskLocked.
func (s *Service) onTask(project, id, holder string, checkLock bool, edit func(d *doc, t Task, holder string, now time.Time) vault.Change) (TaskOutcome, error) {
	project, err := s.Project(project)
	if err != nil {
		return TaskOutcome{}, err
	}
	var out TaskOutcome
	out.Result, err = s.update(nil, func(tx *vault.Tx) (vault.Change, error) {
		if holder == "" {
			holder = s.holder(tx, project)
		}
		d, t, err := s.taskDoc(tx, project, id, errs.TaskNotFound)
		if err != nil {
			return vault.Change{}, err
		}
		now := s.now()
		if checkLock {
			if err := s.checkLock(project, t, holder, now); err != nil {
				return vault.Change{}, err
			}
		}
		ch := edit(d, t, holder, now)
		if out.Task, err = s.writeTaskDoc(tx, d, project); err != nil {
			return vault.Change{}, err
		}
		return ch, nil
	})
	return out, err
}

// taskDoc reads task id's note through tx; a missing note is code.
func (s *Service) taskDoc(tx *vault.Tx, project, id string, code errs.Code) (*doc, Task, error) {
	if err := vault.CheckName("task id", id); err != nil {
		return nil, Task{}, s.taskNotFound(code, project, id)
	}
	rel := taskPath(project, id)
	if !tx.Exists(rel) {
		return nil, Task{}, s.taskNotFound(code, project, id)
	}
	d, err := s.readDoc(tx, rel)
	if err != nil {
		return nil, Task{}, err
	}
	return d, d.readTask(project), nil
}

// holder is who takes a lock or saves a task: the project's active session,
// else this machine.
func (s *Service) holder(tx *vault.Tx, project string) string {
	cur, _, _ := paths(project)
	if d, err := s.readDoc(tx, cur); err == nil {
		if st := d.readLite(project); st.Active() {
			return st.Session
		}
	}
	name := "vault"
	if m, err := s.V.Machine(); err == nil && m.Name != "" {
		name = m.Name
	}
	return "machine:" + name
}

func (s *Service) checkLock(project string, t Task, holder string, now time.Time) error {
	if t.Lock == nil || t.Lock.Holder == holder || t.Lock.Expired(now) {
		return nil
	}
	return errs.New(errs.TaskLocked, "task %s is locked by %s until %s; wait for it to expire, or release it with `%s`",
		t.ID, t.Lock.Holder, note.FormatTime(t.Lock.ExpiresAt), s.Command(project, "task unlock "+shellQuote(t.ID)+" --force")).
		With("task", t.ID).With("holder", t.Lock.Holder).With("expires_at", note.FormatTime(t.Lock.ExpiresAt))
}

// LockTask takes (or renews, for its holder) task id's lock for
// TaskLockTTL, and adds elements to its locked elements (seed 002 §8.2).
// Another holder's unexpired lock is errs.TaskLocked naming holder and
// expiry. The lock is in the task note's properties (locked_by, locked_at,
// lock_expires), committed: the vault lock makes two processes take turns,
// and two clones that both took it before a sync keep the earlier taker's
// after the merge (vault.MergeNotes).
func (s *Service) LockTask(project, id, holder string, elements []string) (TaskOutcome, error) {
	if err := (TaskUpdate{LockedElements: elements}).validate(); err != nil {
		return TaskOutcome{}, err
	}
	return s.onTask(project, id, holder, true, func(d *doc, t Task, holder string, now time.Time) vault.Change {
		d.set("locked_by", holder)
		if t.Lock == nil || t.Lock.Holder != holder || t.Lock.Expired(now) {
			d.set("locked_at", now)
		}
		d.set("lock_expires", now.Add(TaskLockTTL))
		if len(elements) > 0 {
			d.set("locked_elements", unionStrings(t.LockedElements, elements))
		}
		return vault.Change{Operation: "task-lock", Summary: t.ID + " by " + holder, Trailers: map[string]string{"Task": t.ID, "Change-Type": "manual"}}
	})
}

// UnlockTask releases task id's lock (its holder, an expired lock, or
// force) and removes elements from its locked elements; with elements and
// no lock held, only the elements go.
func (s *Service) UnlockTask(project, id, holder string, elements []string, force bool) (TaskOutcome, error) {
	return s.onTask(project, id, holder, !force, func(d *doc, t Task, _ string, _ time.Time) vault.Change {
		if len(elements) > 0 {
			var keep []string
			for _, e := range t.LockedElements {
				if !slices.Contains(elements, e) {
					keep = append(keep, e)
				}
			}
			d.set("locked_elements", nonNil(keep))
		} else {
			clearLock(d)
		}
		return vault.Change{Operation: "task-unlock", Summary: t.ID, Trailers: map[string]string{"Task": t.ID, "Change-Type": "manual"}}
	})
}

// writeTaskDoc writes d's queued edits through tx and returns the task as
// written.
func (s *Service) writeTaskDoc(tx *vault.Tx, d *doc, project string) (Task, error) {
	b, err := d.bytes()
	if err != nil {
		return Task{}, err
	}
	if err := tx.Write(d.path, b); err != nil {
		return Task{}, err
	}
	nd, err := s.parseDoc(d.path, b)
	if err != nil {
		return Task{}, err
	}
	return nd.readTask(project), nil
}

func clearLock(d *doc) {
	d.unset("locked_by")
	d.unset("locked_at")
	d.unset("lock_expires")
}
