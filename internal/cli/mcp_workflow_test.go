package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// workflowCLIAdvice finds CLI advice for the workflow's operations in a
// text meant for an MCP client: a workflow flag, or a quoted `sessionvault
// agent|verdict|workflow` command.
var workflowCLIAdvice = regexp.MustCompile("(^|[\\s(])--(prompt|artifact|phase|summary|to|reason|context|pending|confidence|reasoning|condition|force|decided-by|approved-by|rejected-by)\\b|`sessionvault (agent|verdict|workflow)\\b")

// The orchestrator workflow through a real MCP client: agents start,
// hand over and end, verdicts and phases are recorded, each call one commit
// of the current-state note; errors name the tool to call, and calling it as
// written works; bad input changes nothing.
func TestMCPWorkflowTools(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	cs := inMemory(t, v)
	head := func() string { return strings.TrimSpace(git(t, v, "rev-parse", "HEAD")) }
	noteText := func() string {
		b, err := os.ReadFile(filepath.Join(v, "demo", "session-current-state.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	noCLI := func(what, text string) {
		t.Helper()
		if m := workflowCLIAdvice.FindString(text); m != "" {
			t.Errorf("%s gives CLI advice (%q):\n%s", what, m, text)
		}
	}
	workflow := func() map[string]any {
		st := mustCall(t, cs, "session_status", nil)["state"].(map[string]any)
		return st["orchestrator_workflow"].(map[string]any)
	}

	if _, isErr, text := call(t, cs, "start_agent", map[string]any{"agent": "analyst"}); !isErr || !strings.Contains(text, "E1602 NO_ACTIVE_SESSION") {
		t.Fatalf("start_agent without a session: %v %s", isErr, text)
	}
	mustCall(t, cs, "session_start", map[string]any{"objective": "Workflow over MCP"})

	out := mustCall(t, cs, "start_agent", map[string]any{"agent": "Analyst", "prompt": "Study the grammar", "artifacts": []string{"spec.md"}})
	if out["invocation"] != "a-1" || out["active_agent"] != "analyst" || out["workflow_phase"] != "planning" || out["commit"] == "" {
		t.Fatalf("start_agent = %v", out)
	}
	if !strings.Contains(noteText(), "· **analyst** · in_progress · **in:** Study the grammar · **in artifacts:** spec.md ^a-1\n") {
		t.Fatalf("the invocation line:\n%s", noteText())
	}

	// Bad input: an unknown agent, a confidence out of range, a phase back
	// without force — each an error naming what is wrong, and no commit.
	before := head()
	_, isErr, text := call(t, cs, "start_agent", map[string]any{"agent": "qa-bot"})
	if !isErr || !strings.Contains(text, "E1680 UNKNOWN_AGENT") || !strings.Contains(text, "pr-comment-responder") || !strings.Contains(text, "agent_types") {
		t.Fatalf("an unknown agent: %v %s", isErr, text)
	}
	_, isErr, text = call(t, cs, "record_verdict", map[string]any{"agent": "qa", "decision": "approve", "confidence": 1.5, "reasoning": "x"})
	if !isErr || !strings.Contains(text, "E1684 INVALID_VERDICT") || !strings.Contains(text, "argument confidence 1.5 is out of range") {
		t.Fatalf("confidence 1.5: %v %s", isErr, text)
	}
	noCLI("confidence 1.5", text)
	if _, isErr, text = call(t, cs, "record_verdict", map[string]any{"agent": "qa", "decision": "maybe", "confidence": 0.5, "reasoning": "x"}); !isErr || !strings.Contains(text, "E1684") {
		t.Fatalf("decision maybe: %v %s", isErr, text)
	}
	if _, isErr, text = call(t, cs, "record_verdict", map[string]any{"agent": "qa", "decision": "approve", "reasoning": "x"}); !isErr || !strings.Contains(text, "confidence") {
		t.Fatalf("a verdict without confidence: %v %s", isErr, text)
	}
	if h := head(); h != before {
		t.Fatalf("bad input made a commit: %s → %s", before, h)
	}

	// A second agent while one is in progress: refused, naming end_agent and
	// handoff_agent; the handoff as named works.
	_, isErr, text = call(t, cs, "start_agent", map[string]any{"agent": "implementer"})
	if !isErr || !strings.Contains(text, "E1682 AGENT_ALREADY_ACTIVE") || !strings.Contains(text, "`end_agent`") || !strings.Contains(text, "`handoff_agent {\"to\": \"implementer\"") {
		t.Fatalf("a second agent: %v %s", isErr, text)
	}
	noCLI("a second agent", text)
	if out, isErr, res := followAdvice(t, cs, text, "handoff_agent"); isErr || out["invocation"] != "a-2" || out["handoff"] != "h-1" || out["active_agent"] != "implementer" {
		t.Fatalf("handoff_agent as the error names it: %v %s", out, res)
	}
	if n := noteText(); !strings.Contains(n, "· **analyst** · completed · **in:** Study the grammar · **in artifacts:** spec.md · **to:** implementer · **reason:** implementer takes over ^a-1\n") ||
		!strings.Contains(n, "· **implementer** · in_progress · **in:** implementer takes over · **from:** analyst ^a-2\n") ||
		!strings.Contains(n, "· **analyst** → **implementer** · accepted · **reason:** implementer takes over ^h-1\n") {
		t.Fatalf("after the handoff:\n%s", n)
	}

	end := mustCall(t, cs, "end_agent", map[string]any{"summary": "Parser written", "artifacts": []string{"parse.go", "parse_test.go"}, "recommendations": []string{"fuzz it"}})
	if end["invocation"] != "a-2" || end["active_agent"] != "" {
		t.Fatalf("end_agent = %v", end)
	}
	if _, isErr, text = call(t, cs, "end_agent", nil); !isErr || !strings.Contains(text, "E1681 NO_ACTIVE_AGENT") || !strings.Contains(text, "`start_agent {\"agent\": \"AGENT\"}`") {
		t.Fatalf("end_agent with none in progress: %v %s", isErr, text)
	}

	// A pending handoff waits for its target; the target's start takes it.
	mustCall(t, cs, "start_agent", map[string]any{"agent": "implementer", "phase": "implementation"})
	mustCall(t, cs, "handoff_agent", map[string]any{"to": "qa", "reason": "ready for tests", "context": "run the suite", "artifacts": []string{"parse.go"}, "pending": true})
	w := workflow()
	pending, _ := w["pending_handoffs"].([]any)
	if w["active_agent"] != "" || len(pending) != 1 || pending[0].(map[string]any)["to_agent"] != "qa" {
		t.Fatalf("a pending handoff: %v", w)
	}
	qa := mustCall(t, cs, "start_agent", map[string]any{"agent": "qa"})
	if qa["handoff"] != "h-2" || qa["invocation"] != "a-4" {
		t.Fatalf("start_agent taking the handoff = %v", qa)
	}
	if !strings.Contains(noteText(), "· **qa** · in_progress · **in:** run the suite · **in artifacts:** parse.go · **from:** implementer ^a-4\n") {
		t.Fatalf("the taken handoff's invocation:\n%s", noteText())
	}

	v1 := mustCall(t, cs, "record_verdict", map[string]any{"agent": "qa", "decision": "needs_revision", "confidence": 0.7, "reasoning": "two tests fail", "blockers": []string{"flaky clock"}})
	if v1["id"] != "v-1" {
		t.Fatalf("record_verdict = %v", v1)
	}
	mustCall(t, cs, "set_workflow_phase", map[string]any{"phase": "validation"})
	_, isErr, text = call(t, cs, "set_workflow_phase", map[string]any{"phase": "implementation"})
	if !isErr || !strings.Contains(text, "E1683 INVALID_WORKFLOW_PHASE") {
		t.Fatalf("a phase back: %v %s", isErr, text)
	}
	noCLI("a phase back", text)
	if out, isErr, res := followAdvice(t, cs, text, "set_workflow_phase"); isErr || out["workflow_phase"] != "implementation" {
		t.Fatalf("set_workflow_phase as the error names it: %v %s", out, res)
	}

	mustCall(t, cs, "record_decision", map[string]any{"title": "Hand-written parser", "choice": "recursive descent", "rationale": "errors",
		"decided_by": "architect", "approved_by": []string{"critic", "qa"}, "rejected_by": []string{"security"}})
	w = workflow()
	decs, _ := w["decisions"].([]any)
	d0, _ := decs[0].(map[string]any)
	if len(decs) != 1 || d0["decided_by"] != "architect" || len(d0["approved_by"].([]any)) != 2 || d0["rejected_by"].([]any)[0] != "security" {
		t.Fatalf("the decision in the workflow: %v", decs)
	}
	dn, _ := os.ReadFile(filepath.Join(v, d0["note"].(string)+".md"))
	if !strings.Contains(string(dn), "decided_by: architect\napproved_by:\n  - critic\n  - qa\nrejected_by:\n  - security\n") {
		t.Fatalf("the decision note:\n%s", dn)
	}
	if _, isErr, text = call(t, cs, "record_decision", map[string]any{"title": "X", "choice": "c", "rationale": "r", "approved_by": []string{"nobody"}}); !isErr || !strings.Contains(text, "E1680") {
		t.Fatalf("approved_by an unknown agent: %v %s", isErr, text)
	}
	if hist, _ := w["agent_history"].([]any); len(hist) != 4 || w["workflow_phase"] != "implementation" || w["active_agent"] != "qa" {
		t.Fatalf("the workflow: %v", w)
	}
	if vs, _ := w["verdicts"].([]any); len(vs) != 1 || vs[0].(map[string]any)["confidence"] != 0.7 {
		t.Fatalf("the verdicts: %v", w["verdicts"])
	}

	// The resume prompt shows the workflow in the server's terms.
	prompt, _ := mustCall(t, cs, "get_unified_context", nil)["prompt"].(string)
	for _, want := range []string{"## Orchestrator workflow", "- Workflow phase: implementation", "- Active agent: qa (a-4", "`end_agent {\"summary\": \"...\"}`", "v-1 qa needs_revision (confidence 0.7): two tests fail; blockers: flaky clock"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the resume prompt lacks %q:\n%s", want, prompt)
		}
	}
	noCLI("the resume prompt", prompt)

	// One commit per change since the bad input: 2 handoffs, an end, 2
	// starts, a verdict, 2 phases and a decision.
	if subjects := git(t, v, "log", "--format=%s", before+"..HEAD"); strings.Count(subjects, "\n") != 9 {
		t.Fatalf("commits since the bad input:\n%s", subjects)
	}
	assertClean(t, v)
}
