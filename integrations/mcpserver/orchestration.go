package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// The tasks toolset's tools (session orchestration) over the vault's task
// notes, checkpoints and conflicts. Inputs and outputs carry the fields of
// package tasks, in snake_case as the other tools' arguments.
type (
	// ImmediateIn is a task's immediate context (tasks.ImmediateContext).
	ImmediateIn struct {
		WorkingOn  string   `json:"working_on,omitempty" jsonschema:"what the task is working on"`
		LastAction string   `json:"last_action,omitempty" jsonschema:"the last action taken"`
		NextStep   string   `json:"next_step,omitempty" jsonschema:"the next step"`
		Blockers   []string `json:"blockers,omitempty" jsonschema:"what blocks the task"`
		Notes      string   `json:"notes,omitempty" jsonschema:"notes"`
	}
	// TaskUpdatesIn is save_context_snapshot's updates.
	TaskUpdatesIn struct {
		CurrentPhase       *string      `json:"current_phase,omitempty" jsonschema:"the task's phase"`
		Iteration          *int         `json:"iteration,omitempty" jsonschema:"the task's iteration"`
		Score              *float64     `json:"score,omitempty" jsonschema:"the task's score"`
		Status             *string      `json:"status,omitempty" jsonschema:"pending, in_progress, completed, blocked or archived"`
		ImmediateContext   *ImmediateIn `json:"immediate_context,omitempty" jsonschema:"replaces the immediate context"`
		KeyFiles           []string     `json:"key_files,omitempty" jsonschema:"replaces the key files"`
		TechnicalDecisions []string     `json:"technical_decisions,omitempty" jsonschema:"replaces the technical decisions"`
		ResumePrompt       *string      `json:"resume_prompt,omitempty" jsonschema:"the task's resume prompt"`
		LockedElements     []string     `json:"locked_elements,omitempty" jsonschema:"replaces the locked elements"`
	}
	SaveContextIn struct {
		TaskID        string        `json:"task_id" jsonschema:"the task's id"`
		Updates       TaskUpdatesIn `json:"updates,omitempty" jsonschema:"the fields to change; the rest stay"`
		ChangeSummary string        `json:"change_summary,omitempty" jsonschema:"what changed (the commit's summary)"`
		ChangeType    string        `json:"change_type,omitempty" jsonschema:"manual (default), auto_save, checkpoint, recovery or migration"`
		SessionID     string        `json:"session_id,omitempty" jsonschema:"default: the active session"`
		SyncToFile    *bool         `json:"sync_to_file,omitempty" jsonschema:"always true: the note is the store"`
	}
	SaveContextOut struct {
		Success bool   `json:"success"`
		TaskID  string `json:"task_id"`
		// Version is the number of commits that touched the task's note.
		Version   int       `json:"version"`
		SavedTo   SavedTo   `json:"saved_to"`
		Commit    string    `json:"commit,omitempty"`
		Timestamp time.Time `json:"timestamp"`
	}
	// SavedTo says where a save went: the note, committed.
	SavedTo struct {
		File   bool `json:"file"`
		Commit bool `json:"commit"`
	}
	CreateTaskIn struct {
		Name      string   `json:"name" jsonschema:"the task's name"`
		TaskID    string   `json:"task_id,omitempty" jsonschema:"the id (default: the name's slug)"`
		Priority  int      `json:"priority,omitempty" jsonschema:"priority"`
		KeyFiles  []string `json:"key_files,omitempty" jsonschema:"files the task works on"`
		DependsOn []string `json:"depends_on,omitempty" jsonschema:"tasks to finish first"`
		Blocks    []string `json:"blocks,omitempty" jsonschema:"tasks this one blocks"`
		RelatedTo []string `json:"related_to,omitempty" jsonschema:"related tasks"`
		Parent    string   `json:"parent,omitempty" jsonschema:"the parent task"`
	}
	ClaimTaskIn struct {
		TaskID   string   `json:"task_id" jsonschema:"the task to claim"`
		Release  bool     `json:"release,omitempty" jsonschema:"release the claim instead"`
		Force    bool     `json:"force,omitempty" jsonschema:"with release: release another holder's claim"`
		Elements []string `json:"elements,omitempty" jsonschema:"elements of the task to lock (or unlock) alone"`
	}
	ClaimTaskOut struct {
		TaskID    string              `json:"task_id"`
		Holder    string              `json:"holder,omitempty"`
		ExpiresAt *time.Time          `json:"expires_at,omitempty"`
		Claim     *tasks.ClaimOutcome `json:"claim,omitempty"`
		Commit    string              `json:"commit,omitempty"`
	}
	CreateTaskOut struct {
		TaskID string `json:"task_id"`
		Note   string `json:"note"`
		Commit string `json:"commit,omitempty"`
	}
	SwitchIn struct {
		FromTaskID         string       `json:"from_task_id,omitempty" jsonschema:"the task switched from (omit to only load)"`
		ToTaskID           string       `json:"to_task_id" jsonschema:"the task to switch to"`
		SaveCurrentState   *bool        `json:"save_current_state,omitempty" jsonschema:"save from_task_id's context (default true)"`
		CurrentTaskUpdates *SwitchDelta `json:"current_task_updates,omitempty" jsonschema:"changes to from_task_id saved with the switch"`
		SessionID          string       `json:"session_id,omitempty" jsonschema:"default: the active session"`
	}
	// SwitchDelta is switch_task's currentTaskUpdates.
	SwitchDelta struct {
		ImmediateContext *ImmediateIn `json:"immediate_context,omitempty"`
		CurrentPhase     *string      `json:"current_phase,omitempty"`
		Iteration        *int         `json:"iteration,omitempty"`
	}
	CheckpointIn struct {
		Label          string   `json:"label" jsonschema:"the checkpoint's label"`
		Description    string   `json:"description,omitempty" jsonschema:"what it marks"`
		TaskID         string   `json:"task_id,omitempty" jsonschema:"omit for a global checkpoint"`
		CheckpointType string   `json:"checkpoint_type,omitempty" jsonschema:"manual (default), milestone, pre_migration, recovery_point or auto"`
		IncludeTasks   []string `json:"include_tasks,omitempty" jsonschema:"more task ids (multi_task)"`
		SessionID      string   `json:"session_id,omitempty" jsonschema:"default: the active session"`
	}
	CheckpointOut struct {
		Success bool `json:"success"`
		// CheckpointID is cp-{timestamp}-{random}; the git tag is
		// checkpoint/<id>.
		CheckpointID string `json:"checkpoint_id"`
		Label        string `json:"label"`
		// Scope is global, task or multi_task.
		Scope         string    `json:"scope"`
		IncludedTasks []string  `json:"included_tasks"`
		CreatedAt     time.Time `json:"created_at"`
		Commit        string    `json:"commit,omitempty"`
		Warnings      []string  `json:"warnings,omitempty"`
	}
	RollbackIn struct {
		TaskID       string         `json:"task_id,omitempty" jsonschema:"the task (omit with a global checkpoint: the whole project)"`
		Target       RollbackTarget `json:"target" jsonschema:"what to roll back to"`
		CreateBackup *bool          `json:"create_backup,omitempty" jsonschema:"make a backup checkpoint first (default true)"`
		SessionID    string         `json:"session_id,omitempty"`
	}
	// RollbackTarget is rollback_to's target.
	RollbackTarget struct {
		Type         string `json:"type" jsonschema:"version or checkpoint"`
		Version      int    `json:"version,omitempty" jsonschema:"the task version (type version)"`
		CheckpointID string `json:"checkpoint_id,omitempty" jsonschema:"the checkpoint (type checkpoint)"`
	}
	RollbackOut struct {
		Success bool `json:"success"`
		tasks.RollbackOutcome
	}
	UnifiedIn struct {
		TaskID                string `json:"task_id,omitempty" jsonschema:"a task; omit for the global context only"`
		IncludeRelationships  *bool  `json:"include_relationships,omitempty" jsonschema:"default true"`
		IncludeVersionHistory bool   `json:"include_version_history,omitempty" jsonschema:"default false"`
		MaxVersions           int    `json:"max_versions,omitempty" jsonschema:"default 5"`
	}
	DetectIn struct {
		TaskIDs       []string `json:"task_ids,omitempty" jsonschema:"only these tasks (omit: all active)"`
		ConflictTypes []string `json:"conflict_types,omitempty" jsonschema:"only these types (omit: all)"`
	}
	ResolveConflictIn struct {
		ConflictID    string `json:"conflict_id" jsonschema:"e.g. cf-1"`
		Action        string `json:"action" jsonschema:"use_a, use_b, merge, custom or ignore"`
		ResolvedValue string `json:"resolved_value,omitempty" jsonschema:"custom's value"`
		Notes         string `json:"notes,omitempty"`
		ResolvedBy    string `json:"resolved_by,omitempty"`
	}
	ResolveConflictOut struct {
		Success bool `json:"success"`
		tasks.ResolveOutcome
	}
	GraphIn struct {
		TaskID           string `json:"task_id,omitempty" jsonschema:"focus on this task (omit for the overview)"`
		Depth            int    `json:"depth,omitempty" jsonschema:"default 2"`
		IncludeCompleted bool   `json:"include_completed,omitempty" jsonschema:"default false"`
	}
	SyncHotIn struct {
		TaskIDs []string `json:"task_ids,omitempty" jsonschema:"report only these tasks (omit: all active)"`
	}
)

