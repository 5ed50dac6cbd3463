package session

import (
	"path"
	"strings"
)

// Where the task notes live and the statuses a task note holds: the state
// note, the feature plans and recovery read them; package tasks writes them.
const (
	TasksDir          = "tasks"
	GlobalContextNote = "global-context.md"
)

// TaskStatus values: the statuses a task note holds.
const (
	TaskPending    = "pending"
	TaskInProgress = "in_progress"
	TaskCompleted  = "completed"
	TaskBlocked    = "blocked"
	TaskArchived   = "archived"
)

// TaskStatuses lists the TaskStatus values, from pending to archived.
var TaskStatuses = []string{TaskPending, TaskInProgress, TaskCompleted, TaskBlocked, TaskArchived}

// TaskPath is a task note's path from the vault root.
func TaskPath(project, id string) string { return project + "/" + TasksDir + "/" + id + ".md" }

// TaskLink is the wikilink to a task note, labelled with its id.
func TaskLink(project, id string) string { return Link(project+"/"+TasksDir+"/"+id, id) }

// TaskLinks are the wikilinks to the task notes of ids.
func TaskLinks(project string, ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, TaskLink(project, id))
	}
	return out
}

// TaskIDs turns a relationship property's values (wikilinks, paths or bare
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

// NonEmpty returns v as a one-item list, or none when v is "".
func NonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
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

// NonNil returns v, or an empty list for nil (JSON [] rather than null).
func NonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
