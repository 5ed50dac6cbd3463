package mcpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// A whole session through tools/call — session_start, session_update,
// record_decision, record_blocker, resolve_blocker, session_status,
// session_end: each mutating call is one commit whose id the result
// returns, and the notes an agent or a person reads afterwards hold what
// was recorded.
func TestSessionLifecycle(t *testing.T) {
	e := newEnv(t)
	before := e.headCommit()
	state := func() string { return e.note("demo/session-current-state.md") }

	start := e.ok("session_start", map[string]any{"objective": "Ship the parser", "epic": "Parsing", "linear": "ENG-12", "branch": "feat/parser", "commit": "abc1234"})
	if start["session"] != "2026-11-23-session-01" || start["id"] != start["session"] || start["commit"] != e.headCommit() || start["repeat"] != nil {
		t.Fatalf("session_start = %v (HEAD %s)", start, e.headCommit())
	}
	st := state()
	for k, want := range map[string]string{"status": "active", "session": "2026-11-23-session-01", "objective": "Ship the parser", "epic": "Parsing",
		"linear": "ENG-12", "branch": "feat/parser", "commit": "abc1234", "phase": "INIT", "started": "2026-11-23T10:00:00Z"} {
		if got := prop(st, k); got != want {
			t.Errorf("after session_start, %s = %q, want %q", k, got, want)
		}
	}
	if section(st, "Objective") != "Ship the parser" || !strings.Contains(section(st, "Start checklist"), "- [ ] **MUST** Read the current state") {
		t.Fatalf("the current state after session_start:\n%s", st)
	}

	e.advance(time.Minute)
	up := e.ok("session_update", map[string]any{"message": "Lexer done", "progress": 40, "type": "milestone", "tags": []string{"lexer", "parser"}})
	if up["id"] != "u-1" || up["session"] != "2026-11-23-session-01" || up["commit"] != e.headCommit() {
		t.Fatalf("session_update = %v", up)
	}
	if got := section(state(), "Updates"); got != "- 2026-11-23T10:01:00Z · milestone · 40% · Lexer done #lexer #parser ^u-1" {
		t.Fatalf("the Updates section = %q", got)
	}
	// at: an update recorded after the fact, in the vault's form.
	if up2 := e.ok("session_update", map[string]any{"message": "Noted late", "at": "2026-11-23T10:01:00Z"}); up2["id"] != "u-2" {
		t.Fatalf("session_update with at = %v", up2)
	}

	dec := e.ok("record_decision", map[string]any{"title": "Hand-written parser", "choice": "recursive descent", "rationale": "better errors",
		"alternatives": []string{"yacc", "peg"}, "impact": "high", "category": "architecture"})
	if dec["id"] != "d-1" || dec["commit"] != e.headCommit() {
		t.Fatalf("record_decision = %v", dec)
	}
	if d := e.note("demo/decisions/2026-11-23-hand-written-parser.md"); !strings.Contains(d, "recursive descent") || !strings.Contains(d, "better errors") || !strings.Contains(d, "yacc") {
		t.Fatalf("the decision's own note:\n%s", d)
	}
	if !strings.Contains(e.note("demo/session-decisions.md"), "[[demo/decisions/2026-11-23-hand-written-parser|Hand-written parser]] — recursive descent") {
		t.Fatalf("session-decisions.md lacks the decision:\n%s", e.note("demo/session-decisions.md"))
	}

	blk := e.ok("record_blocker", map[string]any{"description": "Grammar ambiguity", "severity": "high"})
	if blk["id"] != "b-1" {
		t.Fatalf("record_blocker = %v", blk)
	}
	if got := section(state(), "Blockers"); got != "- [ ] 2026-11-23T10:01:00Z · **high** · Grammar ambiguity ^b-1" {
		t.Fatalf("the Blockers section = %q", got)
	}
	if res := e.ok("resolve_blocker", map[string]any{"blocker_id": "b-1", "resolution": "precedence table"}); res["id"] != "b-1" {
		t.Fatalf("resolve_blocker = %v", res)
	}
	if got := section(state(), "Blockers"); !strings.HasPrefix(got, "- [x] ") || !strings.Contains(got, "precedence table") {
		t.Fatalf("the resolved blocker = %q", got)
	}

	s := obj(e.ok("session_status", nil)["state"])
	if s["status"] != "active" || s["objective"] != "Ship the parser" || s["progress"] != float64(40) || len(list(s["updates"])) != 2 ||
		len(list(s["decisions"])) != 1 || obj(list(s["blockers"])[0])["status"] != "resolved" {
		b, _ := json.Marshal(s)
		t.Fatalf("session_status = %s", b)
	}

	end := e.ok("session_end", map[string]any{"summary": "Parser shipped", "next": []string{"fuzz it", "benchmark"}})
	if end["session"] != "2026-11-23-session-01" || end["id"] != end["session"] || end["commit"] != e.headCommit() {
		t.Fatalf("session_end = %v", end)
	}
	if st := state(); prop(st, "status") != "idle" || prop(st, "last_session") != "[[demo/sessions/2026-11-23-session-01|2026-11-23-session-01]]" {
		t.Fatalf("the current state after session_end:\n%s", st)
	}
	archived := e.note("demo/sessions/2026-11-23-session-01.md")
	if !strings.Contains(archived, "Parser shipped") || !strings.Contains(archived, "Lexer done") {
		t.Fatalf("the archived session:\n%s", archived)
	}
	hist := e.note("demo/session-history.md")
	for _, want := range []string{"### [[demo/sessions/2026-11-23-session-01|2026-11-23-session-01]]", "- **Summary:** Parser shipped", "- **Progress:** 0% → 40%", "- **Next steps:** fuzz it; benchmark"} {
		if !strings.Contains(hist, want) {
			t.Errorf("session-history.md lacks %q:\n%s", want, hist)
		}
	}
	if s := obj(e.ok("session_status", nil)["state"]); s["status"] != "idle" {
		t.Fatalf("session_status after the end = %v", s)
	}

	want := []string{"start: Ship the parser", "update: Lexer done", "update: Noted late", "decide: Hand-written parser", "block: b-1 Grammar ambiguity",
		"resolve: b-1 precedence table", "end: Parser shipped"}
	if got := e.subjects(before); !slices.Equal(got, want) {
		t.Fatalf("commits = %q\nwant one per mutating call: %q", got, want)
	}
	e.clean()
}

