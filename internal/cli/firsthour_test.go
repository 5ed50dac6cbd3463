package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// statusJSON returns `status --json`'s data.
func statusJSON(t *testing.T, v string) map[string]any {
	t.Helper()
	var res struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, v, "status", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	return res.Data
}

// setStateProperty writes "key: value" over the property's line in the
// project's current state, as a person editing it would, and returns that
// line's number.
func setStateProperty(t *testing.T, v, key, value string) int {
	t.Helper()
	note := filepath.Join(v, "demo", "session-current-state.md")
	cur, _ := os.ReadFile(note)
	lines := strings.Split(string(cur), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, key+": ") || l == key+":" {
			lines[i] = key + ": " + value
			os.WriteFile(note, []byte(strings.Join(lines, "\n")), 0o644)
			return i + 1
		}
	}
	t.Fatalf("no property %s in %s", key, note)
	return 0
}

// `start --force` after `recover` marks the old session abandoned and
// starts a complete new one: its checklists, no idle text left behind.
func TestStartForceAfterRecoverStartsACompleteSession(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "One")
	mustRun(t, v, "update", "something")
	mustRun(t, v, "recover", "--force")
	mustRun(t, v, "start", "--objective", "Two", "--force")
	st := statusJSON(t, v)
	if st["objective"] != "Two" || st["status"] != "active" {
		t.Fatalf("status = %v", st)
	}
	if cl, _ := st["start_checklist"].([]any); len(cl) == 0 {
		t.Errorf("the new session has no start checklist")
	}
	note, _ := os.ReadFile(filepath.Join(v, "demo", "session-current-state.md"))
	if strings.Contains(string(note), "No active session") {
		t.Errorf("the idle text stayed in the new session:\n%s", note)
	}
	archived, err := os.ReadFile(filepath.Join(v, "demo", "sessions", "2026-11-23-session-01.md"))
	if err != nil {
		matches, _ := filepath.Glob(filepath.Join(v, "demo", "sessions", "*.md"))
		if len(matches) != 1 {
			t.Fatalf("archived sessions: %v", matches)
		}
		archived, _ = os.ReadFile(matches[0])
	}
	if !strings.Contains(string(archived), "status: abandoned") {
		t.Errorf("the old session is not marked abandoned:\n%s", archived)
	}
	assertClean(t, v)
}

// A new session starts in the vault's default mode: the last session's mode,
// even a person's disabled, does not carry over.
func TestNewSessionStartsInDefaultMode(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "One")
	mustRun(t, v, "mode", "set", "disabled")
	mustRun(t, v, "end", "--summary", "done")
	mustRun(t, v, "start", "--objective", "Two")
	if m := statusJSON(t, v)["mode"]; m != "coding" {
		t.Errorf("mode of the new session = %v, want coding (default_mode)", m)
	}
}

