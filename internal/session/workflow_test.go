package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Every workflow line the engine writes reads back to what it wrote, and
// formats again to the same bytes; a person's edit that keeps the format is
// read as the new value; what breaks it is not read (a Problem).
func TestWorkflowLinesRoundTrip(t *testing.T) {
	lines := []string{
		"- 2026-11-25T10:00:00Z · **analyst** · in_progress ^a-1",
		"- 2026-11-25T10:00:00Z · **analyst** · in_progress · **in:** Study the grammar · **in artifacts:** a.md; b.md ^a-1",
		"- 2026-11-25T10:00:00Z → 2026-11-25T10:20:00Z · **implementer** · completed · **in:** x · **out:** Parser built · **artifacts:** a.go; b.go · **recommendations:** fuzz it; later · **blockers:** CI · **from:** analyst · **to:** qa · **reason:** ready ^a-3-laptop",
		"- 2026-11-25T10:00:00Z → 2026-11-25T10:20:00Z · **devops** · failed · **out:** deploy broke ^a-12",
		"- 2026-11-25T10:20:00Z · **implementer** → **qa** · pending · **reason:** ready for tests · **context:** run it · **artifacts:** a.go ^h-1",
		"- 2026-11-25T10:20:00Z · **implementer** → **qa** · accepted ^h-2",
		"- 2026-11-25T10:30:00Z · **qa** · approve · confidence 0.8 · **reasoning:** tests pass · **conditions:** lint; docs · **blockers:** none ^v-1",
		"- 2026-11-25T10:30:00Z · **critic** · needs_revision · confidence 1 · **reasoning:** no ^v-2",
		"- 2026-11-25T10:40:00Z · coding → analysis ^m-1",
		"- 2026-11-25T10:40:00Z · analysis → disabled · gates off: the person's escape hatch ^m-2",
	}
	for _, l := range lines {
		var got string
		switch id := string(IdTail([]byte(l))); id[0] {
		case 'a':
			a, ok := parseInvocation(l)
			if !ok {
				t.Fatalf("not read: %s", l)
			}
			got = FormatInvocation(a)
		case 'h':
			h, ok := parseHandoff(l)
			if !ok {
				t.Fatalf("not read: %s", l)
			}
			got = FormatHandoff(h)
		case 'v':
			v, ok := parseVerdict(l)
			if !ok {
				t.Fatalf("not read: %s", l)
			}
			got = FormatVerdict(v)
		case 'm':
			m, ok := parseModeChange(l)
			if !ok {
				t.Fatalf("not read: %s", l)
			}
			got = formatModeChange(m)
		}
		if got != l {
			t.Errorf("round trip:\n got %s\nwant %s", got, l)
		}
	}

	a, _ := parseInvocation(lines[2])
	if a.Agent != "implementer" || a.CompletedAt == nil || a.Output.Summary != "Parser built" || strings.Join(a.Output.Recommendations, "|") != "fuzz it|later" ||
		a.HandoffFrom != "analyst" || a.HandoffTo != "qa" || a.HandoffReason != "ready" || a.ID != "a-3-laptop" {
		t.Errorf("parsed %+v", a)
	}
	if a, _ := parseInvocation(lines[0]); a.Output != nil || len(a.Input.Artifacts) != 0 || a.Input.Artifacts == nil {
		t.Errorf("an invocation in progress without output: %+v", a)
	}
	// A person's rewording is read back; a legacy mode line (no id) too.
	if a, ok := parseInvocation(strings.Replace(lines[1], "Study the grammar", "Study the grammar · and the AST", 1)); !ok || a.Input.Prompt != "Study the grammar · and the AST" {
		t.Errorf("a person's prompt with a separator in it: %v %+v", ok, a)
	}
	if m, ok := parseModeChange("- 2026-11-23T10:30:00Z · coding → analysis"); !ok || m.From != "coding" || m.Mode != "analysis" || m.ID != "" {
		t.Errorf("a mode line without id: %v %+v", ok, m)
	}
	for _, bad := range []string{
		"- 2026-11-25T10:30:00Z · **qa** · approve · confidence 1.5 · **reasoning:** x ^v-3",
		"- 2026-11-25T10:30:00Z · **qa** · perhaps · confidence 0.5 ^v-3",
		"- yesterday · **qa** · in_progress ^a-4",
		"- 2026-11-25T10:00:00Z · **analyst** · running ^a-5",
	} {
		_, okV := parseVerdict(bad)
		_, okA := parseInvocation(bad)
		if okV || okA {
			t.Errorf("read a broken line: %s", bad)
		}
	}
	// Lists: a ";" inside an item is written as ",", so it reads back whole.
	if got := joinList([]string{"a; b", "", " c "}); got != "a, b; c" {
		t.Errorf("joinList = %q", got)
	}
}

// newWorkflowService makes a vault with project demo and an active session,
// its clock at now.
func newWorkflowService(t *testing.T, now *time.Time) *Service {
	t.Helper()
	root := filepath.Join(t.TempDir(), "vault")
	clock := func() time.Time { return *now }
	if err := makeVault(root, "demo", clock); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{V: v, MD: markdown.New(), Now: clock}
	if _, err := s.Start(StartOptions{Project: "demo", Objective: "Workflow"}); err != nil {
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
		if _, err := s.Update(UpdateOptions{Project: "demo", Message: "step " + string(rune('a'+i))}); err != nil {
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
	if len(st.Updates) != 9 || len(st.Workflow.AgentHistory) != 1 || st.Workflow.AgentHistory[0].Status != InvocationCompleted || len(st.Workflow.Verdicts) != 1 {
		t.Fatalf("updates %d, invocations %+v, verdicts %d", len(st.Updates), st.Workflow.AgentHistory, len(st.Workflow.Verdicts))
	}
	cur, _ := os.ReadFile(filepath.Join(s.V.Root, "demo", CurrentStateNote))
	if strings.Count(string(cur), "^u-") > 4 || !strings.Contains(string(cur), "compacted_updates:") || !strings.Contains(string(cur), "^a-1\n") || !strings.Contains(string(cur), "^v-1\n") {
		t.Fatalf("the current state after compaction:\n%s", cur)
	}
}