// A session that continues an archived one, and a forced start over an
// active one: session_start's continue and force arguments.
func TestSessionStartContinueAndForce(t *testing.T) {
	e := newEnv(t)
	first := e.ok("session_start", map[string]any{"objective": "First"})["session"]
	e.ok("session_end", map[string]any{"summary": "half done"})
	second := e.ok("session_start", map[string]any{"objective": "Second", "continue": first})
	if second["session"] != "2026-11-23-session-02" || prop(e.note("demo/session-current-state.md"), "continues") != fmt.Sprintf("[[demo/sessions/%s|%s]]", first, first) {
		t.Fatalf("session_start continue = %v\n%s", second, e.note("demo/session-current-state.md"))
	}
	text := e.fail("session_start", map[string]any{"objective": "Third"}, "E1601 SESSION_ALREADY_ACTIVE")
	noCLI(t, "a start over an active session", text)
	if !strings.Contains(text, "`session_end`") {
		t.Errorf("a start over an active session does not name session_end:\n%s", text)
	}
	third := e.follow(text, "session_start")
	if third.isErr || third.out["session"] != "2026-11-23-session-03" {
		t.Fatalf("session_start with force, as the error names it: %s", third.text)
	}
	if e.note("demo/sessions/2026-11-23-session-02.md") == "" {
		t.Fatalf("the abandoned session was not archived")
	}
	e.fail("session_start", map[string]any{"objective": "Fourth", "continue": "2026-11-23-session-99", "force": true}, "E1600 SESSION_NOT_FOUND")
	e.clean()
}

// A call repeated with the op_id of a call that took effect does nothing
// again: the same result with repeat true, no new commit, the notes
// unchanged — for session_start, session_update, record_decision,
// record_blocker, resolve_blocker, set_mode, record_evidence,
// advance_phase and session_end. An op_id whose call failed is free to use
// again; a malformed op_id is refused naming the argument.
func TestOpIDRepeatsDoNothingAgain(t *testing.T) {
	e := newEnv(t)
	steps := []struct {
		tool string
		args map[string]any
		id   string
	}{
		{"session_start", map[string]any{"objective": "Once", "op_id": "op-start"}, "2026-11-23-session-01"},
		{"session_update", map[string]any{"message": "once", "progress": 10, "op_id": "op-update"}, "u-1"},
		{"record_decision", map[string]any{"title": "T", "choice": "C", "rationale": "R", "op_id": "op-decide"}, "d-1"},
		{"record_blocker", map[string]any{"description": "stuck", "op_id": "op-block"}, "b-1"},
		{"resolve_blocker", map[string]any{"blocker_id": "b-1", "op_id": "op-resolve"}, "b-1"},
		{"set_mode", map[string]any{"mode": "planning", "op_id": "op-mode"}, "planning"},
		{"record_evidence", map[string]any{"item": "c-2", "op_id": "op-evidence"}, "c-2"},
		{"session_end", map[string]any{"summary": "done", "op_id": "op-end"}, "2026-11-23-session-01"},
	}
	for _, s := range steps {
		first := e.ok(s.tool, s.args)
		if first["id"] != s.id || first["repeat"] != nil {
			t.Fatalf("%s = %v, want id %s", s.tool, first, s.id)
		}
		head, notes := e.headCommit(), e.note("demo/session-current-state.md")
		again := e.ok(s.tool, s.args)
		if again["repeat"] != true || again["id"] != first["id"] || again["commit"] != first["commit"] || again["session"] != "2026-11-23-session-01" {
			t.Errorf("%s repeated = %v, want the first result %v with repeat true", s.tool, again, first)
		}
		if e.headCommit() != head || e.note("demo/session-current-state.md") != notes {
			t.Errorf("%s repeated with its op_id changed the vault", s.tool)
		}
	}
	// Repeating a start whose session has ended since still does nothing.
	if again := e.ok("session_start", steps[0].args); again["repeat"] != true || prop(e.note("demo/session-current-state.md"), "status") != "idle" {
		t.Fatalf("session_start repeated after the end = %v", again)
	}

	e.ok("session_start", map[string]any{"objective": "Retry"})
	e.fail("session_update", map[string]any{"message": "late", "progress": 120, "op_id": "op-retry"}, "E1612 UPDATE_VALIDATION_FAILED")
	if out := e.ok("session_update", map[string]any{"message": "late", "progress": 20, "op_id": "op-retry"}); out["repeat"] != nil || out["id"] != "u-1" {
		t.Fatalf("a retry with the op_id of a failed call = %v", out)
	}
	text := e.fail("session_update", map[string]any{"message": "x", "op_id": "not an id!"}, "E1612 UPDATE_VALIDATION_FAILED")
	if !strings.Contains(text, "argument op_id") {
		t.Errorf("a malformed op_id does not name the argument:\n%s", text)
	}
	noCLI(t, "a malformed op_id", text)
	e.clean()
}

