package tasks

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/notemerge"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/shellquote"
	"github.com/sessionvault/sessionvault/internal/vault"
	"github.com/sessionvault/sessionvault/templates"
	"go.yaml.in/yaml/v3"
)

// Checkpoints (the create_checkpoint and rollback_to MCP tools): a
// checkpoint is the annotated tag checkpoint/<id> on a commit, and a line in
// <project>/checkpoints.md. Rollback writes old content as one new commit;
// history is never rewritten.
const (
	checkpointRef = "checkpoint/"
	// CheckpointTags is the tag namespace of checkpoints, which `remote
	// sync` fetches and pushes.
	CheckpointTags = checkpointRef
)

// CheckpointTypes are the types a checkpoint may have.
var CheckpointTypes = []string{"manual", "milestone", "pre_migration", "recovery_point", "auto"}

// Checkpoint is a named point in the vault's history, made by
// create_checkpoint.
type Checkpoint struct {
	ID          string    `json:"checkpoint_id"` // cp-{unix seconds}-{6 hex digits}
	Label       string    `json:"label"`
	Description string    `json:"description,omitempty"`
	Type        string    `json:"checkpoint_type"`
	Scope       string    `json:"scope"` // global, task, multi_task
	Tasks       []string  `json:"included_tasks"`
	CreatedAt   time.Time `json:"created_at"`
	CreatedBy   string    `json:"created_by,omitempty"`
	Commit      string    `json:"commit,omitempty"`
	Project     string    `json:"-"`
}

// CheckpointOptions are the inputs of CreateCheckpoint.
type CheckpointOptions struct {
	Project     string
	Label       string
	Description string
	Tasks       []string
	Type        string // "" = manual
	CreatedBy   string // "" = the active session, else this machine
}

// CheckpointOutcome is what CreateCheckpoint did.
type CheckpointOutcome struct {
	Checkpoint Checkpoint   `json:"checkpoint"`
	Result     vault.Result `json:"result"`
}

// scopeOf is a checkpoint's scope by its number of tasks: 0 tasks global,
// 1 task, 2+ multi_task.
func scopeOf(tasks []string) string {
	switch len(tasks) {
	case 0:
		return "global"
	case 1:
		return "task"
	}
	return "multi_task"
}

func newCheckpointID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "cp-" + strconv.FormatInt(now.Unix(), 10) + "-" + hex.EncodeToString(b[:])
}

// CreateCheckpoint records a checkpoint of the project (Tasks empty), a
// task or several: one commit adds its line to checkpoints.md, and the tag
// checkpoint/<id> names that commit. A task that has no note is
// errs.TaskNotFound; a task named twice errs.InvalidCheckpointScope.
func (s *Service) CreateCheckpoint(o CheckpointOptions) (CheckpointOutcome, error) {
	if err := session.CheckText("label", o.Label, 200); err != nil {
		return CheckpointOutcome{}, err
	}
	if o.Type == "" {
		o.Type = "manual"
	}
	if !slices.Contains(CheckpointTypes, o.Type) {
		return CheckpointOutcome{}, errs.New(errs.UpdateValidationFailed, "--type %q is not one of %s", o.Type, strings.Join(CheckpointTypes, ", ")).With("flag", "type")
	}
	seen := map[string]bool{}
	for _, t := range o.Tasks {
		if seen[t] {
			return CheckpointOutcome{}, errs.New(errs.InvalidCheckpointScope, "task %s is named twice; name each task once", t).With("task", t)
		}
		seen[t] = true
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return CheckpointOutcome{}, err
	}
	var out CheckpointOutcome
	out.Result, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		for _, t := range o.Tasks {
			if _, _, err := s.taskDoc(tx, project, t, errs.TaskNotFound); err != nil {
				return vault.Change{}, err
			}
		}
		now := s.NowUTC()
		cp := Checkpoint{ID: newCheckpointID(now), Label: session.OneLine(o.Label), Description: session.OneLine(o.Description), Type: o.Type,
			Scope: scopeOf(o.Tasks), Tasks: session.NonNil(o.Tasks), CreatedAt: now, CreatedBy: o.CreatedBy, Project: project}
		if cp.CreatedBy == "" {
			cp.CreatedBy = s.holder(tx, project)
		}
		if err := s.listCheckpoint(tx, project, cp); err != nil {
			return vault.Change{}, err
		}
		out.Checkpoint = cp
		return vault.Change{Operation: "checkpoint", Summary: cp.ID + " " + cp.Label,
			Trailers: map[string]string{"Checkpoint": cp.ID, "Change-Type": "checkpoint"},
			Committed: func(r vault.Result) error {
				out.Checkpoint.Commit = r.Commit
				return s.tagCheckpoint(cp, r.Commit)
			}}, nil
	})
	if err != nil {
		return CheckpointOutcome{}, (&errs.Error{Code: errs.CheckpointCreationFailed, Message: "creating the checkpoint: " + err.Error(), Err: err})
	}
	return out, nil
}

