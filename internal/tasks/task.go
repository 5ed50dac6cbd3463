package tasks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/shellquote"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// ChangeType values of a task version, written in the
// commit trailer "Change-Type".
var ChangeTypes = []string{"manual", "auto_save", "checkpoint", "recovery", "migration"}

// taskSections are the sections of a task note the engine writes; the rest
// are the person's.
var taskSections = []string{SecImmediate, SecKeyFiles, SecTechDec, SecResume}

// taskProps are the task note's properties the engine writes; any other is
// the person's.
var taskProps = []string{"type", "task_id", "name", "status", "phase", "iteration", "score", "priority", "key_files",
	"locked_elements", "blocks", "depends_on", "related_to", "parent", "created", "updated", "last_session_at",
	"locked_by", "locked_at", "lock_expires", "tags"}

// immediate context bullets: "- **Working on:** value".
var immediateLabels = []struct{ label, key string }{
	{"Working on", "working_on"}, {"Last action", "last_action"}, {"Next step", "next_step"},
	{"Blockers", "blockers"}, {"Notes", "notes"},
}

func immediateLines(ic ImmediateContext) []string {
	val := func(v string) string {
		if v = session.OneLine(v); v != "" {
			return " " + v
		}
		return ""
	}
	blockers := "none"
	if len(ic.Blockers) > 0 {
		var bs []string
		for _, b := range ic.Blockers {
			bs = append(bs, session.OneLine(b))
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

// TaskUpdate is a partial update of a task (save_context_snapshot's
// updates): a nil field is left as it is.
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
	if u.Status != nil && !slices.Contains(session.TaskStatuses, *u.Status) {
		return errs.New(errs.UpdateValidationFailed, "status %q is not one of %s", *u.Status, strings.Join(session.TaskStatuses, ", ")).With("flag", "status")
	}
	if u.Iteration != nil && *u.Iteration < 0 {
		return errs.New(errs.UpdateValidationFailed, "iteration %d is negative", *u.Iteration).With("flag", "iteration")
	}
	if u.Score != nil && (*u.Score < 0 || *u.Score > 1e9) {
		return errs.New(errs.UpdateValidationFailed, "score %v is out of range", *u.Score).With("flag", "score")
	}
	for flag, v := range map[string]*string{"name": u.Name, "phase": u.Phase} {
		if v != nil {
			if err := session.CheckText(flag, *v, 500); err != nil && flag == "phase" && *v == "" {
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
func applyTask(d *session.Doc, cur Task, u TaskUpdate, now time.Time) {
	if u.Name != nil {
		d.Set("name", session.OneLine(*u.Name))
	}
	if u.Phase != nil {
		d.Set("phase", session.OneLine(*u.Phase))
	}
	if u.Iteration != nil {
		d.Set("iteration", *u.Iteration)
	}
	if u.Score != nil {
		d.Set("score", *u.Score)
	}
	if u.Status != nil {
		d.Set("status", *u.Status)
	}
	if u.Priority != nil {
		d.Set("priority", *u.Priority)
	}
	if u.Immediate != nil || u.ImmediateFields != nil {
		ic := cur.Immediate
		if u.Immediate != nil {
			ic = *u.Immediate
		}
		if u.ImmediateFields != nil {
			ic = u.ImmediateFields.apply(ic)
		}
		d.SetSection(SecImmediate, append(immediateLines(ic), d.OtherLines(SecImmediate)...))
	}
	if u.SetKeyFiles || len(u.KeyFiles) > 0 {
		d.Set("key_files", session.NonNil(u.KeyFiles))
		d.SetSection(SecKeyFiles, append(keyFileLines(u.KeyFiles), personLines(d, SecKeyFiles)...))
	}
	if u.SetDecisions || len(u.TechnicalDecisions) > 0 {
		lines := []string{"_None yet._"}
		if len(u.TechnicalDecisions) > 0 {
			lines = session.BulletLines(u.TechnicalDecisions)
		}
		d.SetSection(SecTechDec, append(lines, personLines(d, SecTechDec)...))
	}
	if u.ResumePrompt != nil {
		var lines []string
		if p := strings.TrimSpace(strings.ReplaceAll(*u.ResumePrompt, "\r\n", "\n")); p != "" {
			lines = strings.Split(p, "\n")
		}
		d.SetSection(SecResume, lines)
	}
	if u.SetLocked || len(u.LockedElements) > 0 {
		d.Set("locked_elements", session.NonNil(u.LockedElements))
	}
	d.Set("updated", now)
}

// personLines is otherLines without the engine's own placeholder.
func personLines(d *session.Doc, title string) []string {
	var out []string
	for _, l := range d.OtherLines(title) {
		if strings.TrimSpace(l) != "_None yet._" {
			out = append(out, l)
		}
	}
	return out
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
	// Claim is what became of the task's claim on the vault's remote in a
	// lock or an unlock (nil without remote claims).
	Claim *ClaimOutcome `json:"claim,omitempty"`
}

// TaskNew makes a task note and returns it; the id is the name's slug
// (made unique with -2, -3, …) unless o.ID is given. Relationships must name
// existing tasks (errs.TaskNotFound); one that would close a cycle of
// depends_on/blocks is refused (errs.TaskGraphCycle).
func (s *Service) TaskNew(o NewTaskOptions) (TaskOutcome, error) {
	if err := session.CheckText("name", o.Name, 200); err != nil {
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
	res, err := s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		id := o.ID
		if id == "" {
			id = session.Slug(o.Name)
			if id == "" {
				id = "task"
			}
			base := id
			for i := 2; tx.Exists(session.TaskPath(project, id)); i++ {
				id = base + "-" + strconv.Itoa(i)
			}
		} else if tx.Exists(session.TaskPath(project, id)) {
			return vault.Change{}, errs.New(errs.UpdateValidationFailed, "task %s already exists (%s)", id, session.TaskPath(project, id)).With("task", id)
		}
		if err := vault.CheckName("task id", id); err != nil {
			return vault.Change{}, err
		}
		for _, ref := range append(append(append(append([]string(nil), o.DependsOn...), o.Blocks...), o.RelatedTo...), session.NonEmpty(o.Parent)...) {
			if vault.CheckName("task id", ref) != nil || !tx.Exists(session.TaskPath(project, ref)) {
				return vault.Change{}, errs.New(errs.TaskNotFound, "task %q not found in %s/%s (see `%s`)", ref, project, session.TasksDir, s.Command(project, "task list")).With("task", ref)
			}
		}
		if len(o.DependsOn)+len(o.Blocks) > 0 {
			// Only an ordering link can close a cycle.
			tasks, err := s.readTasks(tx, project)
			if err != nil {
				return vault.Change{}, err
			}
			t := Task{ID: id, Name: o.Name, Status: session.TaskPending, DependsOn: o.DependsOn, Blocks: o.Blocks, Project: project}
			if cyc := findCycle(append(tasks, t)); cyc != nil {
				return vault.Change{}, errs.New(errs.TaskGraphCycle, "task %s would close a cycle: %s", id, strings.Join(cyc, " → ")).With("cycle", cyc)
			}
		}
		parent := `""`
		if o.Parent != "" {
			parent = note.Scalar(session.TaskLink(project, o.Parent))
		}
		b, err := s.Render("task.md", map[string]string{
			"ID": note.Scalar(id), "Name": note.Scalar(session.OneLine(o.Name)), "Priority": strconv.Itoa(o.Priority),
			"KeyFiles": note.ListValue(session.NonNil(o.KeyFiles)), "Blocks": note.ListValue(session.TaskLinks(project, o.Blocks)),
			"DependsOn": note.ListValue(session.TaskLinks(project, o.DependsOn)), "RelatedTo": note.ListValue(session.TaskLinks(project, o.RelatedTo)),
			"Parent": parent, "Now": note.FormatTime(s.NowUTC()), "Heading": session.OneLine(o.Name),
			"KeyFilesList": strings.Join(keyFileLines(o.KeyFiles), "\n"),
		})
		if err != nil {
			return vault.Change{}, err
		}
		rel := session.TaskPath(project, id)
		if err := tx.Write(rel, b); err != nil {
			return vault.Change{}, err
		}
		d, err := s.ParseDoc(rel, b)
		if err != nil {
			return vault.Change{}, err
		}
		out.Task = ReadTask(d, project)
		return vault.Change{Operation: "task-new", Summary: id + " " + session.OneLine(o.Name), Trailers: map[string]string{"Task": id, "Change-Type": "manual"}}, nil
	})
	out.Result = res
	if err == nil {
		out.Version = 1
	}
	return out, err
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
	names, err := tx.List(project + "/" + session.TasksDir)
	if err != nil {
		return nil, err
	}
	var out []Task
	for _, n := range names {
		if !strings.HasSuffix(n, ".md") {
			continue
		}
		d, err := s.ReadDoc(tx, project+"/"+session.TasksDir+"/"+n)
		if err != nil {
			return nil, err
		}
		out = append(out, ReadTask(d, project))
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

// tasksOf reads every task note of project, sorted by id, through s's
// cache when it has one (WithCache): then only the notes changed since they
// were last read are read and parsed.
func (s *Service) tasksOf(project string) ([]Task, error) {
	r, err := s.readTaskNotes(project)
	if err != nil {
		return nil, err
	}
	tasks := r.tasks()
	if s.cache != nil {
		for i := range tasks {
			tasks[i] = tasks[i].clone()
		}
	}
	return tasks, nil
}

// taskReading is what readTaskNotes read: the tasks of a project's notes.
type taskReading struct {
	// read are the tasks, in the order of the ids their notes' names give;
	// through a cache, the cache's own, which must not be modified.
	read []*Task
	// gen is the generation of the cache's notes (notecache.Cache.Gen) the
	// reading started at, and stable is true when every task read is the
	// one the cache held at gen: what is computed from them holds for every
	// later reading that is stable at the same generation. Without a
	// cache, stable is false.
	gen    uint64
	stable bool
}

// tasks returns the tasks read, sorted by id. Through a cache, they share
// their lists with it, and must not be modified (tasksOf copies them).
func (r taskReading) tasks() []Task {
	if len(r.read) == 0 {
		return nil
	}
	out := make([]Task, len(r.read))
	for i, t := range r.read {
		out[i] = *t
	}
	// The notes were read in the order of the ids their names give, which
	// a note's task_id rarely contradicts: the tasks are sorted already.
	byID := func(a, b Task) int { return strings.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(out, byID) {
		slices.SortStableFunc(out, byID)
	}
	return out
}

// readTaskNotes reads every task note of project, through s's cache when it
// has one: then only the notes changed since they were last read are read
// and parsed, and a note's task is the cache's own.
func (s *Service) readTaskNotes(project string) (taskReading, error) {
	var r taskReading
	dir := path.Join(s.V.Root, project, session.TasksDir)
	if s.cache != nil {
		r.gen = s.cache.notes.Gen()
	}
	stable := func() bool { return s.cache != nil && s.cache.notes.Gen() == r.gen }
	// The listing unsorted (the names are sorted below), each entry's type
	// from the listing itself.
	ents, err := readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if s.cache != nil {
			s.cache.notes.Forget(dir, nil)
		}
		r.stable = stable()
		return r, nil
	}
	if err != nil {
		return taskReading{}, fmt.Errorf("listing %s/%s: %w", project, session.TasksDir, err)
	}
	var ids []string
	var listed map[string]bool
	if s.cache != nil {
		listed = make(map[string]bool, len(ents))
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".md") {
			ids = append(ids, strings.TrimSuffix(e.Name(), ".md"))
			if listed != nil {
				listed[e.Name()] = true
			}
		}
	}
	slices.Sort(ids)
	load := func(id string) (*Task, error) {
		t, err := s.ReadTaskFile(project, id)
		if err != nil {
			return nil, err
		}
		return &t, nil
	}
	read := load
	if s.cache != nil {
		s.cache.notes.Forget(dir, listed)
		read = func(id string) (*Task, error) {
			return s.cache.notes.Get(filepath.Join(dir, id+".md"), func() (*Task, error) { return load(id) })
		}
	}
	// The notes are read and parsed on every core: a graph of 1,000 tasks
	// is mostly YAML parsing.
	r.read = make([]*Task, len(ids))
	errs := make([]error, len(ids))
	workers := min(runtime.GOMAXPROCS(0), len(ids))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(ids); i += workers {
				r.read[i], errs[i] = read(ids[i])
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return taskReading{}, err
		}
	}
	r.stable = stable()
	return r, nil
}

// readDir lists the folder dir, unsorted.
func readDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Task reads one task (errs.TaskNotFound when it has no note).
func (s *Service) Task(project, id string) (Task, error) {
	project, err := s.Project(project)
	if err != nil {
		return Task{}, err
	}
	if err := vault.CheckName("task id", id); err != nil {
		return Task{}, s.TaskNotFound(errs.TaskNotFound, project, id)
	}
	return s.ReadTaskFile(project, id)
}

// SaveTaskOptions are the inputs of SaveTask (the save_context_snapshot MCP
// tool).
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
	if err := session.CheckText("summary", o.ChangeSummary, 500); err != nil && o.ChangeSummary != "" {
		return TaskOutcome{}, err
	}
	start := time.Now()
	out, err := s.onTask(o.Project, o.TaskID, o.Holder, true, func(d *session.Doc, t Task, _ string, now time.Time) vault.Change {
		applyTask(d, t, o.Updates, now)
		summary := o.ChangeSummary
		if summary == "" {
			summary = "context saved"
		}
		return vault.Change{Operation: "task-save", Summary: t.ID + ": " + session.OneLine(summary),
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
func (s *Service) onTask(project, id, holder string, checkLock bool, edit func(d *session.Doc, t Task, holder string, now time.Time) vault.Change) (TaskOutcome, error) {
	project, err := s.Project(project)
	if err != nil {
		return TaskOutcome{}, err
	}
	var out TaskOutcome
	out.Result, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		if holder == "" {
			holder = s.holder(tx, project)
		}
		d, t, err := s.taskDoc(tx, project, id, errs.TaskNotFound)
		if err != nil {
			return vault.Change{}, err
		}
		now := s.NowUTC()
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
func (s *Service) taskDoc(tx *vault.Tx, project, id string, code errs.Code) (*session.Doc, Task, error) {
	if err := vault.CheckName("task id", id); err != nil {
		return nil, Task{}, s.TaskNotFound(code, project, id)
	}
	rel := session.TaskPath(project, id)
	if !tx.Exists(rel) {
		return nil, Task{}, s.TaskNotFound(code, project, id)
	}
	d, err := s.ReadDoc(tx, rel)
	if err != nil {
		return nil, Task{}, err
	}
	return d, ReadTask(d, project), nil
}

// holder is who takes a lock or saves a task: the project's active session,
// else this machine.
func (s *Service) holder(tx *vault.Tx, project string) string {
	cur, _, _ := session.Paths(project)
	if d, err := s.ReadDoc(tx, cur); err == nil {
		if st := d.ReadLite(project); st.Active() {
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
		t.ID, t.Lock.Holder, note.FormatTime(t.Lock.ExpiresAt), s.Command(project, "task unlock "+shellquote.Quote(t.ID)+" --force")).
		With("task", t.ID).With("holder", t.Lock.Holder).With("expires_at", note.FormatTime(t.Lock.ExpiresAt))
}

// LockTask takes (or renews, for its holder) task id's lock for
// TaskLockTTL, and adds elements to its locked elements.
// Another holder's unexpired lock is errs.TaskLocked naming holder and
// expiry. The lock is in the task note's properties (locked_by, locked_at,
// lock_expires), committed: the vault lock makes two processes take turns.
//
// On a vault whose locks are claims through its git remote (claimsRemote)
// the task's claim is taken on the remote first, for the config's
// claim_lease: another holder's claim there is errs.TaskLocked naming it,
// and nothing is written; an unreachable remote makes the lock provisional
// (see ConfirmClaims). The outcome's Claim says which. Without remote
// claims, two clones that both took the lock before a sync keep the
// earlier taker's after the merge (notemerge.MergeNotes).
func (s *Service) LockTask(project, id, holder string, elements []string) (TaskOutcome, error) {
	if err := (TaskUpdate{LockedElements: elements}).validate(); err != nil {
		return TaskOutcome{}, err
	}
	project, err := s.Project(project)
	if err != nil {
		return TaskOutcome{}, err
	}
	var claim *ClaimOutcome
	var m vault.Machine
	how := ""
	if remote := s.claimsRemote(); remote != "" {
		// What would refuse the note's write refuses before the remote is
		// touched: a claim pushed for a lock never written would hold the
		// task for nobody.
		if err := s.V.CheckWritable(); err != nil {
			return TaskOutcome{}, err
		}
		if err := s.taskExists(project, id); err != nil {
			return TaskOutcome{}, err
		}
		if m, err = s.V.Machine(); err != nil {
			return TaskOutcome{}, err
		}
		h := s.lockHolder(project, holder, m)
		var c ClaimOutcome
		if c, how, err = s.claimFor(remote, project, id, h, m); err != nil {
			return TaskOutcome{}, err
		}
		holder, claim = h, &c
	}
	// A claim taken on the remote decides; the note's lock is checked
	// otherwise (and for a provisional claim).
	checkLock := claim == nil || claim.State == "provisional"
	out, err := s.onTask(project, id, holder, checkLock, func(d *session.Doc, t Task, holder string, now time.Time) vault.Change {
		d.Set("locked_by", holder)
		if t.Lock == nil || t.Lock.Holder != holder || t.Lock.Expired(now) {
			d.Set("locked_at", now)
		}
		switch {
		case claim == nil:
			d.Set("lock_expires", now.Add(TaskLockTTL))
		case claim.State == "provisional":
			d.Set("lock_expires", now.Add(s.V.Config.ClaimLease.Duration))
			setLockClone(d, m)
			d.Set(propLockProvisional, true)
		default:
			d.Set("lock_expires", claim.Expires)
			setLockClone(d, m)
			d.Unset(propLockProvisional)
		}
		if len(elements) > 0 {
			d.Set("locked_elements", UnionStrings(t.LockedElements, elements))
		}
		return vault.Change{Operation: "task-lock", Summary: t.ID + " by " + holder, Trailers: map[string]string{"Task": t.ID, "Change-Type": "manual"}}
	})
	if err != nil && claim != nil && (how == vault.ClaimCreated || how == vault.ClaimTakeover) {
		// Nothing was written here: the claim this call took goes too (one
		// it renewed stays: the lock it backs is still in the note).
		_, _ = s.V.ReleaseClaim(claim.Remote, project, id, holder, m.Clone, false)
	}
	out.Claim = claim
	return out, err
}

// UnlockTask releases task id's lock (its holder, an expired lock, or
// force) and removes elements from its locked elements; with elements and
// no lock held, only the elements go. On a vault whose locks are claims
// through its remote, another holder's claim there refuses the unlock
// (errs.TaskLocked) unless forced; the note is written first, then the
// claim released (an unreachable remote leaves it to end with its lease:
// the outcome's Claim says so).
func (s *Service) UnlockTask(project, id, holder string, elements []string, force bool) (TaskOutcome, error) {
	project, err := s.Project(project)
	if err != nil {
		return TaskOutcome{}, err
	}
	remote := ""
	if len(elements) == 0 {
		remote = s.claimsRemote()
	}
	var m vault.Machine
	offline := false
	if remote != "" {
		if err := s.V.CheckWritable(); err != nil {
			return TaskOutcome{}, err
		}
		if err := s.taskExists(project, id); err != nil {
			return TaskOutcome{}, err
		}
		if m, err = s.V.Machine(); err != nil {
			return TaskOutcome{}, err
		}
		holder = s.lockHolder(project, holder, m)
		cur, ok, err := s.V.ReadClaim(remote, project, id)
		switch {
		case errs.Is(err, errs.NetworkUnavailable):
			offline = true
		case err != nil:
			return TaskOutcome{}, err
		case ok && !force && !cur.Mine(holder, m.Clone) && s.NowUTC().Before(cur.Expires.Add(vault.ClaimGrace(s.V.Config.ClaimLease.Duration))):
			return TaskOutcome{}, s.claimHeld(project, id, remote, cur, true)
		}
	}
	out, err := s.onTask(project, id, holder, !force, func(d *session.Doc, t Task, _ string, _ time.Time) vault.Change {
		if len(elements) > 0 {
			var keep []string
			for _, e := range t.LockedElements {
				if !slices.Contains(elements, e) {
					keep = append(keep, e)
				}
			}
			d.Set("locked_elements", session.NonNil(keep))
		} else {
			clearLock(d)
		}
		return vault.Change{Operation: "task-unlock", Summary: t.ID, Trailers: map[string]string{"Task": t.ID, "Change-Type": "manual"}}
	})
	if err != nil || remote == "" {
		return out, err
	}
	c := ClaimOutcome{Task: id, Remote: remote, State: "released"}
	if offline {
		c.State = "left to expire"
	} else {
		done, rerr := s.V.ReleaseClaim(remote, project, id, holder, m.Clone, force)
		var held *vault.ClaimHeldError
		switch {
		case errs.Is(rerr, errs.NetworkUnavailable):
			c.State = "left to expire"
		case errors.As(rerr, &held):
			c.State, c.Holder, c.Machine, c.Expires = "not yours", held.Claim.Holder, held.Claim.Machine, held.Claim.Expires
		case rerr != nil:
			return out, rerr
		case !done:
			c.State = "none"
		}
	}
	out.Claim = &c
	return out, nil
}

// taskExists is nil when task id's note exists, else errs.TaskNotFound.
func (s *Service) taskExists(project, id string) error {
	if err := vault.CheckName("task id", id); err != nil {
		return s.TaskNotFound(errs.TaskNotFound, project, id)
	}
	abs, err := s.V.Abs(session.TaskPath(project, id))
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return s.TaskNotFound(errs.TaskNotFound, project, id)
	}
	return nil
}

// writeTaskDoc writes d's queued edits through tx and returns the task as
// written.
func (s *Service) writeTaskDoc(tx *vault.Tx, d *session.Doc, project string) (Task, error) {
	b, err := d.Bytes()
	if err != nil {
		return Task{}, err
	}
	if err := tx.Write(d.Path, b); err != nil {
		return Task{}, err
	}
	nd, err := s.ParseDoc(d.Path, b)
	if err != nil {
		return Task{}, err
	}
	return ReadTask(nd, project), nil
}

func clearLock(d *session.Doc) {
	d.Unset("locked_by")
	d.Unset("locked_at")
	d.Unset("lock_expires")
	d.Unset(propLockMachine)
	d.Unset(propLockClone)
	d.Unset(propLockProvisional)
}