// Mistakes come back as tool errors (isError) whose text starts with the
// stable code and name and says what to do in tool calls, never CLI
// flags; none of them changes the vault, and the server keeps serving.
func TestToolErrorsCarryCodeAndRemedy(t *testing.T) {
	e := newEnv(t)

	// No session yet.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"session_update", map[string]any{"message": "too early"}},
		{"record_decision", map[string]any{"title": "T", "choice": "C", "rationale": "R"}},
		{"record_blocker", map[string]any{"description": "x"}},
		{"resolve_blocker", map[string]any{"blocker_id": "b-1"}},
		{"session_end", nil},
		{"session_recover", nil},
		{"advance_phase", nil},
		{"record_evidence", map[string]any{"item": "c-2"}},
	} {
		text := e.fail(c.tool, c.args, "E1602 NO_ACTIVE_SESSION")
		noCLI(t, c.tool+" without a session", text)
		if !strings.Contains(text, "`session_start {\"objective\": \"...\"}`") {
			t.Errorf("%s without a session does not name session_start:\n%s", c.tool, text)
		}
	}
	e.fail("heartbeat", nil, "E1602 NO_ACTIVE_SESSION")
	text := e.fail("session_update", map[string]any{"message": "too early"}, "E1602 NO_ACTIVE_SESSION")
	if out := e.follow(text, "session_start"); out.isErr || out.out["session"] == "" {
		t.Fatalf("session_start as the error names it: %s", out.text)
	}

	head := e.headCommit()
	for _, c := range []struct {
		tool       string
		args       map[string]any
		code, says string
	}{
		// The SDK's own argument validation, given the stable code.
		{"session_update", map[string]any{"message": "x", "progress": "abc"}, "E1612 UPDATE_VALIDATION_FAILED", "invalid argument: validating"},
		{"session_start", map[string]any{"objective": 7}, "E1612 UPDATE_VALIDATION_FAILED", "invalid argument: validating"},
		{"session_update", map[string]any{"message": "x", "progres": 5}, "E1612 UPDATE_VALIDATION_FAILED", `unexpected additional properties ["progres"]`},
		{"session_update", map[string]any{"message": "x", "progress": 120}, "E1612 UPDATE_VALIDATION_FAILED", "argument progress 120 is out of range"},
		{"session_update", map[string]any{"message": ""}, "E1612 UPDATE_VALIDATION_FAILED", "message must not be empty"},
		{"session_update", map[string]any{"message": "x", "type": "gossip"}, "E1612 UPDATE_VALIDATION_FAILED", "gossip"},
		{"session_update", map[string]any{"message": "x", "at": "yesterday"}, "E1612 UPDATE_VALIDATION_FAILED", `at: "yesterday" is not a time`},
		{"session_update", map[string]any{"message": "x", "at": "2026-11-24T10:00:00Z"}, "E1612 UPDATE_VALIDATION_FAILED", "future"},
		{"record_decision", map[string]any{"title": "T", "choice": "C", "rationale": "R", "impact": "huge"}, "E1612 UPDATE_VALIDATION_FAILED", "huge"},
		{"record_blocker", map[string]any{"description": "x", "severity": "dire"}, "E1612 UPDATE_VALIDATION_FAILED", "dire"},
		{"resolve_blocker", map[string]any{"blocker_id": "b-9"}, "E1605 BLOCKER_NOT_FOUND", "`session_status`"},
		{"set_mode", map[string]any{"mode": "napping"}, "E1612 UPDATE_VALIDATION_FAILED", "use analysis, planning, coding or disabled"},
		{"set_mode", map[string]any{"mode": "disabled"}, "E1612 UPDATE_VALIDATION_FAILED", "a person's escape hatch"},
		{"validate_gate", map[string]any{"phase": "middle"}, "E1612 UPDATE_VALIDATION_FAILED", `phase "middle": use start or end`},
		{"session_recover", nil, "E1632 SESSION_NOT_CRASHED", "nothing to recover"},
		{"check_recovery", map[string]any{"mark_recovered": "2026-01-01-session-01"}, "E1631 RECOVERY_SESSION_NOT_FOUND", "(see `check_recovery`)"},
	} {
		text := e.fail(c.tool, c.args, c.code)
		if !strings.Contains(text, c.says) {
			t.Errorf("%s %v:\n%s\nwant it to say %q", c.tool, c.args, text, c.says)
		}
		noCLI(t, fmt.Sprintf("%s %v", c.tool, c.args), text)
	}
	if h := e.headCommit(); h != head {
		t.Fatalf("refused calls made commits: %v", e.subjects(head))
	}

	// Errors that need something recorded first.
	e.ok("record_decision", map[string]any{"title": "Once", "choice": "C", "rationale": "R"})
	e.fail("record_decision", map[string]any{"title": "Once", "choice": "D", "rationale": "R"}, "E1604 DUPLICATE_DECISION_TITLE")
	e.ok("record_blocker", map[string]any{"description": "x"})
	e.ok("resolve_blocker", map[string]any{"blocker_id": "b-1"})
	e.fail("resolve_blocker", map[string]any{"blocker_id": "b-1"}, "E1606 BLOCKER_ALREADY_RESOLVED")

	// Still serving.
	if out := e.ok("session_update", map[string]any{"message": "after the errors"}); out["id"] != "u-1" {
		t.Fatalf("session_update after the errors = %v", out)
	}
	e.clean()
}

