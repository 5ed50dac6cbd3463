package claudecode_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// silent is the answer of a hook that has nothing to say: exit 0, no output.
var silent = result{}

// TestPostToolUseKeepsTheCommandHistory feeds PostToolUse and
// PostToolUseFailure the inputs Claude Code sends after Bash, MCP and other
// tool calls of a working session, and checks the session's command history
// (sessions/<id>/commands.md): every Bash and MCP call is appended with its
// status, duration, agent, model (from SessionStart) and error; other tools
// are not; the first entry is committed at once as the agent's. The hook
// itself says nothing (exit 0).
func TestPostToolUseKeepsTheCommandHistory(t *testing.T) {
	f := newFixture(t)
	f.working("Login page")
	if r := f.hook("session-start", map[string]any{"source": "startup", "model": "claude-opus-4-1"}); r.Exit != 0 {
		t.Fatalf("session-start: %+v", r)
	}

	steps := []struct {
		name  string
		pre   bool // PreToolUse sees the call first (it notes when it started)
		event string
		call  map[string]any
		entry string // the line appended, "" for none
	}{
		{"a reading Bash call, timed from PreToolUse", true, "post-tool-use",
			bash("git status", map[string]any{"tool_response": map[string]any{"stdout": "clean", "stderr": "", "interrupted": false}}),
			`^- \S+Z · success · ` + "`git status`" + ` · \*\*args:\*\* ` + "`" + `\{"description":"run it"\}` + "`" + ` · \*\*model:\*\* claude-opus-4-1 · \*\*duration:\*\* \d+ ms \^h-1$`},
		{"a failed MCP call in a subagent", false, "post-tool-use-failure",
			call("mcp__serena__find_symbol", map[string]any{"name": "Main"}, map[string]any{"error": "symbol not found", "duration_ms": 812.4, "agent_id": "a-7", "agent_type": "Explore"}),
			`^- \S+Z · failure · ` + "`mcp__serena__find_symbol`" + ` · .*\*\*agent:\*\* Explore · \*\*duration:\*\* 812 ms · \*\*error:\*\* ` + "`symbol not found`" + ` \^h-2$`},
		{"a Bash call whose response says it failed", false, "post-tool-use",
			bash("go test ./...", map[string]any{"tool_response": map[string]any{"stdout": "", "stderr": "--- FAIL: TestLogin\n", "is_error": true}}),
			`^- \S+Z · failure · ` + "`go test ./...`" + ` · .*\*\*error:\*\* ` + "`--- FAIL: TestLogin`" + ` \^h-3$`},
		{"Read is not recorded", false, "post-tool-use",
			call("Read", map[string]any{"file_path": "main.go"}, map[string]any{"tool_response": map[string]any{"type": "text"}}), ""},
		{"Edit is not recorded", false, "post-tool-use",
			call("Edit", map[string]any{"file_path": "main.go", "old_string": "a", "new_string": "b"}, map[string]any{"tool_response": map[string]any{"filePath": "main.go"}}), ""},
	}
	for i, s := range steps {
		before := f.commandLog()
		if s.pre {
			if r := f.hook("pre-tool-use", s.call); r != silent {
				t.Fatalf("%s: pre-tool-use %+v", s.name, r)
			}
		}
		if r := f.hook(s.event, s.call); r != silent {
			t.Errorf("%s: %s answered %+v; want exit 0 and no output", s.name, s.event, r)
		}
		after := f.commandLog()
		if !strings.HasPrefix(after, before) {
			t.Errorf("%s: the log was rewritten, not appended to:\n%s\n-> %s", s.name, before, after)
		}
		added := strings.TrimSuffix(after[len(before):], "\n")
		if i == 0 {
			// The log's front matter comes with its first entry.
			added = added[strings.LastIndex(added, "\n")+1:]
		}
		if s.entry == "" {
			if added != "" {
				t.Errorf("%s: appended %q; want nothing", s.name, added)
			}
		} else if !regexp.MustCompile(s.entry).MatchString(added) {
			t.Errorf("%s: appended %q; want a line matching %q", s.name, added, s.entry)
		}
		if i == 0 {
			if got := f.vaultLog(1); !regexp.MustCompile(`^sessionvault agent: agent-edit: demo/sessions/\S+/commands.md changed by the agent's command-history call\n$`).MatchString(got) {
				t.Errorf("the first entry was not committed as the agent's: %q", got)
			}
			if st := f.vaultStatus(); st != "" {
				t.Errorf("uncommitted after the first entry: %q", st)
			}
		}
	}
	// Ending the session commits the rest of the log; afterwards a call is
	// recorded nowhere.
	f.sv("end", "--summary", "done")
	n := f.commandLog()
	if r := f.hook("post-tool-use", bash("go test ./...")); r != silent {
		t.Errorf("no session: %+v; want exit 0 and no output", r)
	}
	if f.commandLog() != n || f.vaultStatus() != "" {
		t.Errorf("no session: the call was recorded (vault status %q)", f.vaultStatus())
	}
}

