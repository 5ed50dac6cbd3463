package session

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestWorkflowSummaryEmpty: a session no agent has worked in gets no
// workflow part in its resume prompt.
func TestWorkflowSummaryEmpty(t *testing.T) {
	t.Parallel()
	if got := WorkflowSummary(Workflow{}, 3); got != "" {
		t.Fatalf("summary of an empty workflow = %q", got)
	}
}

// TestWorkflowSummaryActiveAgent: the active agent's invocation (the latest
// in progress), who handed it over, its input and artifacts, and how to end
// or hand it over; then the pending handoffs, at most five listed with how
// many more there are; then only the latest verdicts, with their
// conditions and blockers.
func TestWorkflowSummaryActiveAgent(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	w := Workflow{
		WorkflowPhase: "implementation",
		ActiveAgent:   "implementer",
		AgentHistory: []AgentInvocation{
			{ID: "a-1", Agent: "planner", StartedAt: at.Add(-time.Hour), Status: InvocationInProgress},
			{ID: "a-2", Agent: "architect", StartedAt: at.Add(-time.Minute), Status: "completed"},
			{ID: "a-3", Agent: "implementer", StartedAt: at, Status: InvocationInProgress, HandoffFrom: "architect",
				Input: AgentInput{Prompt: "build the lexer", Artifacts: []string{"docs/design.md", "src/lexer.go"}}},
		},
		Verdicts: []Verdict{
			{ID: "v-1", Agent: "critic", Decision: "reject", Confidence: 0.2, Reasoning: "too early"},
			{ID: "v-2", Agent: "critic", Decision: "approve", Confidence: 0.9, Reasoning: "clean"},
			{ID: "v-3", Agent: "qa", Decision: "conditional", Confidence: 0.75, Reasoning: "mostly", Conditions: []string{"add tests", "fix lint"}},
			{ID: "v-4", Agent: "security", Decision: "needs_revision", Confidence: 0.5, Reasoning: "secrets", Blockers: []string{"key in repo"}},
		},
	}
	for i := 1; i <= 7; i++ {
		h := Handoff{ID: fmt.Sprintf("h-%d", i), FromAgent: "planner", ToAgent: "qa", Reason: fmt.Sprintf("reason %d", i), Status: HandoffPending}
		if i == 1 {
			h.Context = "the spec"
		}
		w.PendingHandoffs = append(w.PendingHandoffs, h)
	}
	want := "- Workflow phase: implementation\n" +
		"- Active agent: implementer (a-3, since 2026-11-23T10:00:00Z, handed over by architect): build the lexer [artifacts: docs/design.md, src/lexer.go]\n" +
		"  When it is done: `sessionvault agent end --summary ...`, or hand over with `sessionvault agent handoff --to AGENT --reason ...`\n" +
		"- Pending handoff h-1: planner → qa: reason 1 (context: the spec); `sessionvault agent start qa` takes it\n" +
		"- Pending handoff h-2: planner → qa: reason 2; `sessionvault agent start qa` takes it\n" +
		"- Pending handoff h-3: planner → qa: reason 3; `sessionvault agent start qa` takes it\n" +
		"- Pending handoff h-4: planner → qa: reason 4; `sessionvault agent start qa` takes it\n" +
		"- Pending handoff h-5: planner → qa: reason 5; `sessionvault agent start qa` takes it\n" +
		"- … and 2 more pending handoffs\n" +
		"- Latest verdicts:\n" +
		"  - v-2 critic approve (confidence 0.9): clean\n" +
		"  - v-3 qa conditional (confidence 0.75): mostly; conditions: add tests; fix lint\n" +
		"  - v-4 security needs_revision (confidence 0.5): secrets; blockers: key in repo\n"
	if got := WorkflowSummary(w, 3); got != want {
		t.Fatalf("summary:\n%s\nwant:\n%s", got, want)
	}
	// No verdicts asked for: none listed.
	if got := WorkflowSummary(w, 0); strings.Contains(got, "verdict") {
		t.Fatalf("verdicts listed when none were asked for:\n%s", got)
	}
}

// TestWorkflowSummaryNoInvocation: with no invocation in progress the
// summary names the active agent property (or none) and the phase (or a
// dash when only a verdict was given).
func TestWorkflowSummaryNoInvocation(t *testing.T) {
	t.Parallel()
	got := WorkflowSummary(Workflow{ActiveAgent: "qa"}, 3)
	if got != "- Workflow phase: —\n- Active agent: qa\n" {
		t.Fatalf("summary %q", got)
	}
	got = WorkflowSummary(Workflow{Verdicts: []Verdict{{ID: "v-1", Agent: "qa", Decision: "approve", Confidence: 1, Reasoning: "ok"}}}, 3)
	if got != "- Workflow phase: —\n- Active agent: none\n- Latest verdicts:\n  - v-1 qa approve (confidence 1): ok\n" {
		t.Fatalf("summary %q", got)
	}
}
