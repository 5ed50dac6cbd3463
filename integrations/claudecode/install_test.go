package claudecode_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
)

// ourEntries are the settings entries Install writes: Claude Code event,
// matcher ("" = none) and the `sessionvault hook` argument.
var ourEntries = []struct{ event, matcher, arg string }{
	{"PreToolUse", ".*", "pre-tool-use"},
	{"PostToolUse", ".*", "post-tool-use"},
	{"PostToolUseFailure", ".*", "post-tool-use-failure"},
	{"SessionStart", "startup|resume|clear|compact", "session-start"},
	{"PreCompact", "manual|auto", "pre-compact"},
	{"Stop", "", "stop"},
}

// allEvents are the events Missing names for a project without our hooks.
var allEvents = []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "PreCompact", "Stop"}

// ourEntry is the settings entry Install writes for one event.
func ourEntry(matcher, arg string) map[string]any {
	e := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": claudecode.HookCommand(arg), "timeout": float64(10)}}}
	if matcher != "" {
		e["matcher"] = matcher
	}
	return e
}

// readSettings parses projectDir/.claude/settings.json.
func readSettings(t *testing.T, projectDir string) (map[string]any, string) {
	t.Helper()
	text := readFile(t, filepath.Join(projectDir, ".claude", "settings.json"))
	var s map[string]any
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatalf("settings.json is not JSON: %v\n%s", err, text)
	}
	return s, text
}

// missing is claudecode.Missing, which must not fail.
func missing(t *testing.T, dir string) []string {
	t.Helper()
	m, err := claudecode.Missing(dir)
	if err != nil {
		t.Fatalf("Missing: %v", err)
	}
	return m
}

// TestInstallWritesTheHookEntries checks a first install in a project
// without settings: .claude/settings.json gets one entry per event with its
// matcher, the portable command and a 10 s timeout, readable by a person
// (indented, ">" not escaped); Missing names every event before and none
// after; a second install changes nothing, byte for byte.
func TestInstallWritesTheHookEntries(t *testing.T) {
	dir := t.TempDir()
	if got := missing(t, dir); !reflect.DeepEqual(got, allEvents) {
		t.Errorf("Missing before install = %v; want %v", got, allEvents)
	}
	changed, path, err := claudecode.Install(dir)
	if err != nil || !changed || path != filepath.Join(dir, ".claude", "settings.json") {
		t.Fatalf("Install = %v, %q, %v; want a change to %s", changed, path, err, filepath.Join(dir, ".claude", "settings.json"))
	}
	s, text := readSettings(t, dir)
	hooks, _ := s["hooks"].(map[string]any)
	if len(s) != 1 || len(hooks) != len(ourEntries) {
		t.Errorf("settings = %v; want only hooks, with %d events", s, len(ourEntries))
	}
	for _, e := range ourEntries {
		want := []any{ourEntry(e.matcher, e.arg)}
		if !reflect.DeepEqual(hooks[e.event], want) {
			t.Errorf("%s = %v; want %v", e.event, hooks[e.event], want)
		}
	}
	if !strings.Contains(text, "\n  \"hooks\": {\n    \"PostToolUse\": [") || !strings.Contains(text, ">/dev/null 2>&1") || strings.Contains(text, `\u003e`) {
		t.Errorf("settings.json is not written for a person to read:\n%s", text)
	}
	if strings.Contains(text, dir) || strings.Contains(text, os.Getenv("HOME")) {
		t.Errorf("settings.json names a path of this machine:\n%s", text)
	}
	if got := missing(t, dir); len(got) != 0 {
		t.Errorf("Missing after install = %v; want none", got)
	}

	changed, _, err = claudecode.Install(dir)
	if err != nil || changed {
		t.Errorf("second Install = %v, %v; want no change", changed, err)
	}
	if _, again := readSettings(t, dir); again != text {
		t.Errorf("second Install rewrote the file:\n%s", again)
	}
	if _, err := os.Stat(path + ".sessionvault-tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary file was left behind: %v", err)
	}
}

// TestInstallKeepsAPersonsSettings checks an install into settings a person
// already has: every other key, event and hook entry is kept as it was and
// in its place; entries of an earlier sessionvault install (whatever the
// binary was called) are replaced, so each event has exactly one of ours.
func TestInstallKeepsAPersonsSettings(t *testing.T) {
	dir := t.TempDir()
	theirs := `{
  "model": "opus",
  "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
  "env": {"FOO": "bar"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/check-bash.sh"}]},
      {"matcher": ".*", "hooks": [{"type": "command", "command": "/usr/local/bin/sessionvault --vault /home/me/vault hook pre-tool-use"}]}
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "/opt/sv/bin/svh --vault /srv/vault hook stop", "timeout": 5}]}
    ],
    "Notification": [
      {"hooks": [{"type": "command", "command": "notify-send 'Claude needs you'"}]}
    ],
    "PostToolUse": [
      {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write \"$FILE\" hook post-tool-use"}]}
    ]
  }
}
`
	writeFile(t, filepath.Join(dir, ".claude", "settings.json"), theirs)
	if got := missing(t, dir); !reflect.DeepEqual(got, []string{"PostToolUse", "PostToolUseFailure", "SessionStart", "PreCompact"}) {
		t.Errorf("Missing with an earlier install of PreToolUse and Stop = %v", got)
	}
	changed, _, err := claudecode.Install(dir)
	if err != nil || !changed {
		t.Fatalf("Install = %v, %v; want a change", changed, err)
	}
	s, _ := readSettings(t, dir)
	var before map[string]any
	if err := json.Unmarshal([]byte(theirs), &before); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "permissions", "env"} {
		if !reflect.DeepEqual(s[k], before[k]) {
			t.Errorf("%s = %v; want it kept: %v", k, s[k], before[k])
		}
	}
	hooks := s["hooks"].(map[string]any)
	old := before["hooks"].(map[string]any)
	want := map[string][]any{
		"PreToolUse":   {old["PreToolUse"].([]any)[0], ourEntry(".*", "pre-tool-use")},
		"Stop":         {ourEntry("", "stop")},
		"Notification": old["Notification"].([]any),
		// Not ours: it ends in " hook post-tool-use" but names no sessionvault.
		"PostToolUse":        {old["PostToolUse"].([]any)[0], ourEntry(".*", "post-tool-use")},
		"PostToolUseFailure": {ourEntry(".*", "post-tool-use-failure")},
		"SessionStart":       {ourEntry("startup|resume|clear|compact", "session-start")},
		"PreCompact":         {ourEntry("manual|auto", "pre-compact")},
	}
	if len(hooks) != len(want) {
		t.Errorf("events %v; want %d", hooks, len(want))
	}
	for event, w := range want {
		if !reflect.DeepEqual(hooks[event], w) {
			t.Errorf("%s = %v;\nwant %v", event, hooks[event], w)
		}
	}
	if got := missing(t, dir); len(got) != 0 {
		t.Errorf("Missing after install = %v; want none", got)
	}
}

