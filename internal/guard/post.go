package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// What a PostToolUse hook records without reading the state (Claude Code
// hooks: PostToolUse, PostToolUseFailure): the active session's heartbeat
// and the project's tool history, both in .sessionvault/state, no commit.
// The lean hook writes them for a call that needs nothing else (Post);
// packages session and recovery write and read the same files through
// these functions, so there is one format.

// HeartbeatFile is the state file of a project's last heartbeat: one line,
// "<RFC 3339 time, UTC, to the second> <session id>\n".
func HeartbeatFile(project string) string { return "heartbeat-" + project }

// Heartbeat is the content of HeartbeatFile for session at t.
func Heartbeat(t time.Time, session string) []byte {
	return []byte(t.UTC().Truncate(time.Second).Format(time.RFC3339) + " " + session + "\n")
}

// WriteHeartbeat records beat (Heartbeat's) as the project's last
// heartbeat. A beat as long as the one it replaces (the same session: the
// time is always as long) overwrites it in place, in one write: a new file
// per tool call costs more than the rest of the hook's writes, and a reader
// racing the write reads a time between the two. A beat of another length
// replaces the file by a rename.
func WriteHeartbeat(root, project string, beat []byte) error {
	p := integrity.Path(root, HeartbeatFile(project))
	if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
		fi, err := f.Stat()
		if err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(beat)) {
			_, err = f.WriteAt(beat, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}
		f.Close()
	}
	return writeState(root, HeartbeatFile(project), beat)
}

// ToolHistoryFile is the state file of a project's tool history: a JSON
// object per line (ToolUse), oldest first.
func ToolHistoryFile(project string) string { return "tool-history-" + project }

// MaxToolHistoryBytes is the size past which the tool history is cut back
// (to its newest calls) by the full hook.
const MaxToolHistoryBytes = 32 << 10

// ToolUse is one line of the tool history: a tool call's time (UTC, to the
// second), the tool's name and whether it succeeded.
type ToolUse struct {
	Timestamp time.Time `json:"timestamp"`
	Tool      string    `json:"tool"`
	Success   bool      `json:"success"`
}

// Line is u as a line of the tool history, its newline included.
func (u ToolUse) Line() []byte {
	u.Timestamp = u.Timestamp.UTC().Truncate(time.Second)
	b, _ := json.Marshal(u) // a time, a string and a bool always marshal
	return append(b, '\n')
}

// ErrNotLean is returned by Post for a call it leaves to the full hook:
// nothing was written.
var ErrNotLean = errors.New("the call needs the full hook")

// Post records a tool call u, from the facts cache c of project (Load),
// when it needs nothing but what the lean hook writes: the call's entry in
// the command history when cmd is not nil (a Bash or MCP call:
// RecordCommand, waiting up to lockTimeout for the log's lock), the
// heartbeat of an active session (as the full hook's, which reads the
// verified state) and the call's line in the tool history. It returns
// ErrNotLean, having written nothing, when the call needs more: a state that
// does not verify (the full hook says why), a `tool:` evidence pattern of
// the protocol that matches the tool, or one the cache does not know, a tool
// history due to be cut back, an entry RecordCommand leaves. Another error
// says what was not recorded: the call is then not to be handed on, as its
// entry may have been written (it would be written twice). The heartbeat
// and the tool history are renames and appends without fsync: what the
// state folder keeps is rebuilt when lost.
func Post(root, project string, c Cached, u ToolUse, cmd *CommandCall, lockTimeout time.Duration) error {
	if c.Facts.Unreadable != "" || c.Facts.GateError != "" {
		return ErrNotLean
	}
	if c.Facts.Active {
		if !c.ToolEvidenceKnown {
			return ErrNotLean
		}
		for _, p := range c.ToolEvidence {
			if re, err := regexp.Compile("^(?:" + p + ")$"); err == nil && re.MatchString(u.Tool) {
				return ErrNotLean
			}
		}
	}
	line := u.Line()
	hist := integrity.Path(root, ToolHistoryFile(project))
	if fi, err := os.Stat(hist); err == nil && fi.Size()+int64(len(line)) > MaxToolHistoryBytes {
		return ErrNotLean
	}
	if cmd != nil {
		if err := RecordCommand(root, project, c, *cmd, lockTimeout, u.Timestamp); err != nil {
			if errors.Is(err, ErrNotLean) {
				return err
			}
			return fmt.Errorf("the tool call was not recorded in the command history: %w", err)
		}
	}
	if c.Facts.Active {
		if err := WriteHeartbeat(root, project, Heartbeat(u.Timestamp, c.Facts.Session)); err != nil {
			return fmt.Errorf("the session's heartbeat was not recorded: %w", err)
		}
	}
	if err := appendState(hist, line); err != nil {
		return fmt.Errorf("the tool call was not recorded in the tool history: %w", err)
	}
	return nil
}

// AppendToolUse appends u's line to the project's tool history and returns
// the history's size after it (bytes).
func AppendToolUse(root, project string, u ToolUse) (int64, error) {
	p := integrity.Path(root, ToolHistoryFile(project))
	if err := appendState(p, u.Line()); err != nil {
		return 0, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// appendState appends line to the state file at p in one write, making the
// file (and the state folder) when missing.
func appendState(p string, line []byte) error {
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if os.IsNotExist(err) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err = os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