// tagCheckpoint makes cp's tag on commit; its message holds cp's fields as
// trailers, so that the tag alone describes the checkpoint.
func (s *Service) tagCheckpoint(cp Checkpoint, commit string) error {
	msg := cp.Label + "\n\n"
	if cp.Description != "" {
		msg += cp.Description + "\n\n"
	}
	msg += "Checkpoint-Id: " + cp.ID + "\nCheckpoint-Type: " + cp.Type + "\nCheckpoint-Scope: " + cp.Scope +
		"\nProject: " + cp.Project + "\nTasks: " + strings.Join(cp.Tasks, ",") + "\nCreated-By: " + cp.CreatedBy +
		"\nCreated-At: " + note.FormatTime(cp.CreatedAt) + "\n"
	return s.V.CreateTag(checkpointRef+cp.ID, commit, msg)
}

// listCheckpoint adds cp's line to checkpoints.md (made when missing).
func (s *Service) listCheckpoint(tx *vault.Tx, project string, cp Checkpoint) error {
	d, err := s.listNote(tx, project, session.CheckpointsNote)
	if err != nil {
		return err
	}
	scope := cp.Scope
	if len(cp.Tasks) > 0 {
		scope += " " + strings.Join(session.TaskLinks(project, cp.Tasks), ", ")
	}
	line := "- " + note.FormatTime(cp.CreatedAt) + session.Sep + "`" + cp.ID + "`" + session.Sep + "**" + strings.ReplaceAll(cp.Label, session.Sep, ", ") + "**" + session.Sep + cp.Type + session.Sep + scope
	if cp.Description != "" {
		line += session.Sep + strings.ReplaceAll(cp.Description, session.Sep, ", ")
	}
	d.AppendLine(session.SecCheckpoints, line+" ^"+cp.ID)
	d.Set("checkpoints", d.IntProp("checkpoints")+1)
	b, err := d.Bytes()
	if err != nil {
		return err
	}
	return tx.Write(d.Path, b)
}

