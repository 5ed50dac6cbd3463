package tasks

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
)

// The task note: how its properties and sections read back as a Task, and
// the global context note.

// ImmediateContext is what a task is in the middle of, the bullets of a task
// note's "Immediate context" section.
type ImmediateContext struct {
	WorkingOn  string   `json:"working_on"`
	LastAction string   `json:"last_action"`
	NextStep   string   `json:"next_step"`
	Blockers   []string `json:"blockers"`
	Notes      string   `json:"notes,omitempty"`
}

// TaskLock is who holds a task and until when; Holder is a session id, or
// "machine:<name>" outside a session.
type TaskLock struct {
	Holder    string    `json:"session_id"`
	LockedAt  time.Time `json:"locked_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// Machine is the machine that took the lock, on a vault whose locks are
	// claims through its git remote ("" otherwise); Clone its clone id
	// (vault.Machine.Clone), which the claim is bound to.
	Machine string `json:"machine,omitempty"`
	Clone   string `json:"clone,omitempty"`
	// Provisional: taken while the remote could not be reached; the next
	// `remote sync` claims it there or removes it (see ClaimOutcome).
	Provisional bool `json:"provisional,omitempty"`
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
func (t Task) Active() bool {
	return t.Status != session.TaskCompleted && t.Status != session.TaskArchived
}

// clone returns a copy of t that shares no list or pointer with it: a task
// kept in a TaskCache is handed out as a clone, so that no caller's change
// reaches the cache.
func (t Task) clone() Task {
	c := t
	for _, l := range []*[]string{&c.KeyFiles, &c.LockedElements, &c.Blocks, &c.DependsOn, &c.RelatedTo, &c.TechnicalDecisions, &c.Immediate.Blockers} {
		if *l != nil {
			*l = slices.Clone(*l)
		}
	}
	if t.Score != nil {
		v := *t.Score
		c.Score = &v
	}
	if t.Lock != nil {
		l := *t.Lock
		c.Lock = &l
	}
	if t.Updated != nil {
		u := *t.Updated
		c.Updated = &u
	}
	return c
}

// ReadTask reads a task from its parsed note.
func ReadTask(d *session.Doc, project string) Task {
	t := Task{Project: project, Note: d.Path}
	t.ID = d.Prop("task_id")
	if t.ID == "" {
		t.ID = strings.TrimSuffix(path.Base(d.Path), ".md")
	}
	t.Name = d.Prop("name")
	t.Status = d.Prop("status")
	if t.Status == "" {
		t.Status = session.TaskPending
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
	t.Blocks = session.TaskIDs(d.Note.GetList("blocks"))
	t.DependsOn = session.TaskIDs(d.Note.GetList("depends_on"))
	t.RelatedTo = session.TaskIDs(d.Note.GetList("related_to"))
	if p := session.TaskIDs([]string{d.Prop("parent")}); len(p) > 0 {
		t.Parent = p[0]
	}
	t.Updated = d.TimeProp("updated")
	if holder := d.Prop("locked_by"); holder != "" {
		l := &TaskLock{Holder: holder}
		if at := d.TimeProp("locked_at"); at != nil {
			l.LockedAt = *at
		}
		if exp := d.TimeProp("lock_expires"); exp != nil {
			l.ExpiresAt = *exp
		}
		l.Machine = d.Prop(propLockMachine)
		l.Clone = d.Prop(propLockClone)
		l.Provisional = d.Prop(propLockProvisional) == "true"
		t.Lock = l
	}
	t.Immediate = readImmediate(d)
	// Key files are a property (for queries) and a section (for reading):
	// an item a person added to either counts.
	t.KeyFiles = UnionStrings(listItems(d, SecKeyFiles, unquoteCode), d.Note.GetList("key_files"))
	t.TechnicalDecisions = listItems(d, SecTechDec, strings.TrimSpace)
	t.ResumePrompt = strings.TrimSpace(sectionText(d, SecResume))
	// Lists are [] in JSON, never null.
	for _, l := range []*[]string{&t.KeyFiles, &t.LockedElements, &t.Blocks, &t.DependsOn, &t.RelatedTo, &t.TechnicalDecisions, &t.Immediate.Blockers} {
		*l = session.NonNil(*l)
	}
	return t
}

// listItems returns the "- " items of section title, each through clean.
func listItems(d *session.Doc, title string, clean func(string) string) []string {
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

func readImmediate(d *session.Doc) ImmediateContext {
	var ic ImmediateContext
	for _, item := range listItems(d, SecImmediate, strings.TrimSpace) {
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

// ReadTaskFile reads a task's note (errs.TaskNotFound when it has none).
func (s *Service) ReadTaskFile(project, id string) (Task, error) {
	rel := session.TaskPath(project, id)
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
	return ReadTask(d, project), nil
}

// TaskNotFound is the error code's error for a task id with no note,
// naming the command that lists the tasks.
func (s *Service) TaskNotFound(code errs.Code, project, id string) error {
	return errs.New(code, "task %q not found: no %s (see `%s`)", id, session.TaskPath(project, id), s.Command(project, "task list")).With("task", id)
}

// GlobalContext is a project's global context, read from
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
	rel := project + "/" + session.GlobalContextNote
	data, err := s.V.ReadFile(rel)
	if err != nil {
		return g, nil
	}
	d, err := s.ParseDoc(rel, data)
	if err != nil {
		return g, err
	}
	g.HardRules = append(g.HardRules, listItems(d, "Hard rules", strings.TrimSpace)...)
	g.TechStack = append(g.TechStack, listItems(d, "Tech stack", strings.TrimSpace)...)
	for sec, m := range map[string]map[string]string{"Key paths": g.KeyPaths, "Services": g.Services} {
		for _, item := range listItems(d, sec, strings.TrimSpace) {
			k, v, ok := strings.Cut(item, ":")
			if !ok {
				k, v = item, ""
			}
			m[strings.Trim(strings.TrimSpace(k), "*`")] = strings.Trim(strings.TrimSpace(v), "`")
		}
	}
	if ids := session.TaskIDs([]string{d.Prop("active_task")}); len(ids) > 0 {
		g.ActiveTask = ids[0]
	}
	return g, nil
}

// Task contexts (read by get_unified_context, saved by save_context_snapshot
// and switch_task, locked by one holder at a time): one note per task,
// <project>/tasks/<task-id>.md. Properties hold the fields a query
// reads (status, phase, relationships as quoted wikilinks, the lock); the
// sections hold what a person reads and edits in Obsidian (immediate
// context, key files, technical decisions, resume prompt). Every other
// section and line a person writes is theirs and kept byte for byte.
const (
	SecImmediate = "Immediate context"
	SecKeyFiles  = "Key files"
	SecTechDec   = "Technical decisions"
	SecResume    = "Resume prompt"

	// TaskLockTTL is how long a task lock holds unless renewed: 5 minutes.
	TaskLockTTL = 5 * time.Minute
)

// sectionText returns an H2 section's body as written.
func sectionText(d *session.Doc, title string) string {
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

// UnionStrings returns the items of a, then of b, each once, in order,
// leaving out empty ones.
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
