package workflow

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
)

// newWorkflowService makes a vault with project demo and an active session,
// its clock at now.
func newWorkflowService(t *testing.T, now *time.Time) *Service {
	t.Helper()
	s := testService(t, now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "Workflow"}); err != nil {
		t.Fatal(err)
	}
	return s
}

func commits(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "rev-list", "--count", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// An agent start repeated with the same operation id does nothing again and
// answers with the first invocation.
func TestAgentStartRepeatedWithOpID(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s := newWorkflowService(t, &now)
	first, err := s.WithOp("op-1").AgentStart(AgentStartOptions{Project: "demo", Agent: "planner"})
	if err != nil || first.Invocation != "a-1" {
		t.Fatalf("first start: %+v %v", first.Invocation, err)
	}
	n := commits(t, s.V.Root)
	again, err := s.WithOp("op-1").AgentStart(AgentStartOptions{Project: "demo", Agent: "planner"})
	if err != nil || !again.Repeat || again.ID != "a-1" || again.Invocation != "a-1" || commits(t, s.V.Root) != n {
		t.Fatalf("repeated start: %+v %v", again, err)
	}
}

// Update compaction goes on as before with an agent at work: the older
// updates move to the update log, the workflow's lines stay, and the
// invocation in progress still ends.
func TestUpdateCompactionBesideTheWorkflow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s := newWorkflowService(t, &now)
	s.V.Config.CompactUpdates = 4
	if _, err := s.AgentStart(AgentStartOptions{Project: "demo", Agent: "implementer", Prompt: "build it"}); err != nil {
		t.Fatal(err)
	}
	conf := 0.9
	if _, err := s.RecordVerdict(VerdictOptions{Project: "demo", Agent: "critic", Decision: "approve", Confidence: &conf, Reasoning: "fine"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 9; i++ {
		now = now.Add(time.Minute)
		if _, err := s.Update(session.UpdateOptions{Project: "demo", Message: "step " + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	end, err := s.AgentEnd(AgentEndOptions{Project: "demo", Summary: "built"})
	if err != nil || end.Invocation != "a-1" {
		t.Fatalf("end: %+v %v", end.Invocation, err)
	}
	st, err := s.Status("demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Updates) != 9 || len(st.Workflow.AgentHistory) != 1 || st.Workflow.AgentHistory[0].Status != session.InvocationCompleted || len(st.Workflow.Verdicts) != 1 {
		t.Fatalf("updates %d, invocations %+v, verdicts %d", len(st.Updates), st.Workflow.AgentHistory, len(st.Workflow.Verdicts))
	}
	cur, _ := os.ReadFile(filepath.Join(s.V.Root, "demo", session.CurrentStateNote))
	if strings.Count(string(cur), "^u-") > 4 || !strings.Contains(string(cur), "compacted_updates:") || !strings.Contains(string(cur), "^a-1\n") || !strings.Contains(string(cur), "^v-1\n") {
		t.Fatalf("the current state after compaction:\n%s", cur)
	}
}
