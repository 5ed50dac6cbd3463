package tasks

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// TaskVersion is one version of a task's note (an entry of
// get_unified_context's version_history): version N is the Nth commit that
// touched the note.
type TaskVersion struct {
	Version       int       `json:"version"`
	Commit        string    `json:"commit"`
	CreatedAt     time.Time `json:"created_at"`
	ChangeType    string    `json:"change_type"`
	ChangeSummary string    `json:"change_summary"`
}

// TaskVersions lists task id's versions, oldest first; max > 0 keeps the
// newest max.
func (s *Service) TaskVersions(project, id string, max int) ([]TaskVersion, error) {
	t, err := s.Task(project, id)
	if err != nil {
		return nil, err
	}
	project = t.Project
	log, err := s.V.PathLog(session.TaskPath(project, id))
	if err != nil {
		return nil, err
	}
	out := make([]TaskVersion, 0, len(log))
	for i, c := range log {
		ct := c.Trailers["Change-Type"]
		if ct == "" {
			ct = "manual" // a person's edit, or a commit made by git itself
		}
		summary := c.Subject
		if _, rest, ok := strings.Cut(summary, ": "); ok && c.Trailers["Operation"] != "" {
			summary = rest
		}
		out = append(out, TaskVersion{Version: i + 1, Commit: c.Hash, CreatedAt: c.Time.UTC(), ChangeType: ct, ChangeSummary: summary})
	}
	if max > 0 && len(out) > max {
		out = out[len(out)-max:]
	}
	return out, nil
}

// versionMark is a known fact about a task note's history: Count commits
// reachable from Commit changed it.
type versionMark struct {
	Commit string `json:"commit"`
	Count  int    `json:"count"`
}

// taskVersionCount is the number of commits that changed task id's note
// (its current version). It extends the count last recorded for the task
// (.sessionvault/state/task-versions-<project>, a fact about one commit,
// true whoever wrote it last) over the few commits since, in process, and
// asks git to count the whole history only when the chain since holds a
// merge or is long.
func (s *Service) taskVersionCount(project, id string) (int, error) {
	rel := session.TaskPath(project, id)
	name := "task-versions-" + project
	marks := map[string]versionMark{}
	if data, err := s.V.ReadState(name); err == nil {
		_ = json.Unmarshal(data, &marks) // a broken record is counted again
	}
	count := -1
	var head string
	if m, ok := marks[id]; ok && m.Commit != "" {
		if n, h, ok, err := s.V.PathChangesSince(m.Commit, rel, 64); err == nil && ok {
			count, head = m.Count+n, h
		}
	}
	if count < 0 {
		var err error
		if head, err = s.V.Head(); err != nil {
			return 0, err
		}
		if count, err = s.V.PathCommitCount(head, rel); err != nil {
			return 0, err
		}
	}
	marks[id] = versionMark{Commit: head, Count: count}
	if b, err := json.Marshal(marks); err == nil {
		_ = s.V.WriteState(name, b) // only a cache: the next count asks git
	}
	return count, nil
}

// TaskRef names a task.
type TaskRef struct {
	TaskID string `json:"task_id"`
	Name   string `json:"name"`
	Status string `json:"status"`
}

func refs(byID map[string]Task, ids []string) []TaskRef {
	out := []TaskRef{}
	for _, id := range ids {
		t := byID[id]
		out = append(out, TaskRef{TaskID: id, Name: t.Name, Status: t.Status})
	}
	return out
}

// SwitchOptions are the inputs of SwitchTask (the switch_task MCP tool).
type SwitchOptions struct {
	Project string
	From    string // "" = only load To
	To      string
	// NoSave skips saving From (saveCurrentState false).
	NoSave  bool
	Updates TaskUpdate // applied to From when saved (immediate context, phase, iteration)
	Holder  string
}

// SwitchOutcome is what SwitchTask did (switch_task's result).
type SwitchOutcome struct {
	Previous  *SwitchedFrom `json:"previous_task,omitempty"`
	New       Task          `json:"new_task"`
	BlockedBy []TaskRef     `json:"blocked_by"`
	Timestamp time.Time     `json:"timestamp"`
	Result    vault.Result  `json:"result"`
}

// SwitchedFrom is the task switched away from.
type SwitchedFrom struct {
	TaskID  string `json:"task_id"`
	Saved   bool   `json:"saved"`
	Version int    `json:"version"`
}