// The start and end gates: what the engine observes counts by itself (the
// objective, the branch check run in the code repository, the state
// session_status hands over, an update, a commit made since the start);
// validate_gate lists what is still missing with the call that meets it;
// record_evidence checks file, section, run and commit evidence and refuses
// a person's item; advance_phase fails a gate (logging the violations), then
// passes it: INIT → WORKING → COMPLETE.
func TestGatesEvidenceAndPhases(t *testing.T) {
	e := newEnvWith(t, vaultSpec{protocol: strictProtocol})
	e.ok("session_start", map[string]any{"objective": "Gates"})
	checklist := section(e.note("demo/session-current-state.md"), "Start checklist")
	for _, want := range []string{"- [x] **MUST** State the session's objective · **evidence:** observed: start --objective 10:00 ^c-2",
		"- [x] **MUST** Confirm the working branch is not `main` · **evidence:** observed: start, `test \"$(git rev-parse --abbrev-ref HEAD)\" != main` exit 0 10:00 ^c-3",
		"- [x] **SHOULD** Note the starting commit · **evidence:** observed: starting commit " + e.head[:12] + " 10:00 ^c-4"} {
		if !strings.Contains(checklist, want) {
			t.Errorf("the start checklist lacks %q:\n%s", want, checklist)
		}
	}

	gate := e.ok("validate_gate", map[string]any{"phase": "Start"})
	missing := list(gate["missing"])
	if gate["passed"] != false || gate["phase"] != "start" || len(missing) != 1 {
		t.Fatalf("validate_gate start = %v", gate)
	}
	if do := obj(missing[0])["do"]; do != "read the current state: call `session_status` (Claude Code's SessionStart hook hands it over by itself)" {
		t.Errorf("the remedy of c-1 = %q", do)
	}

	head := e.headCommit()
	text := e.fail("advance_phase", nil, "E1608 GATE_NOT_PASSED")
	noCLI(t, "a failed start gate", text)
	if !strings.Contains(text, "1 MUST item(s) lack evidence") || !strings.Contains(text, "call `session_status`") {
		t.Fatalf("advance_phase through a failing gate:\n%s", text)
	}
	if prop(e.note("demo/session-current-state.md"), "phase") != "VIOLATION" || !strings.Contains(e.note("demo/session-violations-log.md"), "| START | MUST Read the current state (`session-current-state`) (c-1) | CRITICAL |") {
		t.Fatalf("the failed gate was not logged:\n%s", e.note("demo/session-violations-log.md"))
	}
	if got := e.subjects(head); !slices.Equal(got, []string{"violation: 1 unmet MUST(s) at the start gate"}) {
		t.Fatalf("the failed gate's commits = %q", got)
	}
	viol, err := e.read("session://violations")
	if err != nil || viol != e.note("demo/session-violations-log.md") {
		t.Fatalf("session://violations = %q, %v", viol, err)
	}

	// Evidence, refused: an argument the item needs is a usage error; what
	// does not hold names why.
	for _, c := range []struct {
		args      map[string]any
		code, say string
	}{
		{map[string]any{"item": "c-1"}, "E1693 INVALID_COMMAND", "record it with argument file"},
		{map[string]any{"item": "c-1", "file": "session-history.md"}, "E1611 EVIDENCE_NOT_VERIFIED", "the protocol asks for session-current-state.md"},
		{map[string]any{"item": "c-1", "file": "nope.md"}, "E1611 EVIDENCE_NOT_VERIFIED", "cannot read nope.md"},
		{map[string]any{"item": "c-3"}, "E1693 INVALID_COMMAND", "record it with argument run"},
		{map[string]any{"item": "c-4"}, "E1693 INVALID_COMMAND", "record it with argument sha"},
		{map[string]any{"item": "c-4", "sha": "deadbeef"}, "E1611 EVIDENCE_NOT_VERIFIED", "commit deadbeef does not exist"},
		{map[string]any{"item": "x-1"}, "E1612 UPDATE_VALIDATION_FAILED", "is not a checklist item id"},
		{map[string]any{"item": "c-9"}, "E1612 UPDATE_VALIDATION_FAILED", "has no checklist item c-9"},
		{map[string]any{"item": "e-3"}, "E1611 EVIDENCE_NOT_VERIFIED", "a person's tick"},
	} {
		text := e.fail("record_evidence", c.args, c.code)
		if !strings.Contains(text, c.say) {
			t.Errorf("record_evidence %v:\n%s\nwant it to say %q", c.args, text, c.say)
		}
		noCLI(t, fmt.Sprintf("record_evidence %v", c.args), text)
	}

	// The remedy called as written: the state handed over is observed.
	if r := e.follow(obj(missing[0])["do"].(string), "session_status"); r.isErr {
		t.Fatalf("the remedy of c-1: %s", r.text)
	}
	if g := e.ok("validate_gate", map[string]any{"phase": "start"}); g["passed"] != true || g["missing"] != nil {
		t.Fatalf("validate_gate start after session_status = %v", g)
	}
	// Recorded evidence still works, by a file and by a short commit id.
	if r := e.ok("record_evidence", map[string]any{"item": "c-1", "file": "session-current-state.md"}); r["id"] != "c-1" {
		t.Fatalf("record_evidence c-1 = %v", r)
	}
	if r := e.ok("record_evidence", map[string]any{"item": "c-4", "sha": e.head[:10]}); r["id"] != "c-4" {
		t.Fatalf("record_evidence c-4 = %v", r)
	}
	checklist = section(e.note("demo/session-current-state.md"), "Start checklist")
	for _, want := range []string{"- [x] **MUST** Read the current state (`session-current-state`) · **evidence:** file demo/session-current-state.md sha256:",
		"- [x] **SHOULD** Note the starting commit · **evidence:** commit " + e.head + " ^c-4", "- [ ] **SHOULD** Read the latest entry"} {
		if !strings.Contains(checklist, want) {
			t.Errorf("the start checklist lacks %q:\n%s", want, checklist)
		}
	}
	var cl struct{ Start, End []map[string]any }
	js, err := e.read("session://checklist")
	if err != nil || json.Unmarshal([]byte(js), &cl) != nil || len(cl.Start) != 5 || cl.Start[3]["done"] != true || len(cl.End) != 4 {
		t.Fatalf("session://checklist = %s, %v", js, err)
	}
	if a := e.ok("advance_phase", nil); a["id"] != "WORKING" {
		t.Fatalf("advance_phase = %v", a)
	}

	// The end gate: the update and a commit in the code repository are seen.
	text = e.fail("advance_phase", nil, "E1608 GATE_NOT_PASSED")
	if !strings.Contains(text, "the end gate") || !strings.Contains(text, "e-1") || !strings.Contains(text, "e-2") {
		t.Fatalf("advance_phase through the end gate:\n%s", text)
	}
	e.fail("record_evidence", map[string]any{"item": "e-1"}, "E1611 EVIDENCE_NOT_VERIFIED") // no updates yet
	e.ok("session_update", map[string]any{"message": "did it"})
	gitIn(t, e.code, "commit", "-q", "--allow-empty", "-m", "the work")
	if g := e.ok("validate_gate", map[string]any{"phase": "end"}); g["passed"] != true {
		t.Fatalf("validate_gate end = %v", g)
	}
	// A failed end gate left the session in VIOLATION: the next advance
	// goes back through the start gate, the one after through the end gate.
	for _, want := range []string{"WORKING", "COMPLETE"} {
		if a := e.ok("advance_phase", nil); a["id"] != want {
			t.Fatalf("advance_phase = %v, want %s", a, want)
		}
	}
	text = e.fail("advance_phase", nil, "E1612 UPDATE_VALIDATION_FAILED")
	if !strings.Contains(text, "nothing to advance; end it with `session_end`") {
		t.Fatalf("advance_phase past COMPLETE:\n%s", text)
	}
	e.ok("session_end", map[string]any{"summary": "gated"})
	e.clean()
}

