package workflow

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
)

// t0 is the clock of the workflow tests when their session starts.
var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// stateNote is the project demo's current state as on disk.
func stateNote(t *testing.T, s *Service) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.V.Root, "demo", session.CurrentStateNote))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// entryLine is the line of the current state whose block id is id ("" when
// there is none); it fails the test when more than one line has it.
func entryLine(t *testing.T, s *Service, id string) string {
	t.Helper()
	found := ""
	for _, l := range strings.Split(stateNote(t, s), "\n") {
		if strings.HasSuffix(l, " ^"+id) {
			if found != "" {
				t.Fatalf("two lines with ^%s:\n%s\n%s", id, found, l)
			}
			found = l
		}
	}
	return found
}

// prop is the front matter property key of the current state ("" when
// absent).
func prop(t *testing.T, s *Service, key string) string {
	t.Helper()
	fm, _, _ := strings.Cut(strings.TrimPrefix(stateNote(t, s), "---\n"), "\n---\n")
	for _, l := range strings.Split(fm, "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// wantCode fails the test unless err carries code.
func wantCode(t *testing.T, what string, err error, code errs.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %s", what, code.Name)
	}
	if got := errs.CodeOf(err); got != code {
		t.Fatalf("%s: %s (%v), want %s", what, got.Name, err, code.Name)
	}
}

// unchanged fails the test when the vault has commits after head, or the
// current state is not before.
func unchanged(t *testing.T, s *Service, what, head, before string) {
	t.Helper()
	if got := commits(t, s.V.Root); got != head {
		t.Errorf("%s made a commit: %s commits, were %s", what, got, head)
	}
	if got := stateNote(t, s); got != before {
		t.Errorf("%s changed the current state:\n%s", what, got)
	}
}

// An agent start writes one in-progress invocation line with its input,
// makes it the active agent, and puts the workflow in planning; the
// agent's name is taken in any case, and a type from the vault's
// agent_types is accepted.
func TestAgentStartWritesTheInvocation(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	out, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: " Planner ", Prompt: "plan the parser", Artifacts: []string{"spec.md", "a;b"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != "a-1" || out.Invocation != "a-1" || out.Handoff != "" || out.Repeat || out.Result.Commit == "" {
		t.Errorf("outcome: id %q invocation %q handoff %q repeat %v commit %q", out.ID, out.Invocation, out.Handoff, out.Repeat, out.Result.Commit)
	}
	want := "- 2026-11-25T10:00:00Z · **planner** · in_progress · **in:** plan the parser · **in artifacts:** spec.md; a,b ^a-1"
	if got := entryLine(t, s, "a-1"); got != want {
		t.Errorf("invocation line:\n got %s\nwant %s", got, want)
	}
	for k, v := range map[string]string{"active_agent": "planner", "workflow_phase": "planning", "last_agent_change": "2026-11-25T10:00:00Z"} {
		if got := prop(t, s, k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	w := out.Workflow
	if w.ActiveAgent != "planner" || w.WorkflowPhase != "planning" || len(w.AgentHistory) != 1 || w.Current() == nil || w.Current().ID != "a-1" {
		t.Errorf("workflow: %+v", w)
	}
	if in := w.AgentHistory[0].Input; in.Prompt != "plan the parser" || strings.Join(in.Artifacts, "|") != "spec.md|a,b" {
		t.Errorf("input read back: %+v", in)
	}

	// End it, then start an agent of the vault's own type, moving the
	// phase forward.
	now = now.Add(time.Minute)
	if _, err := s.AgentEnd(AgentEndOptions{Project: "demo"}); err != nil {
		t.Fatal(err)
	}
	s.V.Config.AgentTypes = append(s.V.Config.AgentTypes, "linguist")
	now = now.Add(time.Minute)
	out, err = s.AgentStart(AgentStartOptions{Project: "demo", Agent: "linguist", Phase: session.WorkflowImplementation})
	if err != nil {
		t.Fatal(err)
	}
	if out.Invocation != "a-2" || prop(t, s, "workflow_phase") != "implementation" || prop(t, s, "active_agent") != "linguist" {
		t.Errorf("start of linguist: %q, phase %q, active %q", out.Invocation, prop(t, s, "workflow_phase"), prop(t, s, "active_agent"))
	}
	if got, want := entryLine(t, s, "a-2"), "- 2026-11-25T10:02:00Z · **linguist** · in_progress ^a-2"; got != want {
		t.Errorf("second invocation line:\n got %s\nwant %s", got, want)
	}
}

// An agent start is refused, with the code that names why and nothing
// written, for an unknown agent type, a prompt over 2000 characters, a NUL
// in an artifact, a phase that is none, a phase behind the workflow's,
// another agent in progress, no active session and no such project. A
// prompt of exactly 2000 characters (not bytes) is taken.
func TestAgentStartRefusals(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	if _, err := s.SetWorkflowPhase("demo", session.WorkflowValidation, false); err != nil {
		t.Fatal(err)
	}
	head, before := commits(t, s.V.Root), stateNote(t, s)
	for _, c := range []struct {
		name string
		o    AgentStartOptions
		code errs.Code
	}{
		{"unknown agent", AgentStartOptions{Agent: "wizard"}, errs.UnknownAgent},
		{"empty agent", AgentStartOptions{Agent: "  "}, errs.UnknownAgent},
		{"prompt too long", AgentStartOptions{Agent: "planner", Prompt: strings.Repeat("x", 2001)}, errs.UpdateValidationFailed},
		{"NUL in an artifact", AgentStartOptions{Agent: "planner", Artifacts: []string{"a\x00b"}}, errs.UpdateValidationFailed},
		{"not a phase", AgentStartOptions{Agent: "planner", Phase: "testing"}, errs.InvalidWorkflowPhase},
		{"a phase back", AgentStartOptions{Agent: "planner", Phase: session.WorkflowPlanning}, errs.InvalidWorkflowPhase},
		{"no such project", AgentStartOptions{Project: "nope", Agent: "planner"}, errs.ProjectNotFound},
	} {
		if c.o.Project == "" {
			c.o.Project = "demo"
		}
		_, err := s.AgentStart(c.o)
		wantCode(t, c.name, err, c.code)
		unchanged(t, s, c.name, head, before)
	}
	_, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "planner", Phase: session.WorkflowPlanning})
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("a phase back does not name --force: %v", err)
	}

	long := strings.Repeat("é", 2000) // 4000 bytes, 2000 characters
	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "qa", Prompt: long}); err != nil {
		t.Fatalf("a prompt of 2000 characters: %v", err)
	}
	if got := prop(t, s, "workflow_phase"); got != "validation" {
		t.Errorf("a start without --phase moved the phase to %q", got)
	}
	head, before = commits(t, s.V.Root), stateNote(t, s)
	_, err = s.AgentStart(AgentStartOptions{Project: "demo", Agent: "critic"})
	wantCode(t, "another agent in progress", err, errs.AgentAlreadyActive)
	if !strings.Contains(err.Error(), "qa is in progress (a-1") || !strings.Contains(err.Error(), "agent handoff --to critic") {
		t.Errorf("the refusal does not name the agent in progress and the way out: %v", err)
	}
	unchanged(t, s, "a start over another agent", head, before)

	idle := testService(t, &now)
	_, err = idle.AgentStart(AgentStartOptions{Project: "demo", Agent: "planner"})
	wantCode(t, "no session", err, errs.NoActiveSession)
}

