package mcpserver

import (
	"slices"
	"strings"
	"testing"
)

// The orchestrator workflow tools — start_agent, handoff_agent, end_agent,
// record_verdict, set_workflow_phase: each call one commit of the
// current-state note, its lines in the note's Agent invocations, Handoffs
// and Verdicts sections, the workflow as the result and session_status
// show it; errors name the tool call that fixes them, and that call works
// as written; refused calls commit nothing.
func TestWorkflowTools(t *testing.T) {
	e := newEnv(t)
	e.fail("start_agent", map[string]any{"agent": "analyst"}, "E1602 NO_ACTIVE_SESSION")
	e.ok("session_start", map[string]any{"objective": "Workflow"})
	before := e.headCommit()
	state := func() string { return e.note("demo/session-current-state.md") }

	out := e.ok("start_agent", map[string]any{"agent": "Analyst", "prompt": "Study the grammar", "artifacts": []string{"spec.md"}})
	if out["invocation"] != "a-1" || out["id"] != "a-1" || out["active_agent"] != "analyst" || out["workflow_phase"] != "planning" || out["commit"] != e.headCommit() {
		t.Fatalf("start_agent = %v", out)
	}
	if !strings.Contains(section(state(), "Agent invocations"), "· **analyst** · in_progress · **in:** Study the grammar · **in artifacts:** spec.md ^a-1") {
		t.Fatalf("the invocation line:\n%s", section(state(), "Agent invocations"))
	}

	head := e.headCommit()
	for _, c := range []struct {
		tool       string
		args       map[string]any
		code, says string
	}{
		{"start_agent", map[string]any{"agent": "qa-bot"}, "E1680 UNKNOWN_AGENT", "agent_types"},
		{"start_agent", map[string]any{"agent": "analyst", "phase": "bogus"}, "E1683 INVALID_WORKFLOW_PHASE", `argument phase "bogus" is not a workflow phase`},
		{"record_verdict", map[string]any{"agent": "qa", "decision": "approve", "confidence": 1.5, "reasoning": "x"}, "E1684 INVALID_VERDICT", "argument confidence 1.5 is out of range"},
		{"record_verdict", map[string]any{"agent": "qa", "decision": "maybe", "confidence": 0.5, "reasoning": "x"}, "E1684 INVALID_VERDICT", "maybe"},
		{"record_verdict", map[string]any{"agent": "nobody", "decision": "approve", "confidence": 0.5, "reasoning": "x"}, "E1680 UNKNOWN_AGENT", "nobody"},
		{"record_verdict", map[string]any{"agent": "qa", "decision": "approve", "confidence": 0.5, "reasoning": ""}, "E1612 UPDATE_VALIDATION_FAILED", "reasoning must not be empty"},
		{"end_agent", map[string]any{"status": "weird"}, "E1612 UPDATE_VALIDATION_FAILED", `argument status "weird"`},
		{"handoff_agent", map[string]any{"to": "nobody", "reason": "x"}, "E1680 UNKNOWN_AGENT", "nobody"},
		{"set_workflow_phase", map[string]any{"phase": "bogus"}, "E1683 INVALID_WORKFLOW_PHASE", "use one of planning, implementation, validation, complete"},
	} {
		text := e.fail(c.tool, c.args, c.code)
		if !strings.Contains(text, c.says) {
			t.Errorf("%s %v:\n%s\nwant it to say %q", c.tool, c.args, text, c.says)
		}
		noCLI(t, c.tool, text)
	}
	if h := e.headCommit(); h != head {
		t.Fatalf("refused calls made commits: %q", e.subjects(head))
	}

	// A second agent while one is in progress: the error names the handoff.
	text := e.fail("start_agent", map[string]any{"agent": "implementer"}, "E1682 AGENT_ALREADY_ACTIVE")
	noCLI(t, "a second agent", text)
	if !strings.Contains(text, "`end_agent`") {
		t.Errorf("a second agent does not name end_agent:\n%s", text)
	}
	h := e.follow(text, "handoff_agent")
	if h.isErr || h.out["invocation"] != "a-2" || h.out["handoff"] != "h-1" || h.out["active_agent"] != "implementer" {
		t.Fatalf("handoff_agent as the error names it: %s", h.text)
	}
	if !strings.Contains(section(state(), "Handoffs"), "· **analyst** → **implementer** · accepted · ") {
		t.Fatalf("the handoff line:\n%s", section(state(), "Handoffs"))
	}

	end := e.ok("end_agent", map[string]any{"summary": "Parser written", "artifacts": []string{"parse.go"}, "recommendations": []string{"fuzz it"}, "blockers": []string{"none"}})
	if end["invocation"] != "a-2" || end["active_agent"] != "" {
		t.Fatalf("end_agent = %v", end)
	}
	output := obj(obj(list(obj(end["orchestrator_workflow"])["agent_history"])[1])["output"])
	if output["summary"] != "Parser written" || !slices.Equal(list(output["recommendations"]), []any{"fuzz it"}) || !slices.Equal(list(output["artifacts"]), []any{"parse.go"}) {
		t.Fatalf("the ended invocation's output = %v", output)
	}
	text = e.fail("end_agent", nil, "E1681 NO_ACTIVE_AGENT")
	if r := e.follow(text, "start_agent"); !r.isErr || !strings.Contains(r.text, "E1680 UNKNOWN_AGENT") {
		t.Fatalf("the placeholder AGENT in the advice is not an agent: %s", r.text)
	}
	e.fail("handoff_agent", map[string]any{"to": "qa", "reason": "x"}, "E1681 NO_ACTIVE_AGENT")

	// A pending handoff waits for its target; the target's start takes it.
	e.ok("start_agent", map[string]any{"agent": "implementer", "phase": "implementation"})
	p := e.ok("handoff_agent", map[string]any{"to": "qa", "reason": "ready for tests", "context": "run the suite", "artifacts": []string{"parse.go"}, "pending": true})
	if p["active_agent"] != "" || p["handoff"] != "h-2" || len(list(obj(p["orchestrator_workflow"])["pending_handoffs"])) != 1 {
		t.Fatalf("a pending handoff = %v", p)
	}
	qa := e.ok("start_agent", map[string]any{"agent": "qa"})
	if qa["handoff"] != "h-2" || qa["invocation"] != "a-4" || qa["active_agent"] != "qa" {
		t.Fatalf("start_agent taking the pending handoff = %v", qa)
	}
	if !strings.Contains(section(state(), "Agent invocations"), "· **qa** · in_progress · **in:** run the suite · **in artifacts:** parse.go · **from:** implementer ^a-4") {
		t.Fatalf("the taken handoff's invocation:\n%s", section(state(), "Agent invocations"))
	}

	v := e.ok("record_verdict", map[string]any{"agent": "qa", "decision": "needs_revision", "confidence": 0.7, "reasoning": "two tests fail",
		"conditions": []string{"fix them"}, "blockers": []string{"flaky clock"}})
	if v["id"] != "v-1" || len(list(obj(v["orchestrator_workflow"])["verdicts"])) != 1 {
		t.Fatalf("record_verdict = %v", v)
	}
	if !strings.Contains(section(state(), "Verdicts"), "· **qa** · needs_revision · confidence 0.7 · **reasoning:** two tests fail · **conditions:** fix them · **blockers:** flaky clock ^v-1") {
		t.Fatalf("the verdict line:\n%s", section(state(), "Verdicts"))
	}

	if ph := e.ok("set_workflow_phase", map[string]any{"phase": "validation"}); ph["workflow_phase"] != "validation" || ph["id"] != "validation" {
		t.Fatalf("set_workflow_phase = %v", ph)
	}
	text = e.fail("set_workflow_phase", map[string]any{"phase": "implementation"}, "E1683 INVALID_WORKFLOW_PHASE")
	noCLI(t, "a phase back", text)
	if r := e.follow(text, "set_workflow_phase"); r.isErr || r.out["workflow_phase"] != "implementation" {
		t.Fatalf("set_workflow_phase as the error names it: %s", r.text)
	}

	w := obj(obj(e.ok("session_status", nil)["state"])["orchestrator_workflow"])
	if w["active_agent"] != "qa" || w["workflow_phase"] != "implementation" || len(list(w["agent_history"])) != 4 || len(list(w["handoffs"])) != 2 {
		t.Fatalf("the workflow in session_status = %v", w)
	}
	want := []string{"agent-start: analyst a-1", "agent-handoff: analyst → implementer: implementer takes over", "agent-end: implementer a-2 completed",
		"agent-start: implementer a-3", "agent-handoff: implementer → qa: ready for tests", "agent-start: qa a-4, handed off by implementer (h-2)", "verdict: qa needs_revision (0.7)",
		"workflow-phase: implementation → validation", "workflow-phase: validation → implementation"}
	if got := e.subjects(before); !slices.Equal(got, want) {
		t.Fatalf("commits = %q\nwant %q", got, want)
	}
	e.clean()
}