// Checkpoints lists project's checkpoints, oldest first, from their tags.
func (s *Service) Checkpoints(project string) ([]Checkpoint, error) {
	project, err := s.Project(project)
	if err != nil {
		return nil, err
	}
	tags, err := s.V.Tags(checkpointRef)
	if err != nil {
		return nil, err
	}
	out := []Checkpoint{}
	for _, t := range tags {
		if cp := parseCheckpointTag(t); cp.Project == project {
			out = append(out, cp)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// checkpointTrailers are the keys tagCheckpoint writes; git strips the
// space after one whose value is empty ("Tasks:" of a global checkpoint).
var checkpointTrailers = []string{"Checkpoint-Id", "Checkpoint-Type", "Checkpoint-Scope", "Project", "Tasks", "Created-By", "Created-At"}

func parseCheckpointTag(t vault.Tag) Checkpoint {
	cp := Checkpoint{ID: strings.TrimPrefix(t.Name, checkpointRef), Commit: t.Commit, CreatedAt: t.Time.UTC(), Tasks: []string{}}
	label, rest, _ := strings.Cut(strings.TrimSpace(t.Message), "\n")
	cp.Label = strings.TrimSpace(label)
	for _, l := range strings.Split(rest, "\n") {
		k, v, ok := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		if ok && v == "" && !slices.Contains(checkpointTrailers, k) {
			ok = false // "Note:" in a description, not a trailer git left without its space
		}
		if !ok {
			if l = strings.TrimSpace(l); l != "" && cp.Description == "" {
				cp.Description = l
			}
			continue
		}
		switch k {
		case "Checkpoint-Type":
			cp.Type = v
		case "Checkpoint-Scope":
			cp.Scope = v
		case "Project":
			cp.Project = v
		case "Tasks":
			for _, x := range strings.Split(v, ",") {
				if x = strings.TrimSpace(x); x != "" {
					cp.Tasks = append(cp.Tasks, x)
				}
			}
		case "Created-By":
			cp.CreatedBy = v
		case "Created-At":
			if tm, err := time.Parse(time.RFC3339, v); err == nil {
				cp.CreatedAt = tm
			}
		default:
			if cp.Description == "" && strings.TrimSpace(l) != "" && !strings.HasPrefix(k, "Checkpoint") {
				cp.Description = strings.TrimSpace(l)
			}
		}
	}
	return cp
}

// checkpoint finds checkpoint id of project: its tag, or — when a kill
// left it untagged — the commit that listed it (a backup: the commit
// before the rollback that listed it).
func (s *Service) checkpoint(project, id string) (Checkpoint, error) {
	notFound := errs.New(errs.CheckpointNotFound, "checkpoint %q not found (see `%s`)", id, s.Command(project, "checkpoint list")).With("checkpoint", id)
	if vault.CheckName("checkpoint id", id) != nil || !strings.HasPrefix(id, "cp-") {
		return Checkpoint{}, notFound
	}
	tags, err := s.V.Tags(checkpointRef + id)
	if err != nil {
		return Checkpoint{}, err
	}
	for _, t := range tags {
		if t.Name == checkpointRef+id {
			cp := parseCheckpointTag(t)
			if cp.Project != project {
				return Checkpoint{}, errs.New(errs.CheckpointNotFound, "checkpoint %s belongs to project %s, not %s", id, cp.Project, project).With("checkpoint", id)
			}
			return cp, nil
		}
	}
	if c, err := s.V.FindCommit("Checkpoint", id); err == nil && c != "" {
		return Checkpoint{ID: id, Commit: c, Scope: "global", Project: project, Tasks: []string{}}, nil
	}
	if c, err := s.V.FindCommit("Backup-Checkpoint", id); err == nil && c != "" {
		return Checkpoint{ID: id, Commit: c + "^", Scope: "global", Project: project, Tasks: []string{}}, nil
	}
	return Checkpoint{}, notFound
}

// RollbackOptions are the inputs of Rollback (the rollback_to MCP tool).
type RollbackOptions struct {
	Project    string
	TaskID     string // "" = the checkpoint's tasks, or globally
	Checkpoint string // a checkpoint id, or
	Version    int    // a version of TaskID's note (1 = the first)
	NoBackup   bool   // createBackup false
	Holder     string
}

// RollbackOutcome is rollback_to's result, with the notes restored.
type RollbackOutcome struct {
	TaskID             string        `json:"task_id,omitempty"`
	RolledBackTo       RollbackPoint `json:"rolled_back_to"`
	BackupCheckpointID string        `json:"backup_checkpoint_id,omitempty"`
	RestoredState      *TaskState    `json:"restored_state,omitempty"`
	Restored           []string      `json:"restored"`
	Timestamp          time.Time     `json:"timestamp"`
	Result             vault.Result  `json:"result"`
}

// RollbackPoint is what was rolled back to: a "checkpoint" id or a
// "version" number.
type RollbackPoint struct {
	Type       string `json:"type"`
	Identifier any    `json:"identifier"`
}

// TaskState is a task's phase, iteration and status after a rollback.
type TaskState struct {
	CurrentPhase string `json:"current_phase"`
	Iteration    int    `json:"iteration"`
	Status       string `json:"status"`
}

// Rollback restores notes to a checkpoint or a task version in one new
// commit: a task's note (TaskID), a checkpoint's tasks, or — a global
// checkpoint without TaskID — the project's canonical notes and every task
// note the checkpoint holds. The engine's content (its properties and
// sections) comes back byte for byte; the person's sections and properties
// stay as they are now. Unless NoBackup, a backup checkpoint of the state
// before is made first (listed in the same commit). A missing checkpoint is
// errs.CheckpointNotFound, a missing version errs.VersionNotFound; a note the
// point does not hold, or a current state that now holds another session,
// errs.RollbackFailed.
func (s *Service) Rollback(o RollbackOptions) (RollbackOutcome, error) {
	if (o.Checkpoint == "") == (o.Version == 0) {
		return RollbackOutcome{}, errs.New(errs.UpdateValidationFailed, "give one of --checkpoint ID or --version N").With("flag", "checkpoint")
	}
	if o.Version != 0 && o.TaskID == "" {
		return RollbackOutcome{}, errs.New(errs.UpdateValidationFailed, "--version N needs --task (a version is one task's)").With("flag", "task")
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return RollbackOutcome{}, err
	}
	if o.TaskID != "" {
		if _, err := s.Task(project, o.TaskID); err != nil {
			return RollbackOutcome{}, err
		}
	}
	out := RollbackOutcome{TaskID: o.TaskID, Restored: []string{}}
	target, cp, rels, err := s.rollbackTarget(o, project, &out)
	if err != nil {
		return out, err
	}
	start := time.Now()
	out.Result, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		now := s.NowUTC()
		out.Timestamp = now
		holder := o.Holder
		if holder == "" {
			holder = s.holder(tx, project)
		}
		for _, rel := range rels {
			if err := s.restoreNote(tx, rel, target, project, holder, now, o, &out); err != nil {
				return vault.Change{}, err
			}
		}
		trailers := map[string]string{"Change-Type": "recovery", "Rollback-To": fmt.Sprint(out.RolledBackTo.Identifier), "Duration-Ms": strconv.FormatInt(time.Since(start).Milliseconds(), 10)}
		if o.TaskID != "" {
			trailers["Task"] = o.TaskID
		}
		var backup Checkpoint
		if !o.NoBackup && len(out.Restored) > 0 {
			backup = Checkpoint{ID: newCheckpointID(now), Label: fmt.Sprintf("before rollback to %s %v", out.RolledBackTo.Type, out.RolledBackTo.Identifier),
				Type: "auto", Tasks: []string{}, CreatedAt: now, CreatedBy: holder, Project: project}
			if o.TaskID != "" {
				backup.Tasks = []string{o.TaskID}
			} else {
				backup.Tasks = session.NonNil(cp.Tasks)
			}
			backup.Scope = scopeOf(backup.Tasks)
			if err := s.listCheckpoint(tx, project, backup); err != nil {
				return vault.Change{}, err
			}
			out.BackupCheckpointID = backup.ID
			trailers["Backup-Checkpoint"] = backup.ID
		}
		summary := fmt.Sprintf("%s to %s %v", strings.Join(out.Restored, ", "), out.RolledBackTo.Type, out.RolledBackTo.Identifier)
		return vault.Change{Operation: "rollback", Summary: summary, Trailers: trailers,
			Committed: func(r vault.Result) error {
				if backup.ID == "" {
					return nil
				}
				// The backup names the state just before this commit.
				return s.tagCheckpoint(backup, r.Commit+"^")
			}}, nil
	})
	if err != nil {
		return out, err
	}
	return out, nil
}

// sameSession refuses to roll the current state back across sessions: the
// records, history and heartbeat of the session it now holds would no
// longer match it.
func (s *Service) sameSession(rel string, old, cur []byte, project string) error {
	od, err := s.ParseDoc(rel, old)
	if err != nil {
		return err
	}
	cd, err := s.ParseDoc(rel, cur)
	if err != nil {
		return err
	}
	if o, c := od.Prop("session"), cd.Prop("session"); o != c {
		return errs.New(errs.RollbackFailed, "the checkpoint's current state holds session %q and the vault's now holds %q; a rollback does not cross sessions (roll back tasks with --task, or use a checkpoint made in this session)", o, c).With("note", rel)
	}
	return nil
}

// restoreEngine returns old (a note as a point in history held it) with
// the person's part of cur (the note now) kept: cur's sections that are not
// the engine's replace or join old's, old's person sections cur no longer
// has go, and cur's person properties are set. cur nil: old as it is.
func (s *Service) restoreEngine(rel string, old, cur []byte) ([]byte, error) {
	if cur == nil {
		return old, nil
	}
	od, err := s.ParseDoc(rel, old)
	if err != nil {
		return nil, err
	}
	cd, err := s.ParseDoc(rel, cur)
	if err != nil {
		return nil, err
	}
	engine := engineSections(rel)
	nl := od.Newline()
	curSecs := map[string]bool{}
	for _, sec := range cd.MD.Sections {
		if sec.Level != 2 || engine[sec.Title] {
			continue
		}
		curSecs[sec.Title] = true
		text := string(cd.Body[sec.BodyStart:sec.End])
		if osec, ok := od.Section(sec.Title); ok {
			if string(od.Body[osec.BodyStart:osec.End]) != text {
				od.Edit(osec.BodyStart, osec.End, text)
			}
			continue
		}
		whole := string(cd.Body[sec.Start:sec.End])
		prefix := ""
		if len(od.Body) > 0 && !strings.HasSuffix(string(od.Body), "\n") {
			prefix = nl
		}
		if len(od.Body) > 0 && !strings.HasSuffix(string(od.Body), nl+nl) {
			prefix += nl
		}
		od.Edit(len(od.Body), len(od.Body), prefix+whole)
	}
	for _, sec := range od.MD.Sections {
		if sec.Level == 2 && !engine[sec.Title] && !curSecs[sec.Title] {
			od.Edit(sec.Start, sec.End, "")
		}
	}
	for _, k := range cd.Note.Keys() {
		node, _ := cd.Note.Node(k)
		if engineProps()[k] || node == nil {
			continue
		}
		switch {
		case node.Kind == yaml.SequenceNode:
			od.Set(k, cd.Note.GetList(k))
		case node.Kind == yaml.ScalarNode && node.ShortTag() == "!!null":
			od.Set(k, nil)
		case node.Kind == yaml.ScalarNode:
			od.Set(k, node.Value)
		}
	}
	for _, k := range od.Note.Keys() {
		if _, ok := cd.Note.Node(k); !ok && !engineProps()[k] {
			od.Unset(k)
		}
	}
	return od.Bytes()
}

// engineProps are the properties the engine writes in any note it owns
// (built at the first use: a checkpoint's restore).
var engineProps = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, k := range append(taskProps, "project", "session", "objective", "progress", "progress_start", "epic", "linear",
		"branch", "commit", "started", "continues", "last_session", "version", "active_task", "active_feature", "mode", "ended",
		"end_commit", "duration_minutes", "summary", "issues", "machine", "recovered", "sessions", "source",
		"source_format", "source_status", "violations", "decisions", "checkpoints", "unresolved",
		session.PropActiveAgent, session.PropWorkflowPhase, session.PropLastAgentChange, "decided_by", "approved_by", "rejected_by") {
		m[k] = true
	}
	return m
})