func immediate(in *ImmediateIn) *tasks.ImmediateContext {
	if in == nil {
		return nil
	}
	return &tasks.ImmediateContext{WorkingOn: in.WorkingOn, LastAction: in.LastAction, NextStep: in.NextStep, Blockers: in.Blockers, Notes: in.Notes}
}

// orchestrationTools are the tasks toolset: task notes, task switching,
// checkpoints, rollbacks and conflicts.
func (s *Server) orchestrationTools() []toolDef {
	return []toolDef{
		tool(TasksToolset, &mcp.Tool{Name: "create_task", Description: "Make a task note (<project>/tasks/<id>.md); returns its id."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in CreateTaskIn) (*mcp.CallToolResult, CreateTaskOut, error) {
				out, err := s.tasks().TaskNew(tasks.NewTaskOptions{Project: s.project, Name: in.Name, ID: in.TaskID, Priority: in.Priority,
					KeyFiles: in.KeyFiles, DependsOn: in.DependsOn, Blocks: in.Blocks, RelatedTo: in.RelatedTo, Parent: in.Parent})
				if err != nil {
					return nil, CreateTaskOut{}, s.toolErr(err)
				}
				return nil, CreateTaskOut{TaskID: out.Task.ID, Note: out.Task.Note, Commit: out.Result.Commit}, nil
			}),
		tool(TasksToolset, &mcp.Tool{Name: "claim_task", Description: "Claim a task (or release it): one holder at a time; with a git remote, the claim is taken there first and another machine's claim refuses it (E1613, naming the holder)."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in ClaimTaskIn) (*mcp.CallToolResult, ClaimTaskOut, error) {
				svc := s.tasks()
				var out tasks.TaskOutcome
				var err error
				if in.Release {
					out, err = svc.UnlockTask(s.project, in.TaskID, "", in.Elements, in.Force)
				} else {
					out, err = svc.LockTask(s.project, in.TaskID, "", in.Elements)
				}
				if err != nil {
					return nil, ClaimTaskOut{}, s.toolErr(err)
				}
				res := ClaimTaskOut{TaskID: out.Task.ID, Claim: out.Claim, Commit: out.Result.Commit}
				if l := out.Task.Lock; l != nil {
					res.Holder, res.ExpiresAt = l.Holder, &l.ExpiresAt
				}
				return nil, res, nil
			}),
		tool(TasksToolset, &mcp.Tool{Name: "save_context_snapshot", Description: "Save a task's context: the fields given change, one commit; returns the task's version."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in SaveContextIn) (*mcp.CallToolResult, SaveContextOut, error) {
				u := tasks.TaskUpdate{Phase: in.Updates.CurrentPhase, Iteration: in.Updates.Iteration, Score: in.Updates.Score, Status: in.Updates.Status,
					Immediate: immediate(in.Updates.ImmediateContext), KeyFiles: in.Updates.KeyFiles, SetKeyFiles: in.Updates.KeyFiles != nil,
					TechnicalDecisions: in.Updates.TechnicalDecisions, SetDecisions: in.Updates.TechnicalDecisions != nil,
					ResumePrompt: in.Updates.ResumePrompt, LockedElements: in.Updates.LockedElements, SetLocked: in.Updates.LockedElements != nil}
				out, err := s.tasks().SaveTask(tasks.SaveTaskOptions{Project: s.project, TaskID: in.TaskID, Updates: u, ChangeSummary: in.ChangeSummary, ChangeType: in.ChangeType, Holder: in.SessionID})
				if err != nil {
					return nil, SaveContextOut{}, s.toolErr(err)
				}
				return nil, SaveContextOut{Success: true, TaskID: out.Task.ID, Version: out.Version, SavedTo: SavedTo{File: true, Commit: out.Result.Commit != ""},
					Commit: out.Result.Commit, Timestamp: time.Now().UTC().Truncate(time.Second)}, nil
			}),
		tool(TasksToolset, &mcp.Tool{Name: "switch_task", Description: "Switch tasks in one commit: save from_task_id's context, load to_task_id and make it the active task."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in SwitchIn) (*mcp.CallToolResult, tasks.SwitchOutcome, error) {
				o := tasks.SwitchOptions{Project: s.project, From: in.FromTaskID, To: in.ToTaskID, Holder: in.SessionID,
					NoSave: in.SaveCurrentState != nil && !*in.SaveCurrentState}
				if d := in.CurrentTaskUpdates; d != nil {
					o.Updates = tasks.TaskUpdate{Immediate: immediate(d.ImmediateContext), Phase: d.CurrentPhase, Iteration: d.Iteration}
				}
				out, err := s.tasks().SwitchTask(o)
				if err != nil {
					return nil, tasks.SwitchOutcome{}, s.toolErr(err)
				}
				return nil, out, nil
			}),
		tool(TasksToolset, &mcp.Tool{Name: "create_checkpoint", Description: "Create a checkpoint (git tag checkpoint/<id>) of the project, a task or several tasks."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in CheckpointIn) (*mcp.CallToolResult, CheckpointOut, error) {
				ids := append(nonEmptyIDs(in.TaskID), in.IncludeTasks...)
				out, err := s.tasks().CreateCheckpoint(tasks.CheckpointOptions{Project: s.project, Label: in.Label, Description: in.Description, Tasks: ids, Type: in.CheckpointType, CreatedBy: in.SessionID})
				if err != nil {
					return nil, CheckpointOut{}, s.toolErr(err)
				}
				cp := out.Checkpoint
				return nil, CheckpointOut{Success: true, CheckpointID: cp.ID, Label: cp.Label, Scope: cp.Scope, IncludedTasks: cp.Tasks, CreatedAt: cp.CreatedAt, Commit: out.Result.Commit, Warnings: out.Result.Warnings}, nil
			}),
		tool(TasksToolset, &mcp.Tool{Name: "rollback_to", Description: "Roll a task, or with a global checkpoint the project, back to a version or checkpoint (a new commit, after a backup checkpoint)."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in RollbackIn) (*mcp.CallToolResult, RollbackOut, error) {
				o := tasks.RollbackOptions{Project: s.project, TaskID: in.TaskID, NoBackup: in.CreateBackup != nil && !*in.CreateBackup, Holder: in.SessionID}
				switch in.Target.Type {
				case "version":
					o.Version = in.Target.Version
				case "checkpoint":
					o.Checkpoint = in.Target.CheckpointID
				default:
					return nil, RollbackOut{}, s.toolErr(badArgument("target.type", in.Target.Type, "version or checkpoint"))
				}
				out, err := s.tasks().Rollback(o)
				if err != nil {
					return nil, RollbackOut{}, s.toolErr(err)
				}
				return nil, RollbackOut{Success: true, RollbackOutcome: out}, nil
			}),
		tool(TasksToolset, &mcp.Tool{Name: "detect_conflicts", Description: "Find conflicts between tasks (file_conflict, lock_collision, state_mismatch, version_divergence); new ones are recorded.", Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
			func(ctx context.Context, _ *mcp.CallToolRequest, in DetectIn) (*mcp.CallToolResult, tasks.DetectResult, error) {
				out, err := s.tasks().DetectConflicts(s.project, in.TaskIDs, in.ConflictTypes)
				if err != nil {
					return nil, tasks.DetectResult{}, s.toolErr(err)
				}
				return nil, out, nil
			}),
		tool(TasksToolset, &mcp.Tool{Name: "resolve_conflict", Description: "Resolve a recorded conflict; a lock_collision's lock is released."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in ResolveConflictIn) (*mcp.CallToolResult, ResolveConflictOut, error) {
				out, err := s.tasks().ResolveConflict(tasks.ResolveOptions{Project: s.project, ID: in.ConflictID, Action: in.Action, Value: in.ResolvedValue, Notes: in.Notes, ResolvedBy: in.ResolvedBy})
				if err != nil {
					return nil, ResolveConflictOut{}, s.toolErr(err)
				}
				return nil, ResolveConflictOut{Success: true, ResolveOutcome: out}, nil
			}),
		largeTool[GraphIn, tasks.TaskGraph](TasksToolset, &mcp.Tool{Name: "get_task_graph", Description: "The task graph: its tasks (nodes), their links (edges), and the ids of the tasks ready to start and of those blocked.", Annotations: readOnly()},
			func(ctx context.Context, _ *mcp.CallToolRequest, in GraphIn) ([]byte, error) {
				data, err := s.tasks().TaskGraphJSON(tasks.GraphOptions{Project: s.project, TaskID: in.TaskID, Depth: in.Depth, IncludeCompleted: in.IncludeCompleted})
				if err != nil {
					return nil, s.toolErr(err)
				}
				return data, nil
			}),
		tool(TasksToolset, &mcp.Tool{Name: "sync_hot_context", Description: "List every checkpoint tag in checkpoints.md (e.g. fetched ones); reports the task contexts and the active task."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in SyncHotIn) (*mcp.CallToolResult, tasks.HotSync, error) {
				out, err := s.tasks().SyncHotContext(s.project, in.TaskIDs)
				if err != nil {
					return nil, tasks.HotSync{}, s.toolErr(err)
				}
				return nil, out, nil
			}),
	}
}

func nonEmptyIDs(id string) []string {
	if strings.TrimSpace(id) == "" {
		return nil
	}
	return []string{id}
}

// badArgument is the error of an argument outside its allowed values.
func badArgument(name, got, allowed string) error {
	return errs.New(errs.UpdateValidationFailed, "%s %q is not %s", name, got, allowed).With("argument", name)
}