// A workflow call repeated with the op_id of one that took effect does
// nothing again: the first call's id and commit with repeat true, no new
// commit, the note unchanged.
func TestWorkflowOpIDRepeats(t *testing.T) {
	e := newEnv(t)
	e.ok("session_start", map[string]any{"objective": "Repeat"})
	for _, s := range []struct {
		tool string
		args map[string]any
		id   string
	}{
		{"start_agent", map[string]any{"agent": "analyst", "op_id": "op-w1"}, "a-1"},
		{"handoff_agent", map[string]any{"to": "implementer", "reason": "go", "op_id": "op-w2"}, "h-1"},
		{"record_verdict", map[string]any{"agent": "qa", "decision": "approve", "confidence": 0.9, "reasoning": "ok", "op_id": "op-w3"}, "v-1"},
		{"end_agent", map[string]any{"summary": "done", "op_id": "op-w4"}, "a-2"},
		{"set_workflow_phase", map[string]any{"phase": "validation", "op_id": "op-w5"}, "validation"},
	} {
		first := e.ok(s.tool, s.args)
		head, note := e.headCommit(), e.note("demo/session-current-state.md")
		if first["id"] != s.id || first["commit"] != head || first["repeat"] != nil {
			t.Fatalf("%s = %v, want id %s", s.tool, first, s.id)
		}
		again := e.ok(s.tool, s.args)
		if again["repeat"] != true || again["id"] != s.id || again["commit"] != first["commit"] {
			t.Errorf("%s repeated = %v, want id %s, commit %v, repeat true", s.tool, again, s.id, first["commit"])
		}
		if e.headCommit() != head || e.note("demo/session-current-state.md") != note {
			t.Errorf("%s repeated with its op_id changed the vault: %q", s.tool, e.subjects(head))
		}
	}
	e.clean()
}