// engineSections are the H2 sections the engine writes in the note at rel:
// a task note's, or those of the template the note was made from.
func engineSections(rel string) map[string]bool {
	m := map[string]bool{}
	if strings.Contains(rel, "/"+session.TasksDir+"/") {
		for _, s := range taskSections {
			m[s] = true
		}
		return m
	}
	if b, err := fs.ReadFile(templates.FS, path.Base(rel)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if t, ok := strings.CutPrefix(l, "## "); ok {
				m[strings.TrimSpace(t)] = true
			}
		}
	}
	m[session.SecSummary] = true
	if path.Base(rel) == session.CurrentStateNote {
		for _, s := range session.OwnedSections {
			m[s] = true
		}
	}
	return m
}

// HotSync is what SyncHotContext did (sync_hot_context, on a vault: the
// notes are the store, git the history; only the engine's derived notes can
// lag behind).
type HotSync struct {
	Success bool `json:"success"`
	// CheckpointsListed counts the checkpoint tags added to checkpoints.md
	// (tags fetched from a remote, or a listing a kill lost).
	CheckpointsListed int          `json:"checkpoints_listed"`
	TaskContexts      int          `json:"task_contexts"`
	ActiveTask        string       `json:"active_task,omitempty"`
	Errors            []string     `json:"errors"`
	Timestamp         time.Time    `json:"timestamp"`
	Result            vault.Result `json:"result"`
}

