package session

import (
	"errors"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// Where the task notes live and the statuses a task note holds: the state
// note, the feature plans and recovery read them; package tasks writes them.
const (
	TasksDir          = "tasks"
	GlobalContextNote = "global-context.md"
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

func TaskPath(project, id string) string { return project + "/" + TasksDir + "/" + id + ".md" }

func TaskLink(project, id string) string { return Link(project+"/"+TasksDir+"/"+id, id) }

func TaskLinks(project string, ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, TaskLink(project, id))
	}
	return out
}

// taskIDs turns a relationship property's values (wikilinks, paths or bare
// ids) into task ids.
func TaskIDs(values []string) []string {
	var out []string
	for _, v := range values {
		if id := path.Base(Unlink(v)); id != "" && id != "." {
			out = append(out, strings.TrimSuffix(id, ".md"))
		}
	}
	return out
}

func NonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

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

// readTask reads a task from its parsed note.
func (d *Doc) ReadTask(project string) Task {
	t := Task{Project: project, Note: d.Path}
	t.ID = d.Prop("task_id")
	if t.ID == "" {
		t.ID = strings.TrimSuffix(path.Base(d.Path), ".md")
	}
	t.Name = d.Prop("name")
	t.Status = d.Prop("status")
	if t.Status == "" {
		t.Status = TaskPending
	}
	t.Phase = d.Prop("phase")
	t.Iteration = d.IntProp("iteration")
	if v := d.Prop("score"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			t.Score = &f
		}
	}
	t.Priority = d.IntProp("priority")
	t.LockedElements = d.Note.GetList("locked_elements")
	t.Blocks = TaskIDs(d.Note.GetList("blocks"))
	t.DependsOn = TaskIDs(d.Note.GetList("depends_on"))
	t.RelatedTo = TaskIDs(d.Note.GetList("related_to"))
	if p := TaskIDs([]string{d.Prop("parent")}); len(p) > 0 {
		t.Parent = p[0]
	}
	t.Updated = d.timeProp("updated")
	if holder := d.Prop("locked_by"); holder != "" {
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
	t.KeyFiles = UnionStrings(d.listItems(SecKeyFiles, unquoteCode), d.Note.GetList("key_files"))
	t.TechnicalDecisions = d.listItems(SecTechDec, strings.TrimSpace)
	t.ResumePrompt = strings.TrimSpace(d.sectionText(SecResume))
	// Lists are [] in JSON, never null.
	for _, l := range []*[]string{&t.KeyFiles, &t.LockedElements, &t.Blocks, &t.DependsOn, &t.RelatedTo, &t.TechnicalDecisions, &t.Immediate.Blockers} {
		*l = NonNil(*l)
	}
	return t
}

// listItems returns the "- " items of section title, each through clean.
func (d *Doc) listItems(title string, clean func(string) string) []string {
	var out []string
	for _, l := range d.SectionLines(title) {
		t := strings.TrimSpace(string(l.Content()))
		if item, ok := strings.CutPrefix(t, "- "); ok {
			if v := clean(strings.TrimSpace(item)); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

func (d *Doc) readImmediate() ImmediateContext {
	var ic ImmediateContext
	for _, item := range d.listItems(SecImmediate, strings.TrimSpace) {
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

func (s *Service) ReadTaskFile(project, id string) (Task, error) {
	rel := TaskPath(project, id)
	data, err := s.V.ReadFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return Task{}, s.TaskNotFound(errs.TaskNotFound, project, id)
	}
	if err != nil {
		return Task{}, err
	}
	d, err := s.ParseDoc(rel, data)
	if err != nil {
		return Task{}, err
	}
	return d.ReadTask(project), nil
}

func (s *Service) TaskNotFound(code errs.Code, project, id string) error {
	return errs.New(code, "task %q not found: no %s (see `%s`)", id, TaskPath(project, id), s.Command(project, "task list")).With("task", id)
}

// GlobalContext is a project's global context (seed 002 §5.2.5), read from
// <project>/global-context.md: its lists are the sections' bullets; key
// paths and services are "- name: value" bullets.
type GlobalContext struct {
	HardRules  []string          `json:"hard_rules"`
	TechStack  []string          `json:"tech_stack"`
	KeyPaths   map[string]string `json:"key_paths"`
	Services   map[string]string `json:"services"`
	ActiveTask string            `json:"active_task,omitempty"`
}

// Global reads project's global context; a project without the note has
// an empty one.
func (s *Service) Global(project string) (GlobalContext, error) {
	g := GlobalContext{HardRules: []string{}, TechStack: []string{}, KeyPaths: map[string]string{}, Services: map[string]string{}}
	rel := project + "/" + GlobalContextNote
	data, err := s.V.ReadFile(rel)
	if err != nil {
		return g, nil
	}
	d, err := s.ParseDoc(rel, data)
	if err != nil {
		return g, err
	}
	g.HardRules = append(g.HardRules, d.listItems("Hard rules", strings.TrimSpace)...)
	g.TechStack = append(g.TechStack, d.listItems("Tech stack", strings.TrimSpace)...)
	for sec, m := range map[string]map[string]string{"Key paths": g.KeyPaths, "Services": g.Services} {
		for _, item := range d.listItems(sec, strings.TrimSpace) {
			k, v, ok := strings.Cut(item, ":")
			if !ok {
				k, v = item, ""
			}
			m[strings.Trim(strings.TrimSpace(k), "*`")] = strings.Trim(strings.TrimSpace(v), "`")
		}
	}
	if ids := TaskIDs([]string{d.Prop("active_task")}); len(ids) > 0 {
		g.ActiveTask = ids[0]
	}
	return g, nil
}

// The notes of a project's checkpoints and conflicts and their one list
// section each (the tasks package writes them; the merge keeps them by
// entry).
const (
	CheckpointsNote = "checkpoints.md"
	SecCheckpoints  = "Checkpoints"
	ConflictsNote   = "conflicts.md"
	SecConflicts    = "Conflicts"
)

// Task contexts (seed 002 §4.1.1, §4.1.2, §4.1.5, §4.2, §8.2): one note per
// task, <project>/tasks/<task-id>.md. Properties hold the fields a query
// reads (status, phase, relationships as quoted wikilinks, the lock); the
// sections hold what a person reads and edits in Obsidian (immediate
// context, key files, technical decisions, resume prompt). Every other
// section and line a person writes is theirs and kept byte for byte.
const (
	SecImmediate = "Immediate context"
	SecKeyFiles  = "Key files"
	SecTechDec   = "Technical decisions"
	SecResume    = "Resume prompt"

	// TaskLockTTL is how long a task lock holds unless renewed (seed 002
	// §8.2.1: 5 minutes).
	TaskLockTTL = 5 * time.Minute
)

// sectionText returns an H2 section's body as written.
func (d *Doc) sectionText(title string) string {
	s, ok := d.Section(title)
	if !ok {
		return ""
	}
	return string(d.Body[s.BodyStart:s.End])
}

func unquoteCode(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return s[1 : len(s)-1]
	}
	return s
}

func UnionStrings(a, b []string) []string {
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

func NonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