// check names each problem once, with its file and line: a broken front
// matter, and an entry line a person broke (whose id is not issued again).
func TestCheckReportsProblemsOnceWithFileAndLine(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Check")
	mustRun(t, v, "update", "first")
	note := filepath.Join(v, "demo", "session-current-state.md")
	data, _ := os.ReadFile(note)
	broken := strings.Replace(string(data), "· note · first ^u-1", "first, edited by hand ^u-1", 1)
	if broken == string(data) {
		t.Fatal("no entry to break")
	}
	os.WriteFile(note, []byte(broken), 0o644)
	os.WriteFile(filepath.Join(v, "demo", "scratch.md"), []byte("---\ntitle: [unclosed\n---\nbody\n"), 0o644)
	out, errOut, code := run(t, v, "check")
	if code == 0 {
		t.Fatalf("check passed with a broken entry and a broken note:\n%s", out)
	}
	for _, want := range []string{"demo/session-current-state.md:", "cannot read this updates entry back", "demo/scratch.md:3: front matter is not valid YAML"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("check output lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Count(errOut, "demo/scratch.md:") != 1 {
		t.Errorf("the file prefix is printed more than once:\n%s", errOut)
	}
	mustRun(t, v, "update", "second")
	after, _ := os.ReadFile(note)
	if strings.Count(string(after), "^u-1\n") != 1 || !strings.Contains(string(after), "second ^u-2") {
		t.Errorf("an id was issued again:\n%s", after)
	}
}

// Only [x] (or [X]) ticks an item: Obsidian's other task statuses ([?],
// [/], [-]) do not make a MUST done.
func TestOnlyAnXTicksAnItem(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Ticks")
	note := filepath.Join(v, "demo", "session-current-state.md")
	data, _ := os.ReadFile(note)
	os.WriteFile(note, []byte(strings.Replace(string(data), "- [ ] **MAY** Record lessons", "- [?] **MAY** Record lessons", 1)), 0o644)
	end, _ := statusJSON(t, v)["end_checklist"].([]any)
	if len(end) < 4 {
		t.Fatalf("end checklist = %v", end)
	}
	if e4, _ := end[3].(map[string]any); e4["done"] != false {
		t.Errorf("[?] counts as done: %v", e4)
	}
}

// end says the phase the session ended in and names the unmet MUSTs it
// logged; the archived session keeps that phase (not INIT).
func TestEndShowsPhaseAndViolations(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Phase")
	out := mustRun(t, v, "end", "--summary", "stopped early")
	for _, want := range []string{"in phase VIOLATION", "2 unmet MUST item(s)", "e-1 Record the session's progress as updates", "e-2 Commit the code changes"} {
		if !strings.Contains(out, want) {
			t.Errorf("end's output lacks %q:\n%s", want, out)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(v, "demo", "sessions", "*.md"))
	if len(matches) != 1 {
		t.Fatalf("archived: %v", matches)
	}
	if a, _ := os.ReadFile(matches[0]); !strings.Contains(string(a), "\nphase: VIOLATION\n") {
		t.Errorf("archived phase:\n%s", a)
	}
}

// A person's hand edit (an entry reworded, a section of their own) never
// makes gate validate fail; a sealed field changed by hand does, with its own
// code, E1641 STATE_CHANGED_OUTSIDE (not E1640 CONCURRENT_UPDATE).
func TestGateValidateAfterHandEdits(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Hand edits")
	mustRun(t, v, "update", "an entry")
	note := filepath.Join(v, "demo", "session-current-state.md")
	data, _ := os.ReadFile(note)
	edited := strings.Replace(string(data), "an entry ^u-1", "an entry, reworded by hand ^u-1", 1) + "\n## My notes\n\ntext\n"
	os.WriteFile(note, []byte(edited), 0o644)
	if _, errOut, _ := run(t, v, "gate", "validate", "start"); strings.Contains(errOut, "E1640") || strings.Contains(errOut, "E1641") {
		t.Fatalf("a hand edit made gate validate fail:\n%s", errOut)
	}
	mustRun(t, v, "update", "commits the hand edit")
	os.WriteFile(note, []byte(strings.Replace(edited, "\nphase: INIT\n", "\nphase: COMPLETE\n", 1)), 0o644)
	if _, errOut, code := run(t, v, "gate", "validate", "start"); code == 0 || !strings.Contains(errOut, "E1641 STATE_CHANGED_OUTSIDE") {
		t.Errorf("a sealed field changed by hand: exit %d\n%s", code, errOut)
	}
}

// An unknown subcommand, or a group command without one, is a usage error
// (exit 2) that names it; blocked-reason answers with exit 0 whether the
// tool is blocked or not, and --json says which ("allowed").
func TestUnknownSubcommandsAndBlockedReasonExit(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	_, errOut, code := run(t, v, "import", "cursor-rules", "x")
	if code != 2 || !strings.Contains(errOut, `unknown command "cursor-rules" for "sessionvault import"`) || !strings.Contains(errOut, "memory-bank, serena") {
		t.Errorf("import cursor-rules: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := run(t, v, "hooks"); code != 2 || !strings.Contains(errOut, "needs a command: install") {
		t.Errorf("hooks: exit %d\n%s", code, errOut)
	}
	if out, _, code := run(t, v, "blocked-reason", "--tool", "Edit"); code != 0 || !strings.Contains(out, "Edit is blocked") {
		t.Errorf("blocked-reason on a blocked tool: exit %d\n%s", code, out)
	}
	if out, _, code := run(t, v, "--json", "blocked-reason", "--tool", "Edit"); code != 0 || !strings.Contains(out, `"allowed": false`) || !strings.Contains(out, `"blocked": true`) || !strings.Contains(out, `"reason": "`) {
		t.Errorf("blocked-reason --json on a blocked tool: exit %d\n%s", code, out)
	}
	if out, _, code := run(t, v, "blocked-reason", "--tool", "Read"); code != 0 || !strings.Contains(out, "Read is allowed") {
		t.Errorf("blocked-reason on an allowed tool: exit %d\n%s", code, out)
	}
	if out, _, code := run(t, v, "--json", "blocked-reason", "--tool", "Read"); code != 0 || !strings.Contains(out, `"allowed": true`) || !strings.Contains(out, `"blocked": false`) {
		t.Errorf("blocked-reason --json on an allowed tool: exit %d\n%s", code, out)
	}
}

// File evidence: an absolute path, a path relative to the current folder,
// and a path relative to the project folder all name the protocol's file; a
// different file is refused naming both. (Not parallel: it changes the
// process's current folder.)
func TestFileEvidencePaths(t *testing.T) {
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Paths")
	abs := filepath.Join(v, "demo", "session-current-state.md")
	mustRun(t, v, "evidence", "record", "c-1", "--file", abs)
	mustRun(t, v, "evidence", "record", "c-1", "--file", "session-current-state.md")
	t.Chdir(filepath.Join(v, "demo"))
	mustRun(t, v, "evidence", "record", "c-1", "--file", "./session-current-state.md")
	_, errOut, code := run(t, v, "evidence", "record", "c-1", "--file", "session-history.md")
	if code == 0 || !strings.Contains(errOut, "the protocol asks for session-current-state.md, and session-history.md") {
		t.Errorf("another file: exit %d\n%s", code, errOut)
	}
}

// init on a folder that already holds notes (a copied vault) says what it
// committed: never "nothing to change" when it made a commit.
func TestInitSaysWhatItCommitted(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "vault")
	os.MkdirAll(filepath.Join(dir, "demo"), 0o755)
	mustRun(t, dir, "init", dir, "--project", "demo")
	os.RemoveAll(filepath.Join(dir, ".git"))
	os.RemoveAll(filepath.Join(dir, ".sessionvault", "state"))
	os.WriteFile(filepath.Join(dir, "mine.md"), []byte("# mine\n"), 0o644)
	out := mustRun(t, dir, "init", dir, "--project", "demo")
	if strings.Contains(out, "nothing to change") || !strings.Contains(out, "already in the folder were committed as yours first") {
		t.Errorf("init on a folder with notes:\n%s", out)
	}
	if log := git(t, dir, "log", "--format=%s"); !strings.Contains(log, "changed outside sessionvault") {
		t.Errorf("history:\n%s", log)
	}
	if out := mustRun(t, dir, "init", dir, "--project", "demo"); !strings.Contains(out, "nothing to change") {
		t.Errorf("a second init:\n%s", out)
	}
}

// A start time edited in Obsidian, in each form Obsidian writes (date-time
// to the second or minute without a zone, a bare date), is read in the
// vault's time_zone: the archive gets the right duration. check flags a time
// it cannot read with its file and line.
func TestObsidianTimesAreRead(t *testing.T) {
	t.Parallel()
	for _, form := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		t.Run(form, func(t *testing.T) {
			v := newVault(t)
			cfg := filepath.Join(v, ".sessionvault", "config.yaml")
			data, _ := os.ReadFile(cfg)
			os.WriteFile(cfg, append(data, []byte("time_zone: America/New_York\n")...), 0o644)
			mustRun(t, v, "start", "--objective", "Times")
			loc, _ := time.LoadLocation("America/New_York")
			started := time.Now().In(loc).Add(-90 * time.Minute)
			if form == "2006-01-02" {
				started = time.Date(started.Year(), started.Month(), started.Day(), 0, 0, 0, 0, loc)
			}
			setStateProperty(t, v, "started", started.Format(form))
			if out, errOut, code := run(t, v, "check"); code != 0 {
				t.Fatalf("check: %s%s", out, errOut)
			}
			mustRun(t, v, "end", "--summary", "done")
			matches, _ := filepath.Glob(filepath.Join(v, "demo", "sessions", "*.md"))
			a, _ := os.ReadFile(matches[0])
			want := int(time.Since(started.Truncate(time.Second)).Minutes())
			var got int
			for _, l := range strings.Split(string(a), "\n") {
				if strings.HasPrefix(l, "duration_minutes: ") {
					fmt.Sscanf(l, "duration_minutes: %d", &got)
				}
			}
			if got < want-1 || got > want+1 {
				t.Errorf("duration_minutes = %d, want about %d (started %s)", got, want, started.Format(form))
			}
		})
	}
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Bad time")
	line := setStateProperty(t, v, "started", "yesterday at ten")
	_, errOut, code := run(t, v, "check")
	if want := fmt.Sprintf("demo/session-current-state.md:%d: cannot read started", line); code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("check on an unreadable time: exit %d, want %q in\n%s", code, want, errOut)
	}
}