// SyncHotContext lists in checkpoints.md every checkpoint tag of the
// project it does not list yet (one commit, none when nothing is missing),
// and counts the task contexts (active ones, or those of taskIDs).
func (s *Service) SyncHotContext(project string, taskIDs []string) (HotSync, error) {
	project, err := s.Project(project)
	if err != nil {
		return HotSync{}, err
	}
	out := HotSync{Errors: []string{}, Timestamp: s.NowUTC()}
	cps, err := s.Checkpoints(project)
	if err != nil {
		return out, err
	}
	out.Result, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		listed := map[string]bool{}
		rel := project + "/" + session.CheckpointsNote
		if tx.Exists(rel) {
			d, err := s.ReadDoc(tx, rel)
			if err != nil {
				return vault.Change{}, err
			}
			for _, l := range d.SectionLines(session.SecCheckpoints) {
				if id := notemerge.EntryID(string(l.Content())); id != "" {
					listed[id] = true
				}
			}
		}
		for _, cp := range cps {
			if listed[cp.ID] {
				continue
			}
			if err := s.listCheckpoint(tx, project, cp); err != nil {
				return vault.Change{}, err
			}
			out.CheckpointsListed++
		}
		if out.CheckpointsListed == 0 {
			return vault.Change{}, nil
		}
		return vault.Change{Operation: "checkpoint-sync", Summary: fmt.Sprintf("%d checkpoints listed", out.CheckpointsListed)}, nil
	})
	if err != nil {
		return out, err
	}
	tasks, err := s.tasksOf(project)
	if err != nil {
		return out, err
	}
	for _, t := range tasks {
		if (len(taskIDs) == 0 && t.Active()) || slices.Contains(taskIDs, t.ID) {
			out.TaskContexts++
		}
	}
	g, _ := s.Global(project)
	out.ActiveTask = g.ActiveTask
	out.Success = true
	return out, nil
}