// TestPostToolUseCommitsNotesTheAgentChanged checks that a vault note a
// shell call changed (a script PreToolUse could not see into) is committed
// by PostToolUse as the agent's edit, not left for the person's next commit;
// the session goes on.
func TestPostToolUseCommitsNotesTheAgentChanged(t *testing.T) {
	f := newFixture(t)
	f.working("Login page")
	script := bash("python3 write_notes.py")
	if r := f.hook("pre-tool-use", script); r != silent {
		t.Fatalf("pre-tool-use: %+v; want the call to pass", r)
	}
	// What the script does.
	p := f.notePath("session-current-state.md")
	writeFile(t, p, readFile(t, p)+"- a line the agent's script wrote\n")
	if r := f.hook("post-tool-use", script); r != silent {
		t.Errorf("post-tool-use: %+v; want exit 0 and no output", r)
	}
	log := git(t, f.Vault, "log", "-1", "--format=%an%n%s%n%b")
	if !strings.HasPrefix(log, "sessionvault agent\nagent-edit: demo/session-current-state.md changed by the agent's Bash call\n") {
		t.Errorf("last vault commit:\n%s\nwant the agent's edit of the note", log)
	}
	if st := f.vaultStatus(); st != "" {
		t.Errorf("vault status %q; want clean", st)
	}
	if r := f.hook("pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"})); r != silent {
		t.Errorf("Edit after the agent's edit: %+v; want it to pass", r)
	}
}

// TestParallelCallsKeepTheirOwnNotes checks that two shell calls running at
// once (an agent's sub-agents), each with its tool_use_id, are noted apart:
// the one ending first, having changed nothing, does not take the other's
// note, whose PostToolUse then commits the note it changed as the agent's
// edit.
func TestParallelCallsKeepTheirOwnNotes(t *testing.T) {
	f := newFixture(t)
	f.working("Login page")
	a, b := bash("python3 write_notes.py"), bash("go test ./...")
	a["tool_use_id"], b["tool_use_id"] = "toolu_01A", "toolu_01B"
	for _, c := range []map[string]any{a, b} {
		if r := f.hook("pre-tool-use", c); r != silent {
			t.Fatalf("pre-tool-use %s: %+v; want the call to pass", c["tool_use_id"], r)
		}
	}
	head := strings.TrimSpace(git(t, f.Vault, "rev-parse", "HEAD"))
	if r := f.hook("post-tool-use", b); r != silent {
		t.Errorf("post-tool-use B: %+v; want exit 0 and no output", r)
	}
	p := f.notePath("session-current-state.md") // what call A's script does, after B ended
	writeFile(t, p, readFile(t, p)+"- a line the agent's script wrote\n")
	if r := f.hook("post-tool-use", a); r != silent {
		t.Errorf("post-tool-use A: %+v; want exit 0 and no output", r)
	}
	log := git(t, f.Vault, "log", "--format=%s", head+"..HEAD")
	if !strings.Contains(log, "agent-edit: demo/session-current-state.md changed by the agent's Bash call") {
		t.Errorf("vault commits since the calls:\n%s\nwant the agent's edit of the note", log)
	}
	if st := f.vaultStatus(); strings.Contains(st, "session-current-state.md") {
		t.Errorf("vault status %q; want the note committed (the command history is committed in batches)", st)
	}
}

