package guard

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// The start times of tool calls, for the command history's duration_ms: the
// PreToolUse hook (lean or full) records when a call it lets through started,
// in .sessionvault/state/calls/<tool_use_id>, and the PostToolUse hook takes
// it back. Only calls the history records are noted.

// RecordsCommand reports whether the command history records calls of tool
// (a Claude Code tool name): Bash and MCP tools (mcp__<server>__<tool>). The
// other tools (Read, Edit, Write, Grep, Task, ...) are not commands: their
// effects are in the code repository's history, and a line per read would
// bury the commands.
func RecordsCommand(tool string) bool {
	return tool == "Bash" || strings.HasPrefix(tool, "mcp__")
}

// plainID reports whether id is 1-128 letters, digits, '_' and '-' (a
// tool_use_id such as toolu_01AbC…): safe as a file name.
func plainID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func callFile(root, id string) string {
	return integrity.Path(root, integrity.CallsDir+"/"+id)
}

// NoteCallStart records that the tool call id (the hook input's tool_use_id)
// starts now (kept when one is there already). An id that is not a plain
// name, or a tool the history does not record, is ignored. No fsync: a lost
// record costs one duration.
func NoteCallStart(root, tool, id string) error {
	if !RecordsCommand(tool) || !plainID(id) {
		return nil
	}
	p := callFile(root, id)
	// A new file, never a truncated one (ext4 flushes a file rewritten
	// through truncation on close); a record already there is the call's
	// first start and stays.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if os.IsNotExist(err) { // the first call: no folder yet
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if os.IsExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(strconv.FormatInt(time.Now().UnixNano(), 10))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TakeCallStart returns when call id started, as NoteCallStart recorded
// it, and removes the record; ok is false when there is none.
func TakeCallStart(root, id string) (time.Time, bool) {
	if !plainID(id) {
		return time.Time{}, false
	}
	p := callFile(root, id)
	data, err := os.ReadFile(p)
	if err != nil {
		return time.Time{}, false
	}
	os.Remove(p)
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// PruneCallStarts removes the start records older than age: calls that were
// interrupted before their PostToolUse hook ran.
func PruneCallStarts(root string, age time.Duration) {
	pruneOlder(integrity.Path(root, integrity.CallsDir), age)
}

// pruneOlder removes the files of dir last modified more than age ago.
func pruneOlder(dir string, age time.Duration) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