// strictProtocol makes every start item of the default protocol a MUST.
const strictProtocol = `# Session protocol

## Session start

| Req | Step | Evidence |
|-----|------|----------|
| MUST | Read the current state (` + "`session-current-state`" + `) | ` + "`file: session-current-state.md`" + ` |
| MUST | State the session's objective | ` + "`section: Objective`" + ` |
| MUST | Confirm the working branch is not ` + "`main`" + ` | ` + "`run: test \"$(git rev-parse --abbrev-ref HEAD)\" != main`" + ` |
| SHOULD | Note the starting commit | ` + "`commit`" + ` |
| SHOULD | Read the latest entry of ` + "`session-history`" + ` | ` + "`file: session-history.md`" + ` |

## Session end

| Req | Step | Evidence |
|-----|------|----------|
| MUST | Record the session's progress as updates | ` + "`section: Updates`" + ` |
| MUST | Commit the code changes of the session | ` + "`commit`" + ` |
| SHOULD | Resolve or hand over every open blocker | ` + "`person`" + ` |
| MAY | Record lessons learned as a decision | ` + "`section: Decisions`" + ` |
`

// A session whose last sign of life is older than the heartbeat timeout is
// crashed: check_recovery and session_status say so, session_start is
// refused naming session_recover, and session_recover as named resumes it
// with a recovery entry; after that nothing needs recovery.
func TestCrashedSessionRecovers(t *testing.T) {
	e := newEnv(t)
	e.ok("session_start", map[string]any{"objective": "Crash"})
	e.ok("session_update", map[string]any{"message": "before the crash", "progress": 30})
	if rec := e.ok("check_recovery", nil); rec["crashed"] != false || rec["needs_recovery"] != false || rec["recover"] != nil {
		t.Fatalf("check_recovery of a live session = %v", rec)
	}
	e.advance(31 * time.Minute)

	rec := e.ok("check_recovery", map[string]any{"include_history": true})
	advice, _ := rec["recover"].(string)
	if rec["crashed"] != true || rec["session"] != "2026-11-23-session-01" || rec["last_sign_of_life"] != "2026-11-23T10:00:00Z" || rec["needs_recovery"] != true {
		t.Fatalf("check_recovery = %v", rec)
	}
	noCLI(t, "check_recovery's advice", advice)
	sessions := list(rec["sessions"])
	if len(sessions) != 1 || obj(sessions[0])["recovery_type"] != "crash" {
		t.Fatalf("check_recovery sessions = %v", sessions)
	}
	prompt, _ := obj(sessions[0])["resume_prompt"].(string)
	noCLI(t, "the recovery prompt", prompt)
	if !strings.Contains(prompt, "before the crash") || !strings.Contains(prompt, "`check_recovery {\"mark_recovered\": \"2026-11-23-session-01\"}`") {
		t.Fatalf("the recovery prompt:\n%s", prompt)
	}
	if s := obj(e.ok("session_status", nil)["state"]); s["status"] != "crashed" {
		t.Fatalf("session_status of a crashed session = %v", s["status"])
	}
	text := e.fail("session_start", map[string]any{"objective": "Over it"}, "E1603 SESSION_CRASHED")
	noCLI(t, "a start over a crashed session", text)
	e.fail("session_recover", map[string]any{"session": "2026-11-23-session-07"}, "E1600 SESSION_NOT_FOUND")

	head := e.headCommit()
	r := e.follow(advice, "session_recover")
	if r.isErr || r.out["session"] != "2026-11-23-session-01" || r.out["commit"] != e.headCommit() {
		t.Fatalf("session_recover as check_recovery names it: %s", r.text)
	}
	if got := e.subjects(head); len(got) != 1 {
		t.Fatalf("session_recover made %q", got)
	}
	if s := obj(e.ok("session_status", nil)["state"]); s["status"] != "active" {
		t.Fatalf("session_status after session_recover = %v", s["status"])
	}
	if rec := e.ok("check_recovery", nil); rec["crashed"] != false || rec["needs_recovery"] != false {
		t.Fatalf("check_recovery after session_recover = %v", rec)
	}
	e.fail("session_recover", nil, "E1632 SESSION_NOT_CRASHED")
	e.clean()
}