// The resume prompt of an idle project gives the last session's summary
// and next steps; after `start --continue` the new session's prompt does too.
func TestResumePromptCarriesTheLastSession(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Login page")
	mustRun(t, v, "end", "--summary", "Form done, API not wired", "--next", "Wire the API", "--next", "Add tests")
	prompt := func() string {
		var out, errb strings.Builder
		Main([]string{"--vault", v, "hook", "session-start"}, strings.NewReader(`{"hook_event_name":"SessionStart","source":"startup"}`), &out, &errb)
		var r struct {
			Out struct {
				Context string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		json.Unmarshal([]byte(out.String()), &r)
		return r.Out.Context
	}
	idle := prompt()
	for _, want := range []string{"Summary: Form done, API not wired", "- Wire the API", "- Add tests", "--continue "} {
		if !strings.Contains(idle, want) {
			t.Errorf("idle prompt lacks %q:\n%s", want, idle)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(v, "demo", "sessions", "*.md"))
	id := strings.TrimSuffix(filepath.Base(matches[0]), ".md")
	mustRun(t, v, "start", "--objective", "API", "--continue", id)
	if p := prompt(); !strings.Contains(p, "Continues: "+id+" (its summary: Form done, API not wired)") || !strings.Contains(p, "next step it left: Wire the API") {
		t.Errorf("prompt after --continue:\n%s", p)
	}
}

// Errors name the operation's own terms and the next step, with codes of
// their own: an unknown project, a gate that does not pass, a start over a
// crashed session (which names recover).
func TestErrorsNameWhatHappened(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	if _, errOut, _ := run(t, v, "status", "--project", "nope"); !strings.Contains(errOut, "E1607 PROJECT_NOT_FOUND") || !strings.Contains(errOut, "init --project nope") {
		t.Errorf("unknown project:\n%s", errOut)
	}
	mustRun(t, v, "start", "--objective", "Errors")
	if _, errOut, _ := run(t, v, "gate", "validate", "start"); !strings.Contains(errOut, "E1608 GATE_NOT_PASSED") {
		t.Errorf("gate validate:\n%s", errOut)
	}
	if _, errOut, _ := run(t, v, "phase", "advance"); !strings.Contains(errOut, "E1608 GATE_NOT_PASSED") {
		t.Errorf("phase advance:\n%s", errOut)
	}
	cfg := filepath.Join(v, ".sessionvault", "config.yaml")
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(data), "heartbeat_timeout: 30m", "heartbeat_timeout: 1s", 1)), 0o644)
	time.Sleep(2100 * time.Millisecond)
	if _, errOut, _ := run(t, v, "start", "--objective", "Again"); !strings.Contains(errOut, "E1603 SESSION_CRASHED") || !regexp.MustCompile("`sessionvault --vault \\S+ recover`").MatchString(errOut) {
		t.Errorf("start over a crashed session:\n%s", errOut)
	}
}

// A length or emptiness error names the field as the CLI and MCP both know
// it (the message, the rationale), not a flag that does not exist.
func TestFieldErrorsNameTheField(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Fields")
	if _, errOut, _ := run(t, v, "update", strings.Repeat("a", 600)); !strings.Contains(errOut, "the message is 600 characters; at most 500") || strings.Contains(errOut, "--message") {
		t.Errorf("update too long:\n%s", errOut)
	}
	if _, errOut, _ := run(t, v, "decide", "--title", "T", "--choice", "C", "--rationale", " "); !strings.Contains(errOut, "the rationale must not be empty") {
		t.Errorf("decide with an empty rationale:\n%s", errOut)
	}
}
