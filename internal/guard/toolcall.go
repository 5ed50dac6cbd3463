package guard

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// A writing tool call the PreToolUse hook lets through (a shell command, an
// unknown tool: anything that may write files it does not name) is noted
// with the stat identity of the notes it may change (the project's
// canonical notes); its PostToolUse compares them, and the full hook
// commits the notes that changed as the agent's edit. Each call has its own
// record, named by its tool_use_id (integrity.ToolCallsDir), so that calls
// running at once (an agent's sub-agents, in parallel) neither take nor
// clear each other's. A call without a plain tool_use_id has the project's
// one slot (integrity.ToolCallFile), as every call had before; PostToolUse
// falls back to that slot when its call has no record of its own (noted by
// an older binary).

// toolCallName returns the state file of the call id of project.
func toolCallName(project, id string) string {
	if plainID(id) {
		return integrity.ToolCallsDir + "/" + id
	}
	return integrity.ToolCallFile(project)
}

// recordEnd is the last line of a call's own record: one without it was
// cut short (a kill or a power cut while PreToolUse wrote it).
const recordEnd = "end"

// NoteToolCall records, for the writing tool call id (the hook input's
// tool_use_id) of tool that the hook lets through, the stat identity of the
// notes watch names (vault-relative; the project's canonical notes), for
// PostToolUse to compare after the call. The record: the tool's name, then
// one line per note, "<rel>\t<identity>"; a call's own record then ends
// with the line recordEnd (the project's slot keeps the form older binaries
// read).
func NoteToolCall(root, project, tool, id string, watch []string) error {
	var b strings.Builder
	b.WriteString(tool + "\n")
	for _, rel := range watch {
		sid, _ := StatIdentity(filepath.Join(root, filepath.FromSlash(rel)))
		b.WriteString(rel + "\t" + sid + "\n")
	}
	name := toolCallName(project, id)
	if name == integrity.ToolCallFile(project) {
		return writeState(root, name, []byte(b.String()))
	}
	// A file of its own, new (a call is noted once): written in place, no
	// rename; a record cut short has no end line, and is read as no record.
	b.WriteString(recordEnd + "\n")
	p := integrity.Path(root, name)
	err := os.WriteFile(p, []byte(b.String()), 0o644)
	if errors.Is(err, os.ErrNotExist) { // the first call: no folder yet
		if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, []byte(b.String()), 0o644)
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// readToolCall returns the record of the call id of project (without its
// end line) and its state file name: the call's own, else (none of its own:
// noted by an older binary, or without an id) the project's slot; nil when
// there is none. A record of its own cut short is cleared and read as none:
// what the call changed is committed later as a person's edit, never one
// the record cannot vouch for as the agent's.
func readToolCall(root, project, id string) ([]byte, string) {
	name := toolCallName(project, id)
	if slot := integrity.ToolCallFile(project); name != slot {
		data, err := os.ReadFile(integrity.Path(root, name))
		switch {
		case err == nil && bytes.HasSuffix(data, []byte("\n"+recordEnd+"\n")):
			return data[:len(data)-len(recordEnd)-1], name
		case err == nil || !errors.Is(err, os.ErrNotExist):
			clearToolCall(root, name)
			return nil, name
		}
		name = slot
	}
	data, err := os.ReadFile(integrity.Path(root, name))
	if err != nil || len(data) == 0 {
		return nil, name
	}
	return data, name
}

// changedNotes returns the notes of the record data (of tool) whose stat
// identity is not the one noted; none when the record is of another tool
// (the full hook commits nothing for it either).
func changedNotes(root, tool string, data []byte) []string {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if lines[0] != tool {
		return nil
	}
	var changed []string
	for _, l := range lines[1:] {
		rel, before, _ := strings.Cut(l, "\t")
		if now, _ := StatIdentity(filepath.Join(root, filepath.FromSlash(rel))); now != before {
			changed = append(changed, rel)
		}
	}
	return changed
}

// clearToolCall clears the record name: a call's own is removed, the
// project's slot truncated in place (truncate(2) by its path: no file made
// per tool call). It reports whether it did.
func clearToolCall(root, name string) bool {
	p := integrity.Path(root, name)
	if strings.HasPrefix(name, integrity.ToolCallsDir+"/") {
		err := os.Remove(p)
		return err == nil || errors.Is(err, os.ErrNotExist)
	}
	return os.Truncate(p, 0) == nil || writeState(root, name, nil) == nil
}

// SettleToolCall takes back the writing call id of tool that PreToolUse
// noted for project (NoteToolCall): it reports whether a note it watches
// changed since — then the record stays, for the full hook to commit the
// change as the agent's edit (TakeToolCall) — and otherwise clears the
// record (as the full hook does after a call that changed nothing).
func SettleToolCall(root, project, tool, id string) (changed bool) {
	data, name := readToolCall(root, project, id)
	if data == nil {
		return false
	}
	if len(changedNotes(root, tool, data)) > 0 {
		return true
	}
	return !clearToolCall(root, name) // not cleared: the full hook clears it
}

// TakeToolCall takes back and clears the record of the writing call id of
// tool noted for project, and returns the notes it watched that changed
// since (vault-relative), for the full hook to commit as the agent's edit.
// The error is a record it could not clear.
func TakeToolCall(root, project, tool, id string) ([]string, error) {
	data, name := readToolCall(root, project, id)
	if data == nil {
		return nil, nil
	}
	if !clearToolCall(root, name) {
		return nil, fmt.Errorf("clearing %s: the next call's edits would be taken for this one's", name)
	}
	return changedNotes(root, tool, data), nil
}

// PruneToolCalls removes the records of calls noted more than age ago:
// calls whose PostToolUse never ran (refused at the permission prompt,
// interrupted).
func PruneToolCalls(root string, age time.Duration) {
	pruneOlder(integrity.Path(root, integrity.ToolCallsDir), age)
}