// TestPreCompactRecordsARecoveryPoint checks that PreCompact, silent itself,
// leaves a recovery point `sessionvault recovery check` reports with the
// manual compaction's instructions; without a session it records nothing.
func TestPreCompactRecordsARecoveryPoint(t *testing.T) {
	f := newFixture(t)
	if r := f.hook("pre-compact", map[string]any{"trigger": "auto", "custom_instructions": ""}); r != silent {
		t.Errorf("no session: %+v; want exit 0 and no output", r)
	}
	if out := f.sv("recovery", "check"); out != "no session needs recovery\n" {
		t.Errorf("no session: recovery check says %q", out)
	}
	f.working("Login page")
	if r := f.hook("pre-compact", map[string]any{"trigger": "manual", "custom_instructions": "keep the auth decisions"}); r != silent {
		t.Errorf("session: %+v; want exit 0 and no output", r)
	}
	out := f.sv("recovery", "check")
	for _, want := range []string{"## Recovery Required: compaction", "- **Objective**: Login page", "keep the auth decisions"} {
		if !strings.Contains(out, want) {
			t.Errorf("recovery check lacks %q:\n%s", want, out)
		}
	}
}

// stopAnswer is Stop's stdout JSON.
type stopAnswer struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// stop runs the Stop hook and decodes its answer (zero when it printed
// nothing); any other output or exit code fails the test.
func (f *fixture) stop(active bool) stopAnswer {
	f.t.Helper()
	r := f.hook("stop", map[string]any{"stop_hook_active": active})
	var a stopAnswer
	if r.Exit != 0 || r.Stderr != "" {
		f.t.Errorf("stop: %+v; want exit 0 and nothing on stderr", r)
	}
	if r.Stdout != "" {
		dec := json.NewDecoder(strings.NewReader(r.Stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil || !strings.HasSuffix(r.Stdout, "}\n") {
			f.t.Errorf("stop printed %q, not one JSON object: %v", r.Stdout, err)
		}
	}
	return a
}

// TestStopHoldsTheAgentWhileEndMustsAreOpen checks Stop through a session:
// no session lets the agent stop; open MUST items of the end checklist block
// it once with {"decision":"block"} and a reason listing each item with the
// command to record it and how to end; with stop_hook_active it lets go;
// once an update and a code commit were seen, and after the session ended,
// it lets the agent stop.
func TestStopHoldsTheAgentWhileEndMustsAreOpen(t *testing.T) {
	f := newFixture(t)
	if a := f.stop(false); a != (stopAnswer{}) {
		t.Errorf("no session: %+v; want no answer", a)
	}
	f.working("Login page")
	a := f.stop(false)
	sv := regexp.QuoteMeta("`sessionvault --vault " + f.Vault)
	if a.Decision != "block" {
		t.Errorf("end MUSTs open: decision %q; want block", a.Decision)
	}
	for _, want := range []string{
		`^Session \d{4}-\d\d-\d\d-session-01 has 2 open MUST item\(s\) in its end checklist:\n`,
		`\n- e-1 Record the session's progress as updates: ` + sv + ` update "\.\.\."` + "`" + ` \(the Updates section\)\n`,
		`\n- e-2 Commit the code changes of the session: ` + "`git commit`" + ` in the code repository \(the engine sees a commit made since the session started; or run ` + sv + ` evidence record e-2 --sha HEAD --dir ` + regexp.QuoteMeta(f.Code) + "`" + `\)`,
		`\nThen end the session: ` + sv + ` end --summary "\.\.\." --next "\.\.\."` + "`\\.$",
	} {
		if !regexp.MustCompile(want).MatchString(a.Reason) {
			t.Errorf("end MUSTs open: the reason lacks %q:\n%s", want, a.Reason)
		}
	}
	if a := f.stop(true); a != (stopAnswer{}) {
		t.Errorf("stop_hook_active: %+v; want no answer (it blocked once already)", a)
	}

	// The update is the evidence of e-1, the commit in the code repository
	// that of e-2: the engine sees both, nothing is recorded by hand.
	f.sv("update", "wired the form")
	if a := f.stop(false); a.Decision != "block" || !strings.Contains(a.Reason, "has 1 open MUST item(s)") || strings.Contains(a.Reason, "e-1") {
		t.Errorf("after an update: %+v; want a block for e-2 alone", a)
	}
	git(t, f.Code, "commit", "-q", "--allow-empty", "-m", "the form")
	if a := f.stop(false); a != (stopAnswer{}) {
		t.Errorf("after a commit in the code repository: %+v; want no answer", a)
	}
	f.sv("end", "--summary", "form done")
	if a := f.stop(false); a != (stopAnswer{}) {
		t.Errorf("session ended: %+v; want no answer", a)
	}
}

// TestHooksWithATamperedState checks every hook after the agent's sed turned
// the sealed mode off behind sessionvault's back: PreToolUse denies all but
// reading, naming the change and a person's remedy; Stop blocks, since the
// end checklist cannot be trusted (but lets go with stop_hook_active);
// SessionStart says so instead of the summary; until a person runs
// `sessionvault accept`.
func TestHooksWithATamperedState(t *testing.T) {
	f := newFixture(t)
	f.working("Login page")
	f.tamper()
	accept := "`sessionvault --vault " + f.Vault + " accept`"

	r := f.hook("pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"}))
	if r.Exit != 2 || !strings.Contains(r.Stderr, "changed outside sessionvault") || !strings.Contains(r.Stderr, `mode is "disabled" in the note but "coding"`) ||
		!strings.Contains(r.Stderr, "`git -C "+f.Vault+" diff -- demo/session-current-state.md; git -C "+f.Vault+" log -p -3 -- demo/session-current-state.md`") || !strings.Contains(r.Stderr, accept) {
		t.Errorf("Edit: %+v; want exit 2 naming the change, how to review it (uncommitted and committed) and accept", r)
	}
	if r := f.hook("pre-tool-use", bash("sessionvault update 'sneaky'")); r.Exit != 2 {
		t.Errorf("sessionvault's own command: %+v; want it denied until a person accepts", r)
	}
	if r := f.hook("pre-tool-use", call("Read", map[string]any{"file_path": "main.go"})); r != silent {
		t.Errorf("Read: %+v; want it to pass", r)
	}
	if a := f.stop(false); a.Decision != "block" || !strings.Contains(a.Reason, "changed outside sessionvault") ||
		!strings.Contains(a.Reason, "The end checklist cannot be checked until a person reviews the change and runs "+accept+" (the agent may not).") {
		t.Errorf("Stop: %+v; want a block saying the checklist cannot be trusted", a)
	}
	if a := f.stop(true); a != (stopAnswer{}) {
		t.Errorf("Stop with stop_hook_active: %+v; want no answer", a)
	}
	ctx := f.sessionStart("startup")
	if !strings.HasPrefix(ctx, "sessionvault: the session state cannot be trusted: ") || !strings.Contains(ctx, "Editing tools are denied until a person reviews the change and runs "+accept) || strings.Contains(ctx, "Objective") {
		t.Errorf("SessionStart context: %q", ctx)
	}

	f.sv("accept")
	if r := f.hook("pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"})); r != silent {
		t.Errorf("Edit after a person accepted: %+v; want it to pass", r)
	}
}