// check_recovery's mark_recovered resumes a crashed session too, as its
// resume prompt says.
func TestCheckRecoveryMarkRecovered(t *testing.T) {
	e := newEnv(t)
	e.ok("session_start", map[string]any{"objective": "Crash"})
	e.advance(time.Hour)
	sessions := list(e.ok("check_recovery", nil)["sessions"])
	if len(sessions) != 1 {
		t.Fatalf("check_recovery sessions = %v", sessions)
	}
	prompt, _ := obj(sessions[0])["resume_prompt"].(string)
	if r := e.follow(prompt, "check_recovery"); r.isErr || r.out["crashed"] != false || r.out["needs_recovery"] != false {
		t.Fatalf("check_recovery as the resume prompt names it: %s", r.text)
	}
	if s := obj(e.ok("session_status", nil)["state"]); s["status"] != "active" {
		t.Fatalf("session_status after mark_recovered = %v", s["status"])
	}
	e.clean()
}

// heartbeat records a sign of life without a commit: a session beating
// within the timeout never crashes.
func TestHeartbeatKeepsSessionAlive(t *testing.T) {
	e := newEnv(t)
	e.ok("session_start", map[string]any{"objective": "Alive"})
	head := e.headCommit()
	for i := 0; i < 3; i++ {
		e.advance(20 * time.Minute)
		if hb := e.ok("heartbeat", nil); hb["session"] != "2026-11-23-session-01" || hb["commit"] != nil {
			t.Fatalf("heartbeat = %v", hb)
		}
	}
	if e.headCommit() != head {
		t.Fatalf("heartbeat made commits: %q", e.subjects(head))
	}
	rec := e.ok("check_recovery", nil)
	if rec["crashed"] != false || rec["last_sign_of_life"] != "2026-11-23T11:00:00Z" {
		t.Fatalf("check_recovery after an hour of heartbeats = %v", rec)
	}
	e.clean()
}