// An agent end completes the invocation in progress: its end time, status
// and output go into its line, and no agent is active; the status is
// completed unless given.
func TestAgentEndCompletesTheInvocation(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "implementer", Prompt: "build"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(5 * time.Minute)
	out, err := s.AgentEnd(AgentEndOptions{Project: "demo", Status: session.InvocationBlocked, Summary: "half built",
		Artifacts: []string{"parser.go"}, Recommendations: []string{"split it", "test it"}, Blockers: []string{"no spec"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != "a-1" || out.Invocation != "a-1" || out.Workflow.ActiveAgent != "" || out.Workflow.Current() != nil {
		t.Errorf("outcome: id %q invocation %q workflow %+v", out.ID, out.Invocation, out.Workflow)
	}
	want := "- 2026-11-25T10:00:00Z → 2026-11-25T10:05:00Z · **implementer** · blocked · **in:** build · **out:** half built · **artifacts:** parser.go · **recommendations:** split it; test it · **blockers:** no spec ^a-1"
	if got := entryLine(t, s, "a-1"); got != want {
		t.Errorf("ended line:\n got %s\nwant %s", got, want)
	}
	if prop(t, s, "active_agent") != "" || prop(t, s, "last_agent_change") != "2026-11-25T10:05:00Z" {
		t.Errorf("active_agent %q, last_agent_change %q", prop(t, s, "active_agent"), prop(t, s, "last_agent_change"))
	}
	a, err := s.Invocation("demo", "a-1")
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != session.InvocationBlocked || a.CompletedAt == nil || !a.CompletedAt.Equal(now) || a.Output == nil || a.Output.Summary != "half built" ||
		strings.Join(a.Output.Recommendations, "|") != "split it|test it" || strings.Join(a.Output.Blockers, "|") != "no spec" {
		t.Errorf("read back: %+v %+v", a, a.Output)
	}

	now = now.Add(time.Minute)
	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "qa"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AgentEnd(AgentEndOptions{Project: "demo"}); err != nil {
		t.Fatal(err)
	}
	if got, want := entryLine(t, s, "a-2"), "- 2026-11-25T10:06:00Z → 2026-11-25T10:06:00Z · **qa** · completed ^a-2"; got != want {
		t.Errorf("an end with nothing given:\n got %s\nwant %s", got, want)
	}
}

// An agent end is refused, nothing written, for a status that is none, a
// summary over 2000 characters, a NUL in a blocker, no invocation in
// progress and no active session.
func TestAgentEndRefusals(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	head, before := commits(t, s.V.Root), stateNote(t, s)
	_, err := s.AgentEnd(AgentEndOptions{Project: "demo"})
	wantCode(t, "no agent in progress", err, errs.NoActiveAgent)
	if !strings.Contains(err.Error(), "agent start") {
		t.Errorf("the refusal does not say how to start one: %v", err)
	}
	unchanged(t, s, "an end with no agent", head, before)

	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "planner"}); err != nil {
		t.Fatal(err)
	}
	head, before = commits(t, s.V.Root), stateNote(t, s)
	for _, c := range []struct {
		name string
		o    AgentEndOptions
		code errs.Code
	}{
		{"not a status", AgentEndOptions{Status: "done"}, errs.UpdateValidationFailed},
		{"in_progress is not an end", AgentEndOptions{Status: session.InvocationInProgress}, errs.UpdateValidationFailed},
		{"summary too long", AgentEndOptions{Summary: strings.Repeat("s", 2001)}, errs.UpdateValidationFailed},
		{"NUL in a blocker", AgentEndOptions{Blockers: []string{"x\x00"}}, errs.UpdateValidationFailed},
		{"NUL in a recommendation", AgentEndOptions{Recommendations: []string{"\x00"}}, errs.UpdateValidationFailed},
	} {
		c.o.Project = "demo"
		_, err := s.AgentEnd(c.o)
		wantCode(t, c.name, err, c.code)
		unchanged(t, s, c.name, head, before)
	}
	if prop(t, s, "active_agent") != "planner" {
		t.Errorf("a refused end ended the agent")
	}

	idle := testService(t, &now)
	_, err = idle.AgentEnd(AgentEndOptions{Project: "demo"})
	wantCode(t, "no session", err, errs.NoActiveSession)
}

// An end's output replaces the fields it gives and keeps the others as the
// line had them; an invocation without output gets one.
func TestMergeOutput(t *testing.T) {
	t.Parallel()
	had := &session.AgentOutput{Summary: "s0", Artifacts: []string{"a0"}, Recommendations: []string{"r0"}, Blockers: []string{"b0"}}
	for _, c := range []struct {
		name               string
		o                  *session.AgentOutput
		summary            string
		arts, recs, blocks []string
		want               session.AgentOutput
	}{
		{"nothing given keeps all", had, "", nil, nil, nil, *had},
		{"summary replaced", had, "s1", nil, nil, nil, session.AgentOutput{Summary: "s1", Artifacts: []string{"a0"}, Recommendations: []string{"r0"}, Blockers: []string{"b0"}}},
		{"lists replaced", had, "", []string{"a1"}, []string{"r1", "r2"}, []string{"b1"}, session.AgentOutput{Summary: "s0", Artifacts: []string{"a1"}, Recommendations: []string{"r1", "r2"}, Blockers: []string{"b1"}}},
		{"none before", nil, "s", []string{"a"}, nil, nil, session.AgentOutput{Summary: "s", Artifacts: []string{"a"}}},
	} {
		got := mergeOutput(c.o, c.summary, c.arts, c.recs, c.blocks)
		if got == nil || got.Summary != c.want.Summary || strings.Join(got.Artifacts, "|") != strings.Join(c.want.Artifacts, "|") ||
			strings.Join(got.Recommendations, "|") != strings.Join(c.want.Recommendations, "|") || strings.Join(got.Blockers, "|") != strings.Join(c.want.Blockers, "|") {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	if had.Summary != "s0" || had.Artifacts[0] != "a0" {
		t.Errorf("mergeOutput changed the output it was given: %+v", had)
	}
}

// A handoff (not pending) completes the invocation in progress naming its
// target and reason, records the handoff accepted, and starts the target at
// once with the context as its prompt, the artifacts as its input and the
// sender as handoff_from — one commit.
func TestAgentHandoffStartsTheTarget(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "architect", Prompt: "design"}); err != nil {
		t.Fatal(err)
	}
	head := commits(t, s.V.Root)
	now = now.Add(3 * time.Minute)
	out, err := s.AgentHandoff(HandoffOptions{Project: "demo", To: "Implementer", Reason: "design done\nbuild it", Context: "see the plan", Artifacts: []string{"plan.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != "h-1" || out.Handoff != "h-1" || out.Invocation != "a-2" || out.Workflow.ActiveAgent != "implementer" {
		t.Errorf("outcome: id %q handoff %q invocation %q active %q", out.ID, out.Handoff, out.Invocation, out.Workflow.ActiveAgent)
	}
	if got := commits(t, s.V.Root); got == head || strings.TrimSpace(got) == "" {
		t.Errorf("no commit for the handoff")
	}
	for id, want := range map[string]string{
		"a-1": "- 2026-11-25T10:00:00Z → 2026-11-25T10:03:00Z · **architect** · completed · **in:** design · **to:** implementer · **reason:** design done build it ^a-1",
		"a-2": "- 2026-11-25T10:03:00Z · **implementer** · in_progress · **in:** see the plan · **in artifacts:** plan.md · **from:** architect ^a-2",
		"h-1": "- 2026-11-25T10:03:00Z · **architect** → **implementer** · accepted · **reason:** design done build it · **context:** see the plan · **artifacts:** plan.md ^h-1",
	} {
		if got := entryLine(t, s, id); got != want {
			t.Errorf("%s:\n got %s\nwant %s", id, got, want)
		}
	}
	if prop(t, s, "active_agent") != "implementer" || prop(t, s, "workflow_phase") != "planning" {
		t.Errorf("active_agent %q, workflow_phase %q", prop(t, s, "active_agent"), prop(t, s, "workflow_phase"))
	}
	// Without a context the reason is the target's prompt.
	now = now.Add(time.Minute)
	if _, err := s.AgentHandoff(HandoffOptions{Project: "demo", To: "qa", Reason: "test it"}); err != nil {
		t.Fatal(err)
	}
	if got, want := entryLine(t, s, "a-3"), "- 2026-11-25T10:04:00Z · **qa** · in_progress · **in:** test it · **from:** implementer ^a-3"; got != want {
		t.Errorf("a-3:\n got %s\nwant %s", got, want)
	}
}

// A pending handoff ends the sender and leaves no agent active; the
// target's own start takes it (accepted), naming the sender and taking the
// handoff's context and artifacts as its input unless it gives its own;
// another agent's start does not take it.
func TestPendingHandoffTakenByTheTarget(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "planner"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	out, err := s.AgentHandoff(HandoffOptions{Project: "demo", To: "critic", Reason: "review the plan", Context: "plan v1", Artifacts: []string{"plan.md"}, Pending: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.Handoff != "h-1" || out.Invocation != "" || out.Workflow.ActiveAgent != "" || len(out.Workflow.PendingHandoffs) != 1 {
		t.Errorf("pending handoff: handoff %q invocation %q workflow %+v", out.Handoff, out.Invocation, out.Workflow)
	}
	if got, want := entryLine(t, s, "h-1"), "- 2026-11-25T10:01:00Z · **planner** → **critic** · pending · **reason:** review the plan · **context:** plan v1 · **artifacts:** plan.md ^h-1"; got != want {
		t.Errorf("h-1:\n got %s\nwant %s", got, want)
	}
	if prop(t, s, "active_agent") != "" {
		t.Errorf("an agent is active after a pending handoff: %q", prop(t, s, "active_agent"))
	}

	// Another agent's start leaves the handoff pending.
	now = now.Add(time.Minute)
	if out, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "qa"}); err != nil || out.Handoff != "" {
		t.Fatalf("start of qa: %q %v", out.Handoff, err)
	}
	if !strings.Contains(entryLine(t, s, "h-1"), " · pending · ") {
		t.Errorf("qa's start took critic's handoff: %s", entryLine(t, s, "h-1"))
	}
	if _, err := s.AgentEnd(AgentEndOptions{Project: "demo"}); err != nil {
		t.Fatal(err)
	}

	now = now.Add(time.Minute)
	out, err = s.AgentStart(AgentStartOptions{Project: "demo", Agent: "critic"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Invocation != "a-3" || out.Handoff != "h-1" || len(out.Workflow.PendingHandoffs) != 0 || out.Result.Commit == "" {
		t.Errorf("critic's start: invocation %q handoff %q pending %d", out.Invocation, out.Handoff, len(out.Workflow.PendingHandoffs))
	}
	if got, want := entryLine(t, s, "a-3"), "- 2026-11-25T10:03:00Z · **critic** · in_progress · **in:** plan v1 · **in artifacts:** plan.md · **from:** planner ^a-3"; got != want {
		t.Errorf("a-3:\n got %s\nwant %s", got, want)
	}
	if got := entryLine(t, s, "h-1"); !strings.Contains(got, " · accepted · ") {
		t.Errorf("h-1 after the target's start: %s", got)
	}

	// A target that gives its own prompt and artifacts keeps them; a
	// handoff without context gives its reason.
	if _, err := s.AgentHandoff(HandoffOptions{Project: "demo", To: "implementer", Reason: "approved", Pending: true, Artifacts: []string{"r.md"}}); err != nil {
		t.Fatal(err)
	}
	out, err = s.AgentStart(AgentStartOptions{Project: "demo", Agent: "implementer", Prompt: "my own", Artifacts: []string{"mine.md"}})
	if err != nil || out.Handoff != "h-2" {
		t.Fatalf("implementer's start: %q %v", out.Handoff, err)
	}
	if got := entryLine(t, s, out.Invocation); !strings.Contains(got, "**in:** my own · **in artifacts:** mine.md · **from:** critic ^") {
		t.Errorf("the target's own input: %s", got)
	}
	if _, err := s.AgentHandoff(HandoffOptions{Project: "demo", To: "qa", Reason: "check it", Pending: true}); err != nil {
		t.Fatal(err)
	}
	out, err = s.AgentStart(AgentStartOptions{Project: "demo", Agent: "qa"})
	if err != nil {
		t.Fatal(err)
	}
	if got := entryLine(t, s, out.Invocation); !strings.Contains(got, "**in:** check it · **from:** implementer ^") {
		t.Errorf("the reason as prompt: %s", got)
	}
}

// A handoff is refused, nothing written, for an unknown target, an empty or
// too long reason, a too long context, a NUL in an artifact, a handoff to
// the agent itself, no agent in progress and no active session.
func TestAgentHandoffRefusals(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	head, before := commits(t, s.V.Root), stateNote(t, s)
	_, err := s.AgentHandoff(HandoffOptions{Project: "demo", To: "qa", Reason: "r"})
	wantCode(t, "no agent in progress", err, errs.NoActiveAgent)
	unchanged(t, s, "a handoff with no agent", head, before)

	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "planner"}); err != nil {
		t.Fatal(err)
	}
	head, before = commits(t, s.V.Root), stateNote(t, s)
	for _, c := range []struct {
		name string
		o    HandoffOptions
		code errs.Code
	}{
		{"unknown target", HandoffOptions{To: "nobody", Reason: "r"}, errs.UnknownAgent},
		{"empty reason", HandoffOptions{To: "qa", Reason: " \n"}, errs.UpdateValidationFailed},
		{"reason too long", HandoffOptions{To: "qa", Reason: strings.Repeat("r", 2001)}, errs.UpdateValidationFailed},
		{"context too long", HandoffOptions{To: "qa", Reason: "r", Context: strings.Repeat("c", 2001)}, errs.UpdateValidationFailed},
		{"NUL in an artifact", HandoffOptions{To: "qa", Reason: "r", Artifacts: []string{"\x00"}}, errs.UpdateValidationFailed},
		{"to itself", HandoffOptions{To: "PLANNER", Reason: "r"}, errs.UpdateValidationFailed},
		{"no such project", HandoffOptions{Project: "nope", To: "qa", Reason: "r"}, errs.ProjectNotFound},
	} {
		if c.o.Project == "" {
			c.o.Project = "demo"
		}
		_, err := s.AgentHandoff(c.o)
		wantCode(t, c.name, err, c.code)
		unchanged(t, s, c.name, head, before)
	}
	idle := testService(t, &now)
	_, err = idle.AgentHandoff(HandoffOptions{Project: "demo", To: "qa", Reason: "r"})
	wantCode(t, "no session", err, errs.NoActiveSession)
}

// A verdict is one v-N line with the agent, decision, confidence in its
// shortest form, reasoning, conditions and blockers; verdicts number on.
func TestRecordVerdictWritesTheLine(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	conf := 0.85
	out, err := s.RecordVerdict(VerdictOptions{Project: "demo", Agent: "Critic", Decision: "conditional", Confidence: &conf,
		Reasoning: "mostly fine", Conditions: []string{"add tests", "docs"}, Blockers: []string{"lint"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != "v-1" || out.Invocation != "" || len(out.Workflow.Verdicts) != 1 {
		t.Errorf("outcome: id %q invocation %q verdicts %d", out.ID, out.Invocation, len(out.Workflow.Verdicts))
	}
	want := "- 2026-11-25T10:00:00Z · **critic** · conditional · confidence 0.85 · **reasoning:** mostly fine · **conditions:** add tests; docs · **blockers:** lint ^v-1"
	if got := entryLine(t, s, "v-1"); got != want {
		t.Errorf("verdict line:\n got %s\nwant %s", got, want)
	}
	v := out.Workflow.Verdicts[0]
	if v.Agent != "critic" || v.Decision != "conditional" || v.Confidence != 0.85 || strings.Join(v.Conditions, "|") != "add tests|docs" {
		t.Errorf("verdict read back: %+v", v)
	}
	for i, c := range []float64{0, 1, 0.125} {
		now = now.Add(time.Minute)
		if _, err := s.RecordVerdict(VerdictOptions{Project: "demo", Agent: "qa", Decision: "approve", Confidence: &c, Reasoning: "ok"}); err != nil {
			t.Fatalf("confidence %v: %v", c, err)
		}
		id := "v-" + string(rune('2'+i))
		if got := entryLine(t, s, id); !strings.Contains(got, " · approve · confidence "+[]string{"0", "1", "0.125"}[i]+" · ") {
			t.Errorf("%s with confidence %v: %s", id, c, got)
		}
	}
	if prop(t, s, "active_agent") != "" || prop(t, s, "workflow_phase") != "" {
		t.Errorf("a verdict touched the workflow's agent or phase")
	}
}

// A verdict is refused with errs.InvalidVerdict naming the flag for a
// decision that is none and a confidence missing, not a number or out of 0
// to 1, and as other inputs are for an unknown agent, empty or too long
// reasoning and a NUL in a condition; nothing is written.
func TestRecordVerdictRefusals(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	head, before := commits(t, s.V.Root), stateNote(t, s)
	f := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		name string
		o    VerdictOptions
		code errs.Code
		flag string
	}{
		{"unknown agent", VerdictOptions{Agent: "judge", Decision: "approve", Confidence: f(1), Reasoning: "r"}, errs.UnknownAgent, "agent"},
		{"not a decision", VerdictOptions{Agent: "qa", Decision: "maybe", Confidence: f(1), Reasoning: "r"}, errs.InvalidVerdict, "decision"},
		{"no confidence", VerdictOptions{Agent: "qa", Decision: "approve", Reasoning: "r"}, errs.InvalidVerdict, "confidence"},
		{"NaN", VerdictOptions{Agent: "qa", Decision: "approve", Confidence: f(math.NaN()), Reasoning: "r"}, errs.InvalidVerdict, "confidence"},
		{"below 0", VerdictOptions{Agent: "qa", Decision: "approve", Confidence: f(-0.1), Reasoning: "r"}, errs.InvalidVerdict, "confidence"},
		{"above 1", VerdictOptions{Agent: "qa", Decision: "approve", Confidence: f(1.5), Reasoning: "r"}, errs.InvalidVerdict, "confidence"},
		{"empty reasoning", VerdictOptions{Agent: "qa", Decision: "approve", Confidence: f(1)}, errs.UpdateValidationFailed, ""},
		{"reasoning too long", VerdictOptions{Agent: "qa", Decision: "approve", Confidence: f(1), Reasoning: strings.Repeat("r", 2001)}, errs.UpdateValidationFailed, ""},
		{"NUL in a condition", VerdictOptions{Agent: "qa", Decision: "approve", Confidence: f(1), Reasoning: "r", Conditions: []string{"\x00"}}, errs.UpdateValidationFailed, "condition"},
	} {
		c.o.Project = "demo"
		_, err := s.RecordVerdict(c.o)
		wantCode(t, c.name, err, c.code)
		if c.flag != "" {
			if e := err.(*errs.Error); e.Details["flag"] != c.flag {
				t.Errorf("%s: the error names flag %v, want %s", c.name, e.Details["flag"], c.flag)
			}
		}
		unchanged(t, s, c.name, head, before)
	}
	idle := testService(t, &now)
	_, err := idle.RecordVerdict(VerdictOptions{Project: "demo", Agent: "qa", Decision: "approve", Confidence: f(1), Reasoning: "r"})
	wantCode(t, "no session", err, errs.NoActiveSession)
}

// The workflow phase moves forward (from none too), stays without a commit
// when set to the phase it has, goes back only with force, and is refused
// for a phase that is none and without an active session.
func TestSetWorkflowPhase(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	head := commits(t, s.V.Root)
	now = now.Add(time.Minute)
	out, err := s.SetWorkflowPhase("demo", session.WorkflowImplementation, false)
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != "implementation" || out.Workflow.WorkflowPhase != "implementation" || out.Result.Commit == "" || commits(t, s.V.Root) == head {
		t.Errorf("from none to implementation: %+v", out)
	}
	if prop(t, s, "workflow_phase") != "implementation" || prop(t, s, "updated") != "2026-11-25T10:01:00Z" {
		t.Errorf("workflow_phase %q, updated %q", prop(t, s, "workflow_phase"), prop(t, s, "updated"))
	}
	if msg := lastCommitMessage(t, s.V.Root); !strings.Contains(msg, "none → implementation") {
		t.Errorf("the commit does not say the move: %q", msg)
	}

	head, before := commits(t, s.V.Root), stateNote(t, s)
	out, err = s.SetWorkflowPhase("demo", session.WorkflowImplementation, false)
	if err != nil || out.Result.Commit != "" {
		t.Errorf("the same phase again: commit %q, %v", out.Result.Commit, err)
	}
	unchanged(t, s, "the same phase again", head, before)

	_, err = s.SetWorkflowPhase("demo", session.WorkflowPlanning, false)
	wantCode(t, "back without force", err, errs.InvalidWorkflowPhase)
	if !strings.Contains(err.Error(), "workflow phase planning --force") {
		t.Errorf("the refusal does not give the forced command: %v", err)
	}
	unchanged(t, s, "back without force", head, before)
	for _, bad := range []string{"", "Planning", "done"} {
		_, err = s.SetWorkflowPhase("demo", bad, false)
		wantCode(t, "phase "+bad, err, errs.InvalidWorkflowPhase)
		unchanged(t, s, "phase "+bad, head, before)
	}
	_, err = s.SetWorkflowPhase("demo", "x\x00", false)
	wantCode(t, "NUL in the phase", err, errs.UpdateValidationFailed)
	_, err = s.SetWorkflowPhase("nope", session.WorkflowComplete, false)
	wantCode(t, "no such project", err, errs.ProjectNotFound)

	if out, err = s.SetWorkflowPhase("demo", session.WorkflowPlanning, true); err != nil || prop(t, s, "workflow_phase") != "planning" {
		t.Errorf("back with force: %q %v", prop(t, s, "workflow_phase"), err)
	}
	if msg := lastCommitMessage(t, s.V.Root); !strings.Contains(msg, "implementation → planning") {
		t.Errorf("the forced move's commit: %q", msg)
	}

	idle := testService(t, &now)
	_, err = idle.SetWorkflowPhase("demo", session.WorkflowPlanning, false)
	wantCode(t, "no session", err, errs.NoActiveSession)
}

// Each workflow operation repeated under its operation id does nothing
// again (no commit, the note as it was) and answers with the first run's
// id, marked a repeat.
func TestWorkflowOpsRepeatedWithOpID(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	conf := 0.5
	steps := []struct {
		name string
		op   func(s *Service) (WorkflowOutcome, error)
		id   string
	}{
		{"start", func(s *Service) (WorkflowOutcome, error) {
			return s.AgentStart(AgentStartOptions{Project: "demo", Agent: "planner"})
		}, "a-1"},
		{"handoff", func(s *Service) (WorkflowOutcome, error) {
			return s.AgentHandoff(HandoffOptions{Project: "demo", To: "implementer", Reason: "go"})
		}, "h-1"},
		{"verdict", func(s *Service) (WorkflowOutcome, error) {
			return s.RecordVerdict(VerdictOptions{Project: "demo", Agent: "critic", Decision: "approve", Confidence: &conf, Reasoning: "ok"})
		}, "v-1"},
		{"phase", func(s *Service) (WorkflowOutcome, error) {
			return s.SetWorkflowPhase("demo", session.WorkflowValidation, false)
		}, "validation"},
		{"end", func(s *Service) (WorkflowOutcome, error) {
			return s.AgentEnd(AgentEndOptions{Project: "demo", Summary: "built"})
		}, "a-2"},
	}
	for i, st := range steps {
		now = now.Add(time.Minute)
		op := "op-" + st.name
		first, err := st.op(s.WithOp(op))
		if err != nil || first.ID != st.id || first.Repeat {
			t.Fatalf("%s: id %q repeat %v: %v", st.name, first.ID, first.Repeat, err)
		}
		head, before := commits(t, s.V.Root), stateNote(t, s)
		now = now.Add(time.Minute)
		again, err := st.op(s.WithOp(op))
		if err != nil || !again.Repeat || again.ID != st.id || again.Result.Commit != first.Result.Commit {
			t.Errorf("%s repeated: id %q repeat %v commit %q (first %q): %v", st.name, again.ID, again.Repeat, again.Result.Commit, first.Result.Commit, err)
		}
		unchanged(t, s, st.name+" repeated", head, before)
		if i == 0 && again.Invocation != "a-1" {
			t.Errorf("start repeated: invocation %q, want a-1", again.Invocation)
		}
	}
	if n := strings.Count(stateNote(t, s), " ^v-"); n != 1 {
		t.Errorf("%d verdicts after the repeats, want 1", n)
	}
}

// Invocation finds an invocation of the current session by id, and is
// errs.InvocationNotFound for an id the session lacks and when the project
// has no session.
func TestInvocationLookup(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "analyst", Prompt: "look"}); err != nil {
		t.Fatal(err)
	}
	a, err := s.Invocation("demo", "a-1")
	if err != nil || a.ID != "a-1" || a.Agent != "analyst" || a.Status != session.InvocationInProgress || a.Input.Prompt != "look" || a.Output != nil {
		t.Errorf("a-1: %+v %v", a, err)
	}
	_, err = s.Invocation("demo", "a-9")
	wantCode(t, "a-9", err, errs.InvocationNotFound)
	if !strings.Contains(err.Error(), "has no agent invocation a-9") {
		t.Errorf("the error does not name the id: %v", err)
	}
	_, err = s.Invocation("nope", "a-1")
	wantCode(t, "no such project", err, errs.ProjectNotFound)
	idle := testService(t, &now)
	_, err = idle.Invocation("demo", "a-1")
	wantCode(t, "no session", err, errs.InvocationNotFound)
	if !strings.Contains(err.Error(), "session (none)") {
		t.Errorf("with no session: %v", err)
	}
}

// lastCommitMessage is the message of the vault's HEAD commit.
func lastCommitMessage(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%B").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A handoff in a workflow whose phase a person emptied by hand (an agent
// still in progress) puts the workflow back in planning.
func TestHandoffWithoutAPhaseSetsPlanning(t *testing.T) {
	t.Parallel()
	now := t0
	s := newWorkflowService(t, &now)
	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "planner", Phase: session.WorkflowImplementation}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.V.Root, "demo", session.CurrentStateNote)
	edited := strings.Replace(stateNote(t, s), "workflow_phase: implementation\n", "workflow_phase: \"\"\n", 1)
	if !strings.Contains(edited, "workflow_phase: \"\"\n") {
		t.Fatalf("no workflow_phase to empty:\n%s", edited)
	}
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := s.AgentHandoff(HandoffOptions{Project: "demo", To: "qa", Reason: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Workflow.WorkflowPhase != session.WorkflowPlanning || prop(t, s, "workflow_phase") != "planning" {
		t.Errorf("phase after the handoff: %q / %q", out.Workflow.WorkflowPhase, prop(t, s, "workflow_phase"))
	}
}