// SwitchTask saves From's context and loads To in one commit: From gets
// Updates, To becomes in_progress (from pending) with last_session_at, and
// the project's active task (global-context.md) and the active session's
// (active_task in the current state) name To. A missing From is
// errs.SourceTaskNotFound, a missing To errs.TargetTaskNotFound; a task
// another holder locked is errs.TaskLocked. Nothing changes on error.
func (s *Service) SwitchTask(o SwitchOptions) (SwitchOutcome, error) {
	if err := o.Updates.validate(); err != nil {
		return SwitchOutcome{}, err
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return SwitchOutcome{}, err
	}
	var out SwitchOutcome
	start := time.Now()
	res, err := s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		holder := o.Holder
		if holder == "" {
			holder = s.holder(tx, project)
		}
		now := s.NowUTC()
		out.Timestamp = now
		var fromDoc *session.Doc
		var from Task
		if o.From != "" {
			var err error
			if fromDoc, from, err = s.taskDoc(tx, project, o.From, errs.SourceTaskNotFound); err != nil {
				return vault.Change{}, err
			}
		}
		toDoc, to, err := s.taskDoc(tx, project, o.To, errs.TargetTaskNotFound)
		if err != nil {
			return vault.Change{}, err
		}
		if err := s.checkLock(project, to, holder, now); err != nil {
			return vault.Change{}, err
		}
		if fromDoc != nil && !o.NoSave && fromDoc.Path != toDoc.Path {
			if err := s.checkLock(project, from, holder, now); err != nil {
				return vault.Change{}, err
			}
			applyTask(fromDoc, from, o.Updates, now)
			b, err := fromDoc.Bytes()
			if err != nil {
				return vault.Change{}, err
			}
			if err := tx.Write(fromDoc.Path, b); err != nil {
				return vault.Change{}, err
			}
			out.Previous = &SwitchedFrom{TaskID: from.ID, Saved: true}
		} else if fromDoc != nil {
			out.Previous = &SwitchedFrom{TaskID: from.ID}
		}
		if to.Status == session.TaskPending {
			toDoc.Set("status", session.TaskInProgress)
		}
		toDoc.Set("last_session_at", now)
		if out.New, err = s.writeTaskDoc(tx, toDoc, project); err != nil {
			return vault.Change{}, err
		}
		if err := s.setActiveTask(tx, project, to.ID, now); err != nil {
			return vault.Change{}, err
		}
		session := ""
		if h := holder; !strings.HasPrefix(h, "machine:") {
			session = h
		}
		return vault.Change{Operation: "task-switch", Session: session, Summary: "to " + to.ID,
			Trailers: map[string]string{"Task": to.ID, "Change-Type": "manual", "Duration-Ms": strconv.FormatInt(time.Since(start).Milliseconds(), 10)}}, nil
	})
	out.Result = res
	if err != nil {
		return out, err
	}
	// What the new task waits for is read once the switch is made, from the
	// notes on disk (every core), not through the switch's transaction.
	tasks, err := s.tasksOf(project)
	if err != nil {
		return out, err
	}
	out.BlockedBy = openBlockers(out.New, tasks)
	if out.Previous != nil {
		out.Previous.Version, err = s.taskVersionCount(project, out.Previous.TaskID)
	}
	return out, err
}

// openBlockers are the tasks t waits for that are not completed: those it
// depends on and those that block it.
func openBlockers(t Task, tasks []Task) []TaskRef {
	return newTaskSet(tasks).openBlockers(t)
}

// taskSet indexes tasks by id and by the tasks that block each.
type taskSet struct {
	byID      map[string]Task
	blockedBy map[string][]string
}

func newTaskSet(tasks []Task) taskSet {
	ts := taskSet{byID: taskIndex(tasks), blockedBy: map[string][]string{}}
	for _, o := range tasks {
		for _, b := range o.Blocks {
			ts.blockedBy[b] = append(ts.blockedBy[b], o.ID)
		}
	}
	return ts
}

// hasOpenBlocker reports whether openBlockers(t) is not empty.
func (ts taskSet) hasOpenBlocker(t Task) bool {
	for _, list := range [][]string{t.DependsOn, ts.blockedBy[t.ID]} {
		for _, id := range list {
			if o, ok := ts.byID[id]; ok && o.Active() {
				return true
			}
		}
	}
	return false
}

func (ts taskSet) openBlockers(t Task) []TaskRef {
	out := []TaskRef{}
	seen := map[string]bool{}
	for _, id := range append(append([]string(nil), t.DependsOn...), ts.blockedBy[t.ID]...) {
		if o, ok := ts.byID[id]; ok && o.Active() && !seen[id] {
			seen[id] = true
			out = append(out, TaskRef{TaskID: id, Name: o.Name, Status: o.Status})
		}
	}
	return out
}

