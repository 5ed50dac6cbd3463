package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/commandlog"
	"github.com/sessionvault/sessionvault/internal/filelock"
	"github.com/sessionvault/sessionvault/internal/integrity"
)

// LogFacts are what an entry of the command history takes from the active
// session's state (package commandlog's line format), cached with its facts
// so that the lean hook appends an entry without reading the state.
type LogFacts struct {
	// Known is false when the full hook did not record them (no active
	// session, or no machine record): the lean hook records no entry.
	Known bool `json:"known,omitempty"`
	// Task and Feature are the session's active task and feature as an
	// entry writes them (wikilinks), "" for none.
	Task    string `json:"task,omitempty"`
	Feature string `json:"feature,omitempty"`
	// IDSuffix ends every entry id this machine makes ("" on the vault's
	// first machine; vault.Machine.IDSuffix). The machine record is one of
	// the cache's Deps.
	IDSuffix string `json:"id_suffix,omitempty"`
}

// CommandCall is what the PostToolUse hook knows of a Bash or MCP tool call
// (Claude Code hooks input: tool_name, tool_input, tool_use_id, agent_id,
// agent_type, model, session_id, the optional duration_ms, and for a failed
// call its error).
type CommandCall struct {
	Tool       string
	Input      json.RawMessage
	Failed     bool
	Error      string
	DurationMs *int64
	ToolUseID  string
	AgentID    string
	AgentType  string
	// Model is the model the hook input names, else the one SessionStart
	// recorded for the same Claude Code session (commandlog.ModelFile).
	Model         string
	ClaudeSession string // the hook input's session_id
}

// logTail is how much of a log's end is read for its last entry.
const logTail = 64 << 10

// RecordCommand appends call's entry to the command log of the active
// session of project, from the facts cache c (Load) at time now, as the
// full hook does (package features: RecordToolCommand): one write to the
// log opened O_APPEND under its lock (waiting up to lockTimeout), then one
// fsync. It returns ErrNotLean, having written nothing, when the entry needs
// the full hook: no active session, log facts not cached, a project or
// session name that is not plain, a log that does not exist yet (its front
// matter comes from the template) or is not a plain file in plain folders,
// logs due for a commit (commandlog.CommitDue). Another error says what
// failed: the lock not had within lockTimeout, or the file system's (the
// entry is then not written, or written but not flushed).
func RecordCommand(root, project string, c Cached, call CommandCall, lockTimeout time.Duration, now time.Time) error {
	if !RecordsCommand(call.Tool) || !c.Facts.Active || !c.Log.Known || !plainID(project) || !plainID(c.Facts.Session) {
		return ErrNotLean // (a name that is not plain: the full hook checks and says why)
	}
	committed, _ := os.ReadFile(integrity.Path(root, commandlog.CommittedFile(project)))
	if commandlog.CommitDue(committed, now) {
		return ErrNotLean // the full hook appends and commits
	}
	segs := []string{project, "sessions", c.Facts.Session}
	dir := root
	for _, s := range segs {
		dir = filepath.Join(dir, s)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			return ErrNotLean
		}
	}
	p := filepath.Join(dir, "commands.md")
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return ErrNotLean
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return ErrNotLean
	}
	defer f.Close()
	held, err := filelock.Within(f, lockTimeout, 100*time.Microsecond, 10*time.Millisecond)
	if err != nil {
		return ErrNotLean
	}
	if !held { // the full hook would wait as long again: say so instead
		return fmt.Errorf("another process has held %s for over %s; the call's entry was not written", p, lockTimeout)
	}
	defer filelock.Unlock(f)
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return ErrNotLean
	}
	size := fi.Size()
	tail := make([]byte, min(logTail, size))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	n, last, ok := commandlog.Last(tail)
	l := commandlog.Line{Time: now.UTC().Truncate(time.Second), Status: commandlog.Success, DurationMs: call.DurationMs,
		Task: c.Log.Task, Feature: c.Log.Feature, ID: "h-" + strconv.Itoa(n+1) + c.Log.IDSuffix}
	if ok && l.Time.Before(last) {
		l.Time = last
	}
	if start, known := TakeCallStart(root, call.ToolUseID); known && l.DurationMs == nil {
		d := max(now.Sub(start).Milliseconds(), 0)
		l.DurationMs = &d
	}
	l.Command, l.Arguments = commandlog.ToolCommand(call.Tool, call.Input)
	if call.Failed {
		l.Status = commandlog.Failure
		l.Error = commandlog.Cut(call.Error, commandlog.ErrorCut)
	}
	model := strings.TrimSpace(call.Model)
	if model == "" {
		data, _ := os.ReadFile(integrity.Path(root, commandlog.ModelFile(project)))
		model = commandlog.RecordedModel(data, call.ClaudeSession)
	}
	l.Model = commandlog.Identifier(model)
	agent := strings.TrimSpace(call.AgentType)
	if agent == "" {
		agent = strings.TrimSpace(call.AgentID)
	}
	l.Agent = commandlog.Identifier(agent)
	var b bytes.Buffer
	if tail[len(tail)-1] != '\n' {
		b.WriteByte('\n') // a write cut short (a full disk) left half a line: start a new one
	}
	b.WriteString(l.String() + "\n")
	if _, err := f.Write(b.Bytes()); err != nil {
		return err
	}
	return f.Sync()
}