// rollbackTarget resolves what a rollback restores: the commit it restores
// from (a task version's or a checkpoint's), the checkpoint (when one), and
// the notes (a task's note, a checkpoint's tasks, or the project's canonical
// notes and every task of a global checkpoint). It sets out's RolledBackTo.
func (s *Service) rollbackTarget(o RollbackOptions, project string, out *RollbackOutcome) (target string, cp Checkpoint, rels []string, err error) {
	if o.Version != 0 {
		log, err := s.V.PathLog(session.TaskPath(project, o.TaskID))
		if err != nil {
			return "", cp, nil, err
		}
		if o.Version < 1 || o.Version > len(log) {
			return "", cp, nil, errs.New(errs.VersionNotFound, "task %s has versions 1 to %d, not %d (see `%s`)", o.TaskID, len(log), o.Version, s.Command(project, "task versions "+shellquote.Quote(o.TaskID))).With("task", o.TaskID).With("version", o.Version)
		}
		target = log[o.Version-1].Hash
		out.RolledBackTo = RollbackPoint{Type: "version", Identifier: o.Version}
		rels = []string{session.TaskPath(project, o.TaskID)}
	} else {
		if cp, err = s.checkpoint(project, o.Checkpoint); err != nil {
			return "", cp, nil, err
		}
		target = cp.Commit
		out.RolledBackTo = RollbackPoint{Type: "checkpoint", Identifier: cp.ID}
		switch {
		case o.TaskID != "":
			rels = []string{session.TaskPath(project, o.TaskID)}
		case len(cp.Tasks) > 0:
			for _, t := range cp.Tasks {
				rels = append(rels, session.TaskPath(project, t))
			}
		default:
			for _, n := range session.CanonicalNotes {
				rels = append(rels, project+"/"+n)
			}
			tasks, err := s.V.ListAt(target, project+"/"+session.TasksDir)
			if err != nil {
				return "", cp, nil, err
			}
			for _, t := range tasks {
				if strings.HasSuffix(t, ".md") {
					rels = append(rels, t)
				}
			}
		}
	}
	return target, cp, rels, nil
}