// TestHooksWithANoteAPersonBroke checks every hook while the current-state
// note's front matter has an unclosed quote (a slip in an editor): editing
// is denied with the note and line and how to recover, reading passes,
// SessionStart tells the agent to ask a person, PostToolUse and PreCompact
// warn without blocking (exit 1), Stop lets the agent stop; nothing is
// committed and the note is left as the person left it. (Each answer waits
// about two seconds for a note caught half-saved to settle, so the events
// run in parallel.)
func TestHooksWithANoteAPersonBroke(t *testing.T) {
	f := newFixture(t)
	f.working("Login page")
	f.breakNote()
	broken := readFile(t, f.notePath("session-current-state.md"))
	head := git(t, f.Vault, "rev-parse", "HEAD")
	const parse = `demo/session-current-state.md:\d+: front matter is not valid YAML`
	accept := regexp.QuoteMeta("`sessionvault --vault " + f.Vault + " accept`")
	cases := []struct {
		name, event string
		fields      map[string]any
		exit        int
		stdout      string // a pattern; "" = nothing
		stderr      string // a pattern; "" = nothing
	}{
		{"Edit is denied", "pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"}), 2, "",
			`^sessionvault blocked this tool call: the session state cannot be read: ` + parse + `.*Fix the note, or restore it as last committed \(` + "`" + regexp.QuoteMeta("git -C "+f.Vault+" checkout -- demo/session-current-state.md") + "`" + `\); then a person runs ` + accept + `; until then only read-only tools run\n$`},
		{"a writing Bash call is denied", "pre-tool-use", bash("go build ./..."), 2, "", parse},
		{"Read passes", "pre-tool-use", call("Read", map[string]any{"file_path": "main.go"}), 0, "", ""},
		{"a reading Bash call passes", "pre-tool-use", bash("git log -1"), 0, "", ""},
		{"SessionStart asks for a person", "session-start", map[string]any{"source": "startup"}, 0,
			`^\{"hookSpecificOutput":\{"additionalContext":"sessionvault: the session state cannot be read \(` + parse + `.*\)\. Ask a person to fix it\.","hookEventName":"SessionStart"\}\}\n$`, ""},
		// (An Edit: a Bash call would wait twice as long, once more for its
		// command history, which says nothing while the state does not read.)
		{"PostToolUse warns", "post-tool-use", call("Edit", map[string]any{"file_path": "main.go"}, map[string]any{"tool_response": map[string]any{"filePath": "main.go"}}), 1, "",
			`^sessionvault: the tool call was not recorded as evidence: ` + parse},
		{"PreCompact warns", "pre-compact", map[string]any{"trigger": "auto"}, 1, "", `^sessionvault: the recovery point was not recorded: ` + parse},
		{"Stop lets the agent stop", "stop", map[string]any{"stop_hook_active": false}, 0, "", ""},
	}
	t.Run("events", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				r := f.hook(c.event, c.fields)
				if r.Exit != c.exit || !matches(c.stdout, r.Stdout) || !matches(c.stderr, r.Stderr) {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr %q", c.event, r.Exit, r.Stdout, r.Stderr, c.exit, c.stdout, c.stderr)
				}
			})
		}
	})
	if got := readFile(t, f.notePath("session-current-state.md")); got != broken {
		t.Errorf("the broken note was changed:\n%s", got)
	}
	if got := git(t, f.Vault, "rev-parse", "HEAD"); got != head {
		t.Errorf("a commit was made while the note was broken")
	}
}

// matches reports whether s matches the pattern, or is empty for "".
func matches(pattern, s string) bool {
	if pattern == "" {
		return s == ""
	}
	return regexp.MustCompile(pattern).MatchString(s)
}
