package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
)

// traceCall is one tool call of a realistic session (testdata/traces): what
// Claude Code sends the PreToolUse hook, labelled with what it does — read,
// way (sessionvault's own), edit, write, vault (writes a vault note by some
// path) or person (a person's command, in some spelling).
type traceCall struct {
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
	Kind  string          `json:"kind"`
}

// The trace replayed through the real hook in each state a session goes
// through: every call must get the decision its label calls for. The counts
// are the issue's: false denies in a proper session, reading Bash denied
// before the gate or in analysis mode, writing calls allowed in planning,
// analysis or with a broken state, person-only commands let through. (Not
// parallel: it changes the process's current folder.)
func TestReplayedTracesGetThePolicysDecisions(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "traces", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []traceCall
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c traceCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("trace line %d: %v", len(calls)+1, err)
		}
		calls = append(calls, c)
	}

	v := newVault(t)
	code := filepath.Join(filepath.Dir(v), "code")
	for _, argv := range [][]string{{"init", "-q", "-b", "feat/x", code}, {"-C", code, "commit", "-q", "--allow-empty", "-m", "start"}} {
		if out, err := exec.Command("git", argv...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", argv, err, out)
		}
	}
	os.MkdirAll(filepath.Join(code, ".serena"), 0o755)
	if err := os.Symlink(filepath.Join(v, "demo"), filepath.Join(code, ".serena", "memories")); err != nil {
		t.Fatal(err)
	}

	// allowed says, per label, whether a state allows it.
	type state struct {
		name    string
		allowed map[string]bool
	}
	readOnly := map[string]bool{"read": true}
	readAndWay := map[string]bool{"read": true, "way": true}
	working := map[string]bool{"read": true, "way": true, "edit": true, "write": true}
	wrong := map[string]int{}
	replay := func(s state) {
		for _, c := range calls {
			input := bytes.ReplaceAll(c.Input, []byte("{vault}"), []byte(v))
			in, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": code, "hook_event_name": "PreToolUse", "tool_name": c.Tool, "tool_input": json.RawMessage(input)})
			var stdout, stderr bytes.Buffer
			exit := claudecode.Main([]string{"--vault", v, "pre-tool-use"}, bytes.NewReader(in), &stdout, &stderr, newHookHandler)
			allowed := exit == 0
			if allowed == s.allowed[c.Kind] {
				continue
			}
			var what string
			switch {
			case !allowed && s.name == "coding, start gate passed":
				what = "false deny in a proper session"
			case !allowed && c.Kind == "read":
				what = "reading call denied"
			case allowed && c.Kind == "person":
				what = "person-only command let through"
			case allowed:
				what = "writing call allowed"
			default:
				what = "wrong deny"
			}
			wrong[what]++
			t.Errorf("%s: %s %s (%s): exit %d %s", s.name, c.Tool, input, c.Kind, exit, strings.TrimSpace(stderr.String()))
		}
	}

	replay(state{"no session", readAndWay})
	mustRun(t, v, "start", "--objective", "Replay")
	replay(state{"coding, start items open", readAndWay})
	mustRun(t, v, "evidence", "record", "c-1", "--file", "session-current-state.md")
	mustRun(t, v, "evidence", "record", "c-2")
	t.Chdir(code) // the branch check runs in the code repository
	mustRun(t, v, "evidence", "record", "c-3", "--run")
	replay(state{"coding, start gate passed", working})
	mustRun(t, v, "mode", "set", "planning")
	replay(state{"planning", readAndWay})
	mustRun(t, v, "mode", "set", "analysis")
	replay(state{"analysis", readAndWay})
	mustRun(t, v, "mode", "set", "coding")
	note := filepath.Join(v, "demo", "session-current-state.md")
	data, _ := os.ReadFile(note)
	os.WriteFile(note, bytes.Replace(data, []byte("\nmode: coding\n"), []byte("\nmode: disabled\n"), 1), 0o644)
	replay(state{"broken (mode forged)", readOnly})

	t.Logf("%d calls × 6 states; wrong decisions: %v", len(calls), wrong)
}
