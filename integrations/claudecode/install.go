package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// hookEvents maps each Claude Code event sessionvault answers to its
// matcher and the `sessionvault hook` argument.
var hookEvents = []struct {
	event, matcher, arg string
}{
	{"PreToolUse", ".*", "pre-tool-use"},
	{"PostToolUse", ".*", "post-tool-use"},
	{"SessionStart", "startup|resume|clear|compact", "session-start"},
	{"PreCompact", "manual|auto", "pre-compact"},
	{"Stop", "", "stop"},
}

// Install merges sessionvault's hook entries into projectDir/.claude/
// settings.json: every other key and hook is kept; an entry whose command
// already runs `sessionvault ... hook <event>` is replaced, so running it
// twice changes nothing. command is how to run sessionvault (e.g.
// "/usr/local/bin/sessionvault --vault /home/me/vault"). It returns whether
// the file changed.
func Install(projectDir, command string) (bool, string, error) {
	path := filepath.Join(projectDir, ".claude", "settings.json")
	settings := map[string]any{}
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		if len(bytes.TrimSpace(old)) > 0 {
			if err := json.Unmarshal(old, &settings); err != nil {
				return false, path, fmt.Errorf("%s is not valid JSON (%w); fix it first, nothing was changed", path, err)
			}
		}
	case !errors.Is(err, os.ErrNotExist):
		return false, path, err
	}
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		if settings["hooks"] != nil {
			return false, path, fmt.Errorf("%s: \"hooks\" is not an object; nothing was changed", path)
		}
		hooks = map[string]any{}
	}
	for _, h := range hookEvents {
		entries, _ := hooks[h.event].([]any)
		var kept []any
		for _, e := range entries {
			if !isOurs(e, h.arg) {
				kept = append(kept, e)
			}
		}
		ours := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command + " hook " + h.arg, "timeout": 10}}}
		if h.matcher != "" {
			ours["matcher"] = h.matcher
		}
		hooks[h.event] = append(kept, ours)
	}
	settings["hooks"] = hooks
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return false, path, err
	}
	out = append(out, '\n')
	if bytes.Equal(out, old) {
		return false, path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, path, err
	}
	tmp := path + ".sessionvault-tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return false, path, err
	}
	return true, path, os.Rename(tmp, path)
}

// isOurs reports whether a settings hook entry runs `sessionvault ... hook arg`.
func isOurs(entry any, arg string) bool {
	m, _ := entry.(map[string]any)
	list, _ := m["hooks"].([]any)
	for _, h := range list {
		hm, _ := h.(map[string]any)
		c, _ := hm["command"].(string)
		if strings.Contains(c, "sessionvault") && strings.HasSuffix(strings.TrimSpace(c), " hook "+arg) { // both binaries
			return true
		}
	}
	return false
}