// get_blocked_reason answers what the PreToolUse hook would: Edit blocked
// without a session (naming session_start), blocked until the start gate's
// evidence is in (naming record_evidence), blocked by the mode set_mode
// sets (naming the set_mode call that lifts it), a reading Bash command
// always allowed; set_mode records the change in the mode history.
func TestBlockedReasonFollowsSessionModeAndGate(t *testing.T) {
	e := newEnv(t)
	b := e.ok("get_blocked_reason", nil)
	reason, _ := b["reason"].(string)
	if b["tool"] != "Edit" || b["blocked"] != true || !strings.Contains(reason, "`session_start {\"objective\": \"...\"}`") {
		t.Fatalf("get_blocked_reason without a session = %v", b)
	}
	noCLI(t, "the blocked reason", reason)
	if b := e.ok("get_blocked_reason", map[string]any{"tool": "Bash", "command": "ls -la"}); b["blocked"] != false || b["tool"] != "Bash" || b["reason"] != nil {
		t.Fatalf("get_blocked_reason for a reading command = %v", b)
	}

	e.ok("session_start", map[string]any{"objective": "Blocked"})
	b = e.ok("get_blocked_reason", map[string]any{"tool": "Write"})
	reason, _ = b["reason"].(string)
	if b["blocked"] != true || !strings.Contains(reason, "call `session_status`") {
		t.Fatalf("get_blocked_reason before the start gate = %v", b)
	}
	noCLI(t, "the blocked reason", reason)
	e.ok("session_status", nil) // the state handed over: the one start MUST the engine had not seen
	if b := e.ok("get_blocked_reason", nil); b["blocked"] != false {
		t.Fatalf("get_blocked_reason past the start gate = %v", b)
	}
	if b := e.ok("get_blocked_reason", map[string]any{"tool": "Bash", "command": "rm -rf build"}); b["blocked"] != false {
		t.Fatalf("get_blocked_reason for a writing command in coding mode = %v", b)
	}

	if m := e.ok("set_mode", map[string]any{"mode": "analysis"}); m["id"] != "analysis" || m["commit"] != e.headCommit() {
		t.Fatalf("set_mode = %v", m)
	}
	b = e.ok("get_blocked_reason", nil)
	reason, _ = b["reason"].(string)
	if b["blocked"] != true || !strings.Contains(reason, "mode analysis") {
		t.Fatalf("get_blocked_reason in analysis mode = %v", b)
	}
	if r := e.follow(reason, "set_mode"); r.isErr || r.out["id"] != "coding" {
		t.Fatalf("set_mode as the blocked reason names it: %s", r.text)
	}
	if b := e.ok("get_blocked_reason", nil); b["blocked"] != false {
		t.Fatalf("get_blocked_reason after set_mode coding = %v", b)
	}
	st := e.note("demo/session-current-state.md")
	if prop(st, "mode") != "coding" || strings.Count(section(st, "Mode history"), "\n")+1 != 2 || !strings.Contains(section(st, "Mode history"), "analysis") {
		t.Fatalf("the mode history:\n%s", section(st, "Mode history"))
	}
	modes := list(obj(e.ok("session_status", nil)["state"])["mode_history"])
	if len(modes) != 2 {
		t.Fatalf("session_status mode_history = %v", modes)
	}
	e.clean()
}

// get_unified_context returns the bounded resume prompt in the server's
// terms and the state; the resources return the canonical notes as they
// are on disk.
func TestUnifiedContextAndResources(t *testing.T) {
	e := newEnv(t)
	idle := e.ok("get_unified_context", nil)
	if obj(idle["state"])["status"] != "idle" || idle["project_id"] != "demo" {
		t.Fatalf("get_unified_context while idle = %v", idle)
	}
	e.ok("session_start", map[string]any{"objective": "Context"})
	e.ok("session_update", map[string]any{"message": strings.Repeat("long update ", 40), "progress": 55})
	// 18 open blockers of ~490 bytes: more than the prompt's 8 KB.
	for i := 1; i <= 18; i++ {
		e.ok("record_blocker", map[string]any{"description": fmt.Sprintf("blocker %02d %s", i, strings.Repeat("x", 480))})
	}
	uc := e.ok("get_unified_context", nil)
	prompt, _ := uc["prompt"].(string)
	if !strings.Contains(prompt, "- Objective: Context") || !strings.Contains(prompt, "- Progress: 55%") || !strings.Contains(prompt, "- b-1 [medium] blocker 01 ") {
		t.Fatalf("the resume prompt:\n%s", prompt)
	}
	if len(prompt) > 8<<10 || strings.Contains(prompt, "blocker 18") || !strings.HasSuffix(prompt, "\n…") {
		t.Fatalf("the resume prompt is not bounded to 8 KB (%d bytes), ends %q", len(prompt), prompt[max(0, len(prompt)-40):])
	}
	noCLI(t, "the resume prompt", prompt)
	if s := obj(uc["state"]); s["objective"] != "Context" || len(list(s["blockers"])) != 18 {
		t.Fatalf("get_unified_context state = %v", s)
	}
	if obj(uc["metadata"])["source"] != "vault" {
		t.Fatalf("get_unified_context metadata = %v", uc["metadata"])
	}

	for uri, rel := range map[string]string{"session://state": "demo/session-current-state.md", "session://history": "demo/session-history.md",
		"session://violations": "demo/session-violations-log.md"} {
		text, err := e.read(uri)
		if err != nil || text != e.note(rel) || text == "" {
			t.Errorf("%s = %q, %v; want %s as it is", uri, text, err, rel)
		}
	}
	e.clean()
}

