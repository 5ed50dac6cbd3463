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
	{"PostToolUseFailure", ".*", "post-tool-use-failure"},
	{"SessionStart", "startup|resume|clear|compact", "session-start"},
	{"PreCompact", "manual|auto", "pre-compact"},
	{"Stop", "", "stop"},
}

// Install merges sessionvault's hook entries into projectDir/.claude/
// settings.json: every other key and hook is kept; an entry of ours (see
// isOurs) is replaced, so running it twice changes nothing. The entries name
// no path of this machine (teams commit the file): each runs HookCommand,
// which finds sessionvault on PATH and the vault through this machine's
// repository link. It returns whether the file changed, and its path.
func Install(projectDir string) (bool, string, error) {
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
		ours := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": HookCommand(h.arg), "timeout": 10}}}
		if h.matcher != "" {
			ours["matcher"] = h.matcher
		}
		hooks[h.event] = append(kept, ours)
	}
	settings["hooks"] = hooks
	// Indented, and without HTML escaping (a person reads the shell command:
	// ">" stays ">", not "\u003e").
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(settings); err != nil {
		return false, path, err
	}
	out := buf.Bytes()
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

// Missing returns the hook events (Claude Code names) whose sessionvault
// entry projectDir/.claude/settings.json lacks; all of them when there is no
// such file.
func Missing(projectDir string) ([]string, error) {
	var missing []string
	data, err := os.ReadFile(filepath.Join(projectDir, ".claude", "settings.json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	settings := map[string]any{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &settings); err != nil {
			return nil, fmt.Errorf("%s is not valid JSON: %w", filepath.Join(projectDir, ".claude", "settings.json"), err)
		}
	}
	hooks, _ := settings["hooks"].(map[string]any)
	for _, h := range hookEvents {
		entries, _ := hooks[h.event].([]any)
		found := false
		for _, e := range entries {
			found = found || isOurs(e, h.arg)
		}
		if !found {
			missing = append(missing, h.event)
		}
	}
	return missing, nil
}

// HookCommand is the shell command a settings entry runs for a hook event
// (its `sessionvault hook` argument, e.g. "pre-tool-use"): the lean
// sessionvault-hook when it is on PATH, else sessionvault. When neither is,
// PreToolUse fails closed — exit 2, every tool call denied, with how to
// install — and the other events do nothing.
func HookCommand(arg string) string {
	missing := "exit 0"
	if arg == "pre-tool-use" {
		missing = `echo "sessionvault blocked this tool call: sessionvault is not installed on this machine (no sessionvault or sessionvault-hook on PATH). Install it (see its README), then run in this repository: sessionvault --vault VAULT hooks install" >&2; exit 2`
	}
	return "if command -v sessionvault-hook >/dev/null 2>&1; then exec sessionvault-hook " + arg +
		"; elif command -v sessionvault >/dev/null 2>&1; then exec sessionvault hook " + arg +
		"; else " + missing + "; fi"
}

// isOurs reports whether a settings hook entry is sessionvault's for the
// event whose argument is arg, whatever the binary is called: the command
// HookCommand writes, or an earlier form ending in " hook <arg>" that names
// sessionvault or carries --vault.
func isOurs(entry any, arg string) bool {
	m, _ := entry.(map[string]any)
	list, _ := m["hooks"].([]any)
	for _, h := range list {
		hm, _ := h.(map[string]any)
		c, _ := hm["command"].(string)
		c = strings.TrimSpace(c)
		switch {
		case c == HookCommand(arg):
			return true
		case strings.HasSuffix(c, " hook "+arg) && (strings.Contains(c, "sessionvault") || strings.Contains(c, "--vault")):
			return true
		}
	}
	return false
}