// setActiveTask records id as the project's active task (global-context.md,
// made when missing) and the active session's (the current state's
// active_task).
func (s *Service) setActiveTask(tx *vault.Tx, project, id string, now time.Time) error {
	rel := project + "/" + session.GlobalContextNote
	var gd *session.Doc
	if tx.Exists(rel) {
		var err error
		if gd, err = s.ReadDoc(tx, rel); err != nil {
			return err
		}
	} else {
		b, err := s.Render(session.GlobalContextNote, map[string]string{"Project": note.Scalar(project), "Now": note.FormatTime(now)})
		if err != nil {
			return err
		}
		if gd, err = s.ParseDoc(rel, b); err != nil {
			return err
		}
	}
	gd.Set("active_task", session.TaskLink(project, id))
	gd.Set("updated", now)
	b, err := gd.Bytes()
	if err != nil {
		return err
	}
	if err := tx.Write(rel, b); err != nil {
		return err
	}
	cur, _, _ := session.Paths(project)
	d, err := s.ReadDoc(tx, cur)
	if err != nil {
		return err
	}
	st := d.ReadLite(project)
	if !st.Active() {
		return nil
	}
	d.Set("active_task", session.TaskLink(project, id))
	session.BumpVersion(d, st, now)
	b, err = d.Bytes()
	if err != nil {
		return err
	}
	return tx.Write(cur, b)
}

// UnifiedOptions are the inputs of UnifiedContext (the get_unified_context
// MCP tool).
type UnifiedOptions struct {
	Project               string
	TaskID                string // "" = global only
	NoRelationships       bool
	IncludeVersionHistory bool
	MaxVersions           int // default 5
}

// UnifiedContext is get_unified_context's result.
type UnifiedContext struct {
	ProjectID      string          `json:"project_id"`
	Global         GlobalContext   `json:"global"`
	Task           *Task           `json:"task,omitempty"`
	Relationships  *Relationships  `json:"relationships,omitempty"`
	VersionHistory []TaskVersion   `json:"version_history,omitempty"`
	Conflicts      []ConflictBrief `json:"conflicts,omitempty"`
	Metadata       ContextMeta     `json:"metadata"`
}

// Relationships are a task's relations, inverse ones derived, as
// get_unified_context returns them.
type Relationships struct {
	Blocks    []TaskRef `json:"blocks"`
	BlockedBy []TaskRef `json:"blocked_by"`
	DependsOn []TaskRef `json:"depends_on"`
	RelatedTo []TaskRef `json:"related_to"`
}

// ContextMeta says where the context came from: always the vault's notes.
type ContextMeta struct {
	Source   string    `json:"source"`
	LoadedAt time.Time `json:"loaded_at"`
	CacheHit bool      `json:"cache_hit"`
}

// UnifiedContext gathers the global context and, with a task id, the task,
// its relationships, its version history and its unresolved conflicts.
func (s *Service) UnifiedContext(o UnifiedOptions) (UnifiedContext, error) {
	project, err := s.Project(o.Project)
	if err != nil {
		return UnifiedContext{}, err
	}
	uc := UnifiedContext{ProjectID: project, Metadata: ContextMeta{Source: "vault", LoadedAt: s.NowUTC()}}
	if uc.Global, err = s.Global(project); err != nil {
		return uc, err
	}
	if o.TaskID == "" {
		return uc, nil
	}
	t, err := s.Task(project, o.TaskID)
	if err != nil {
		return uc, err
	}
	uc.Task = &t
	if !o.NoRelationships {
		tasks, err := s.tasksOf(project)
		if err != nil {
			return uc, err
		}
		byID := taskIndex(tasks)
		r := &Relationships{Blocks: refs(byID, t.Blocks), DependsOn: refs(byID, t.DependsOn), RelatedTo: refs(byID, t.RelatedTo), BlockedBy: []TaskRef{}}
		for _, o := range tasks {
			if slices.Contains(o.Blocks, t.ID) {
				r.BlockedBy = append(r.BlockedBy, TaskRef{TaskID: o.ID, Name: o.Name, Status: o.Status})
			}
			if slices.Contains(o.RelatedTo, t.ID) && !slices.Contains(t.RelatedTo, o.ID) {
				r.RelatedTo = append(r.RelatedTo, TaskRef{TaskID: o.ID, Name: o.Name, Status: o.Status})
			}
		}
		uc.Relationships = r
	}
	if o.IncludeVersionHistory {
		max := o.MaxVersions
		if max <= 0 {
			max = 5
		}
		if uc.VersionHistory, err = s.TaskVersions(project, t.ID, max); err != nil {
			return uc, err
		}
	}
	recorded, err := s.recordedConflicts(project)
	if err != nil {
		return uc, err
	}
	for _, c := range recorded {
		if c.Status == ResolutionUnresolved && (c.TaskA == t.ID || c.TaskB == t.ID) {
			uc.Conflicts = append(uc.Conflicts, ConflictBrief{ID: c.ID, Type: c.Type, Severity: c.Severity, Description: c.Description})
		}
	}
	return uc, nil
}