// A server started without a project on a vault of two projects and no
// default: every tool that needs the project says how to start the server
// (mcp --project NAME), naming the vault's projects, and so does reading a
// resource. A server started with --project works on that project.
func TestServerProjectChoice(t *testing.T) {
	e := newEnvWith(t, vaultSpec{projects: []string{"web", "api"}, noDefault: true})
	args := map[string]map[string]any{
		"session_start": {"objective": "x"}, "session_update": {"message": "x"}, "record_decision": {"title": "t", "choice": "c", "rationale": "r"},
		"record_blocker": {"description": "x"}, "resolve_blocker": {"blocker_id": "b-1"}, "validate_gate": {"phase": "start"},
		"record_evidence": {"item": "c-1"}, "set_mode": {"mode": "coding"}, "create_feature": {"name": "F"}, "get_feature": {"feature_id": "f-2026-11-23"},
		"set_feature_status": {"feature_id": "f-2026-11-23", "status": "paused"}, "switch_feature": {"feature_id": "f-2026-11-23"},
		"update_feature_plan": {"feature_id": "f-2026-11-23", "task_id": "t"}, "record_command": {"command": "ls"},
		"create_task": {"name": "T"}, "claim_task": {"task_id": "t"}, "save_context_snapshot": {"task_id": "t"}, "switch_task": {"to_task_id": "t"},
		"create_checkpoint": {"label": "l"}, "rollback_to": {"task_id": "t", "target": map[string]any{"type": "version", "version": 1}},
		"resolve_conflict": {"conflict_id": "cf-1", "action": "ignore"}, "start_agent": {"agent": "qa"},
		"handoff_agent": {"to": "qa", "reason": "r"}, "record_verdict": {"agent": "qa", "decision": "approve", "confidence": 0.5, "reasoning": "r"},
		"set_workflow_phase": {"phase": "planning"},
	}
	for _, tool := range everyTool {
		if tool == "get_blocked_reason" {
			continue // the hook's answer: it has its own way of saying so
		}
		text := e.fail(tool, args[tool], "E1693 INVALID_COMMAND")
		if !strings.Contains(text, "this MCP server was started without --project and the vault has 2 projects (api, web)") ||
			!strings.Contains(text, "mcp --project NAME") || !strings.Contains(text, "sessionvault mcp install") {
			t.Errorf("%s without a project:\n%s", tool, text)
		}
	}
	if _, err := e.read("session://state"); err == nil || !strings.Contains(err.Error(), "mcp --project NAME") {
		t.Errorf("session://state without a project: %v", err)
	}
	if _, err := e.read("session://checklist"); err == nil {
		t.Errorf("session://checklist without a project: no error")
	}

	api := newEnvWith(t, vaultSpec{projects: []string{"web", "api"}, noDefault: true, serverProject: "api"})
	if s := api.ok("session_start", map[string]any{"objective": "API work"}); s["session"] != "2026-11-23-session-01" {
		t.Fatalf("session_start with --project api = %v", s)
	}
	if prop(api.note("api/session-current-state.md"), "objective") != "API work" || prop(api.note("web/session-current-state.md"), "status") != "idle" {
		t.Fatalf("the session did not go to project api")
	}
	if text, err := api.read("session://state"); err != nil || text != api.note("api/session-current-state.md") {
		t.Fatalf("session://state with --project api = %q, %v", text, err)
	}

	gone := newEnvWith(t, vaultSpec{serverProject: "nope"})
	text := gone.fail("session_status", nil, "E1607 PROJECT_NOT_FOUND")
	noCLI(t, "an unknown project", text)
}

// A current-state note a person broke by hand: get_unified_context, the
// call an agent resumes with, returns E1614 STATE_PARSE_ERROR saying where
// and how to fix it, session://state still shows the note as it is, and
// the server keeps serving. (Only one call reads the broken note: the
// engine waits 2 s for a note that does not parse to settle.) A protocol
// changed outside sessionvault fails validate_gate with E1641; a removed
// canonical note fails its resource with E1614.
func TestBrokenNotesAreToolErrors(t *testing.T) {
	e := newEnv(t)
	e.ok("session_start", map[string]any{"objective": "Broken"})
	broken := "---\nstatus: [unclosed\n---\n# Current session\n"
	e.edit("demo/session-current-state.md", broken)
	text := e.fail("get_unified_context", nil, "E1614 STATE_PARSE_ERROR")
	if !strings.Contains(text, "demo/session-current-state.md:3: front matter is not valid YAML") || !strings.Contains(text, "restore it with git") {
		t.Errorf("get_unified_context on a broken note:\n%s", text)
	}
	if text, err := e.read("session://state"); err != nil || text != broken {
		t.Errorf("session://state of a broken note = %q, %v", text, err)
	}
	if out := e.ok("get_task_graph", nil); len(list(out["nodes"])) != 0 {
		t.Errorf("get_task_graph beside a broken note = %v", out)
	}

	e = newEnv(t)
	e.ok("session_start", map[string]any{"objective": "Protocol changed"})
	e.edit("demo/SESSION-PROTOCOL.md", "# Session protocol\n\n## Session start\n\n| Req | Step | Evidence |\n|-----|------|----------|\n| MUST | Think | `section: Objective` |\n")
	if text := e.fail("validate_gate", map[string]any{"phase": "start"}, "E1641 STATE_CHANGED_OUTSIDE"); !strings.Contains(text, "the session protocol changed") {
		t.Errorf("validate_gate after the protocol changed:\n%s", text)
	}
	e.edit("demo/session-history.md", "")
	if _, err := e.read("session://history"); err == nil || !strings.Contains(err.Error(), "E1614 STATE_PARSE_ERROR: reading session-history.md") {
		t.Errorf("session://history of a removed note: %v", err)
	}
}

// An agent's own text quoting a command the CLI does not take ("`sessionvault
// end now`") reaches the resume prompt, and the server keeps
// answering: it once indexed past the command's arguments and went down.
func TestAgentTextQuotingACommandKeepsTheServerUp(t *testing.T) {
	e := newEnv(t)
	e.ok("session_start", map[string]any{"objective": "Quoting"})
	e.ok("session_update", map[string]any{"message": "next: run `sessionvault end now` when done"})
	uc := e.ok("get_unified_context", nil)
	if prompt, _ := uc["prompt"].(string); !strings.Contains(prompt, " end now` when done") {
		t.Fatalf("the resume prompt lost the agent's text:\n%s", prompt)
	}
	e.ok("session_status", nil)
}