// restoreNote restores the engine's content of the note rel as it was at
// target (a person's lines kept), in tx, and records it in out. A task note
// another holder has locked, or a current state of another session, is
// refused.
func (s *Service) restoreNote(tx *vault.Tx, rel, target, project, holder string, now time.Time, o RollbackOptions, out *RollbackOutcome) error {
	old, err := s.V.ReadAt(target, rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if out.RolledBackTo.Type == "checkpoint" && o.TaskID == "" && !strings.Contains(rel, "/"+session.TasksDir+"/") {
				return nil // a canonical note the project did not have yet
			}
			return errs.New(errs.RollbackFailed, "%s did not exist at %v %v; nothing to roll back to", rel, out.RolledBackTo.Type, out.RolledBackTo.Identifier).With("note", rel)
		}
		return err
	}
	cur, err := tx.Read(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if strings.Contains(rel, "/"+session.TasksDir+"/") && cur != nil {
		cd, err := s.ParseDoc(rel, cur)
		if err != nil {
			return err
		}
		if err := s.checkLock(project, ReadTask(cd, project), holder, now); err != nil {
			return err
		}
	}
	if path.Base(rel) == session.CurrentStateNote && cur != nil {
		if err := s.sameSession(rel, old, cur, project); err != nil {
			return err
		}
	}
	merged, err := s.restoreEngine(rel, old, cur)
	if err != nil {
		return (&errs.Error{Code: errs.RollbackFailed, Message: "restoring " + rel + ": " + err.Error(), Err: err}).With("note", rel)
	}
	if cur != nil && string(merged) == string(cur) {
		return nil
	}
	if err := tx.Write(rel, merged); err != nil {
		return err
	}
	out.Restored = append(out.Restored, rel)
	if o.TaskID != "" && rel == session.TaskPath(project, o.TaskID) {
		nd, err := s.ParseDoc(rel, merged)
		if err == nil {
			t := ReadTask(nd, project)
			out.RestoredState = &TaskState{CurrentPhase: t.Phase, Iteration: t.Iteration, Status: t.Status}
		}
	}
	return nil
}