// TestInstallRefusesSettingsItCannotMerge checks that settings that are not
// valid JSON, whose "hooks" is not an object, or that cannot be written are
// reported — saying nothing was changed — and left as they were; an empty
// file is taken as no settings.
func TestInstallRefusesSettingsItCannotMerge(t *testing.T) {
	for _, c := range []struct {
		name, settings, err string
	}{
		{"a trailing comma", `{"model": "opus",}`, "is not valid JSON"},
		{"hooks as a list", `{"hooks": []}`, `"hooks" is not an object; nothing was changed`},
		{"hooks as a string", `{"hooks": "none"}`, `"hooks" is not an object`},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, ".claude", "settings.json")
		writeFile(t, p, c.settings)
		changed, _, err := claudecode.Install(dir)
		if changed || err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: Install = %v, %v; want an error naming %s and %q", c.name, changed, err, p, c.err)
		}
		if got := readFile(t, p); got != c.settings {
			t.Errorf("%s: the file was changed to %q", c.name, got)
		}
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".claude", "settings.json"), `{"model": "opus",}`)
	if _, err := claudecode.Missing(dir); err == nil || !strings.Contains(err.Error(), "is not valid JSON") {
		t.Errorf("Missing on broken settings: %v; want it to say the file is not valid JSON", err)
	}

	dir = t.TempDir()
	writeFile(t, filepath.Join(dir, ".claude", "settings.json"), " \n")
	if changed, _, err := claudecode.Install(dir); err != nil || !changed || len(missing(t, dir)) != 0 {
		t.Errorf("an empty settings file: Install = %v, %v; want the hooks installed", changed, err)
	}

	dir = t.TempDir()
	writeFile(t, filepath.Join(dir, ".claude"), "a file, not a folder")
	if changed, _, err := claudecode.Install(dir); err == nil || changed {
		t.Errorf(".claude is a file: Install = %v, %v; want an error", changed, err)
	}
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "settings.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if changed, _, err := claudecode.Install(dir); err == nil || changed {
		t.Errorf("settings.json is a folder: Install = %v, %v; want an error", changed, err)
	}
	if _, err := claudecode.Missing(dir); err == nil {
		t.Errorf("settings.json is a folder: Missing gave no error")
	}
}

// TestHookCommandRunsInAShell runs the command a settings entry holds the
// way Claude Code does (sh -c, the hook input on stdin) with different
// binaries on PATH: the lean sessionvault-hook is preferred, then
// sessionvault; with neither, PreToolUse denies (exit 2, saying how to
// install) and the other events do nothing.
func TestHookCommandRunsInAShell(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	empty, full, both := t.TempDir(), t.TempDir(), t.TempDir()
	// Stand-ins that say which binary ran, with what, on which input.
	fake := func(dir, name string) {
		writeFile(t, filepath.Join(dir, name), "#!"+sh+"\nread -r line\necho \""+name+" $* <- $line\"\n")
		if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake(full, "sessionvault")
	fake(both, "sessionvault")
	fake(both, "sessionvault-hook")
	run := func(path, arg string) result {
		cmd := exec.Command(sh, "-c", claudecode.HookCommand(arg))
		cmd.Env = []string{"PATH=" + path}
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}` + "\n")
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if e, ok := err.(*exec.ExitError); ok {
			code = e.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code, out.String(), errb.String()}
	}
	for _, c := range []struct {
		path, arg string
		want      result
	}{
		{both, "pre-tool-use", result{0, `sessionvault-hook pre-tool-use <- {"hook_event_name":"Stop"}` + "\n", ""}},
		{both + ":" + full, "stop", result{0, `sessionvault-hook stop <- {"hook_event_name":"Stop"}` + "\n", ""}},
		{full, "session-start", result{0, `sessionvault hook session-start <- {"hook_event_name":"Stop"}` + "\n", ""}},
		{empty + ":" + full, "pre-tool-use", result{0, `sessionvault hook pre-tool-use <- {"hook_event_name":"Stop"}` + "\n", ""}},
		{empty, "pre-tool-use", result{2, "", "sessionvault blocked this tool call: sessionvault is not installed on this machine (no sessionvault or sessionvault-hook on PATH). Install it (see its README), then run in this repository: sessionvault --vault VAULT hooks install\n"}},
		{empty, "post-tool-use", silent},
		{empty, "stop", silent},
	} {
		if got := run(c.path, c.arg); got != c.want {
			t.Errorf("%s with PATH %s: %+v; want %+v", c.arg, c.path, got, c.want)
		}
	}
}
