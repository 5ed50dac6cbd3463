package features

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// newFeature makes feature id (its name name) in project demo.
func newFeature(t testing.TB, s *Service, name, id string) FeatureOutcome {
	t.Helper()
	out, err := s.FeatureNew(NewFeatureOptions{Project: "demo", Name: name, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A feature that cannot be made — empty or long name or description, an id
// that is not {slug}-{date}, an unknown project, an id already taken — is
// refused with its error code and changes nothing in the vault.
func TestFeatureNewRefusals(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	for _, c := range []struct {
		what string
		o    NewFeatureOptions
		code errs.Code
	}{
		{"empty name", NewFeatureOptions{Project: "demo", Name: "  "}, errs.UpdateValidationFailed},
		{"long name", NewFeatureOptions{Project: "demo", Name: strings.Repeat("n", 201)}, errs.UpdateValidationFailed},
		{"long description", NewFeatureOptions{Project: "demo", Name: "x", Description: strings.Repeat("d", 2001)}, errs.UpdateValidationFailed},
		{"NUL in the name", NewFeatureOptions{Project: "demo", Name: "a\x00b"}, errs.UpdateValidationFailed},
		{"id without a date", NewFeatureOptions{Project: "demo", Name: "x", ID: "orchestrator"}, errs.InvalidFeatureId},
		{"id with capitals", NewFeatureOptions{Project: "demo", Name: "x", ID: "Orch-2025-01-09"}, errs.InvalidFeatureId},
		{"unknown project", NewFeatureOptions{Project: "nope", Name: "x"}, errs.ProjectNotFound},
		{"id taken", NewFeatureOptions{Project: "demo", Name: "Again", ID: "orch-2025-01-09"}, errs.FeatureAlreadyExists},
	} {
		before := servicetest.Take(t, s.V.Root)
		_, err := s.FeatureNew(c.o)
		servicetest.WantCode(t, err, c.code, c.what)
		servicetest.AssertUnchanged(t, s.V.Root, before, c.what)
	}
}

// A feature made without --id gets its name's slug and today's date in the
// vault's time zone ("feature" when the name has no letter or digit); it
// is active, with its times now, in one commit named after it. The first
// feature also writes the project's features.base when a person removed
// it; later ones leave it as the person keeps it.
func TestFeatureNewDefaultID(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 23, 30, 0, 0, time.UTC) // already the 10th in Tokyo
	s := withTimeZone(t, testService(t, &now), "Asia/Tokyo", &now)
	personRemoves(t, s, "demo/features.base")
	out := newFeature(t, s, "Agent Orchestrator v2!", "")
	f := out.Feature
	if f.ID != "agent-orchestrator-v2-2025-01-10" || f.Name != "Agent Orchestrator v2!" || f.Status != session.FeatureActive || f.Note != "demo/features/agent-orchestrator-v2-2025-01-10.md" {
		t.Errorf("feature = %+v", f)
	}
	for _, tm := range []*time.Time{f.CreatedAt, f.StartedAt, f.LastActive} {
		if tm == nil || !tm.Equal(now) {
			t.Errorf("times = %v %v %v, want all %v", f.CreatedAt, f.StartedAt, f.LastActive, now)
		}
	}
	if out.Session != "" || out.Result.Commit == "" {
		t.Errorf("outcome = %+v, want a commit and no session", out)
	}
	if got := servicetest.Subjects(t, s.V.Root)[0]; got != "feature-new: agent-orchestrator-v2-2025-01-10 Agent Orchestrator v2!" {
		t.Errorf("commit = %q", got)
	}
	if body := servicetest.Git(t, s.V.Root, "log", "-1", "--format=%b"); !strings.Contains(body, "Feature: agent-orchestrator-v2-2025-01-10") {
		t.Errorf("the commit lacks the Feature trailer:\n%s", body)
	}
	if files := servicetest.Git(t, s.V.Root, "show", "--name-only", "--format=", "HEAD"); files != "demo/features.base\ndemo/features/agent-orchestrator-v2-2025-01-10.md" {
		t.Errorf("the first feature's commit holds:\n%s", files)
	}
	if base := servicetest.ReadNote(t, s.V.Root, "demo/features.base"); !strings.Contains(base, `file.inFolder("demo/features")`) {
		t.Errorf("features.base written back:\n%s", base)
	}
	servicetest.AssertClean(t, s.V.Root)

	// A second feature leaves features.base to the person who edits it.
	base := servicetest.ReadNote(t, s.V.Root, "demo/features.base") + "# mine\n"
	servicetest.PersonCommits(t, s.V.Root, map[string]string{"demo/features.base": base})
	out = newFeature(t, s, "!!!", "")
	if out.Feature.ID != "feature-2025-01-10" {
		t.Errorf("a name without letters gives id %s", out.Feature.ID)
	}
	if files := servicetest.Git(t, s.V.Root, "show", "--name-only", "--format=", "HEAD"); files != "demo/features/feature-2025-01-10.md" {
		t.Errorf("the second feature's commit holds:\n%s", files)
	}
	if got := servicetest.ReadNote(t, s.V.Root, "demo/features.base"); got != base {
		t.Error("the second feature rewrote features.base")
	}
}

// With a session active, a new feature becomes the session's active
// feature, in the same commit as the feature note.
func TestFeatureNewSetsTheSessionsFeature(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "features"}); err != nil {
		t.Fatal(err)
	}
	out := newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	if out.Session != "2025-01-09-session-01" {
		t.Errorf("session = %q", out.Session)
	}
	if got := activeFeatureProp(t, s); got != "[[demo/features/orch-2025-01-09|orch-2025-01-09]]" {
		t.Errorf("active_feature = %q", got)
	}
	files := strings.Split(servicetest.Git(t, s.V.Root, "show", "--name-only", "--format=", "HEAD"), "\n")
	if !slices.Contains(files, "demo/features/orch-2025-01-09.md") || !slices.Contains(files, "demo/session-current-state.md") {
		t.Errorf("the commit holds %v", files)
	}
	st, err := s.Current("demo")
	if err != nil || st.ActiveFeature != "orch-2025-01-09" {
		t.Errorf("current state: active feature %q (%v)", st.ActiveFeature, err)
	}
	servicetest.AssertClean(t, s.V.Root)
}

// Features lists the project's feature notes by id, filtered by status;
// Feature reads one; an unknown or malformed id is errs.FeatureNotFound,
// an unknown status errs.PlanValidationFailed; a project without features
// has none. Files in the folder that are not notes are not features.
func TestFeaturesList(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if fs, err := s.Features("demo", ""); err != nil || len(fs) != 0 {
		t.Errorf("no features yet: %v %v", fs, err)
	}
	newFeature(t, s, "Zeta", "zeta-2025-01-09")
	newFeature(t, s, "Alpha", "alpha-2025-01-09")
	newFeature(t, s, "Mid", "mid-2025-01-09")
	if _, err := s.SetFeatureStatus("demo", "mid-2025-01-09", session.FeaturePaused); err != nil {
		t.Fatal(err)
	}
	servicetest.PersonCommits(t, s.V.Root, map[string]string{"demo/features/readme.txt": "not a note", "demo/features/sub/x-2025-01-09.md": "---\ntype: feature\n---\n"})
	ids := func(fs []Feature) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.ID+":"+f.Status)
		}
		return strings.Join(out, " ")
	}
	for status, want := range map[string]string{
		"":                       "alpha-2025-01-09:active mid-2025-01-09:paused zeta-2025-01-09:active",
		session.FeatureActive:    "alpha-2025-01-09:active zeta-2025-01-09:active",
		session.FeaturePaused:    "mid-2025-01-09:paused",
		session.FeatureCompleted: "",
	} {
		fs, err := s.Features("demo", status)
		if err != nil || ids(fs) != want {
			t.Errorf("Features(%q) = %s (%v), want %s", status, ids(fs), err, want)
		}
	}
	_, err := s.Features("demo", "done")
	servicetest.WantCode(t, err, errs.PlanValidationFailed, "status done")
	_, err = s.Features("nope", "")
	servicetest.WantCode(t, err, errs.ProjectNotFound, "unknown project")

	f, err := s.Feature("demo", "alpha-2025-01-09")
	if err != nil || f.Name != "Alpha" || !f.Active() || f.Project != "demo" {
		t.Errorf("Feature = %+v (%v)", f, err)
	}
	for _, id := range []string{"gone-2025-01-09", "../secrets", ""} {
		_, err := s.Feature("demo", id)
		servicetest.WantCode(t, err, errs.FeatureNotFound, "Feature("+id+")")
	}
	_, err = s.Feature("nope", "alpha-2025-01-09")
	servicetest.WantCode(t, err, errs.ProjectNotFound, "Feature of an unknown project")
}

// The status of a feature changes only as allowed — active to paused or
// completed, paused to active or completed, completed only back to active
// — one commit each; another change is errs.InvalidFeatureTransition, an
// unknown status errs.PlanValidationFailed, an unknown feature
// errs.FeatureNotFound, all changing nothing; the status it has already
// makes no commit.
func TestSetFeatureStatusTransitions(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	for _, c := range []struct {
		to   string
		code errs.Code // zero: allowed
	}{
		{session.FeatureActive, errs.Code{}}, // as it is: no commit
		{session.FeaturePaused, errs.Code{}},
		{session.FeatureActive, errs.Code{}},
		{session.FeatureCompleted, errs.Code{}},
		{session.FeaturePaused, errs.InvalidFeatureTransition},
		{session.FeatureCompleted, errs.Code{}}, // as it is
		{session.FeatureActive, errs.Code{}},    // reopened
		{session.FeaturePaused, errs.Code{}},
		{session.FeatureCompleted, errs.Code{}},
		{"archived", errs.PlanValidationFailed},
	} {
		now = now.Add(time.Minute)
		f, _ := s.Feature("demo", "orch-2025-01-09")
		before := servicetest.Take(t, s.V.Root)
		out, err := s.SetFeatureStatus("demo", "orch-2025-01-09", c.to)
		what := f.Status + " → " + c.to
		if c.code != (errs.Code{}) {
			servicetest.WantCode(t, err, c.code, what)
			servicetest.AssertUnchanged(t, s.V.Root, before, what)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if f.Status == c.to {
			servicetest.AssertUnchanged(t, s.V.Root, before, what+" (as it is)")
			continue
		}
		if out.Feature.Status != c.to || out.Feature.LastActive == nil || !out.Feature.LastActive.Equal(now) {
			t.Errorf("%s: feature %+v", what, out.Feature)
		}
		if got := servicetest.Subjects(t, s.V.Root)[0]; got != "feature-status: orch-2025-01-09 "+c.to {
			t.Errorf("%s: commit %q", what, got)
		}
		if !strings.Contains(servicetest.ReadNote(t, s.V.Root, "demo/features/orch-2025-01-09.md"), "\nstatus: "+c.to+"\n") {
			t.Errorf("%s: the note does not say status %s", what, c.to)
		}
	}
	_, err := s.SetFeatureStatus("demo", "gone-2025-01-09", session.FeaturePaused)
	servicetest.WantCode(t, err, errs.FeatureNotFound, "unknown feature")
	servicetest.AssertClean(t, s.V.Root)
}

// With a session active, making a feature active makes it the session's
// feature (even when it already was active: then only the state changes),
// and pausing or completing the session's feature clears it; pausing
// another feature leaves the session's alone.
func TestSetFeatureStatusAndTheSession(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	newFeature(t, s, "One", "one-2025-01-09")
	newFeature(t, s, "Two", "two-2025-01-09")
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "features"}); err != nil {
		t.Fatal(err)
	}
	if got := activeFeatureProp(t, s); got != "" {
		t.Fatalf("a new session has active feature %q", got)
	}
	two := servicetest.ReadNote(t, s.V.Root, "demo/features/two-2025-01-09.md")
	out, err := s.SetFeatureStatus("demo", "two-2025-01-09", session.FeatureActive)
	if err != nil || out.Session != "2025-01-09-session-01" || out.Result.Commit == "" {
		t.Fatalf("activating an active feature: %+v %v", out, err)
	}
	if got := activeFeatureProp(t, s); got != "[[demo/features/two-2025-01-09|two-2025-01-09]]" {
		t.Errorf("active_feature = %q", got)
	}
	if servicetest.ReadNote(t, s.V.Root, "demo/features/two-2025-01-09.md") != two {
		t.Error("making the session's feature of an active feature rewrote its note")
	}
	if _, err := s.SetFeatureStatus("demo", "one-2025-01-09", session.FeaturePaused); err != nil {
		t.Fatal(err)
	}
	if got := activeFeatureProp(t, s); got != "[[demo/features/two-2025-01-09|two-2025-01-09]]" {
		t.Errorf("pausing another feature changed active_feature to %q", got)
	}
	out, err = s.SetFeatureStatus("demo", "two-2025-01-09", session.FeatureCompleted)
	if err != nil || out.Session != "2025-01-09-session-01" {
		t.Fatalf("completing: %+v %v", out, err)
	}
	if got := activeFeatureProp(t, s); got != "" {
		t.Errorf("completing the session's feature left active_feature %q", got)
	}
	if st, _ := s.Current("demo"); st.ActiveFeature != "" {
		t.Errorf("current state still has feature %q", st.ActiveFeature)
	}
	servicetest.AssertClean(t, s.V.Root)
}

// Switching makes a feature the active session's feature (a paused one
// becomes active) in one commit; switching to the feature it has makes no
// commit; without an active session it is errs.NoActiveSession, for a
// completed feature errs.InvalidFeatureTransition, for an unknown one
// errs.FeatureNotFound, all changing nothing.
func TestSwitchFeature(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	newFeature(t, s, "One", "one-2025-01-09")
	newFeature(t, s, "Two", "two-2025-01-09")
	newFeature(t, s, "Done", "done-2025-01-09")
	if _, err := s.SetFeatureStatus("demo", "two-2025-01-09", session.FeaturePaused); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetFeatureStatus("demo", "done-2025-01-09", session.FeatureCompleted); err != nil {
		t.Fatal(err)
	}
	before := servicetest.Take(t, s.V.Root)
	_, err := s.SwitchFeature("demo", "one-2025-01-09")
	servicetest.WantCode(t, err, errs.NoActiveSession, "no session")
	servicetest.AssertUnchanged(t, s.V.Root, before, "switch without a session")

	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "switch"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	out, err := s.SwitchFeature("demo", "two-2025-01-09")
	if err != nil || out.Feature.Status != session.FeatureActive || out.Session != "2025-01-09-session-01" || !out.Feature.LastActive.Equal(now) {
		t.Fatalf("switching to a paused feature: %+v %v", out, err)
	}
	if got := servicetest.Subjects(t, s.V.Root)[0]; got != "feature-switch: to two-2025-01-09" {
		t.Errorf("commit %q", got)
	}
	if got := activeFeatureProp(t, s); got != "[[demo/features/two-2025-01-09|two-2025-01-09]]" {
		t.Errorf("active_feature = %q", got)
	}

	for _, c := range []struct {
		id   string
		code errs.Code
	}{{"two-2025-01-09", errs.Code{}}, {"done-2025-01-09", errs.InvalidFeatureTransition}, {"gone-2025-01-09", errs.FeatureNotFound}} {
		now = now.Add(time.Minute)
		before := servicetest.Take(t, s.V.Root)
		_, err := s.SwitchFeature("demo", c.id)
		if c.code != (errs.Code{}) {
			servicetest.WantCode(t, err, c.code, "switch to "+c.id)
		} else if err != nil {
			t.Errorf("switch to the session's feature: %v", err)
		}
		servicetest.AssertUnchanged(t, s.V.Root, before, "switch to "+c.id)
	}

	now = now.Add(time.Minute)
	if _, err := s.SwitchFeature("demo", "one-2025-01-09"); err != nil {
		t.Fatal(err)
	}
	if got := activeFeatureProp(t, s); got != "[[demo/features/one-2025-01-09|one-2025-01-09]]" {
		t.Errorf("after switching back: active_feature = %q", got)
	}
	servicetest.AssertClean(t, s.V.Root)
}

// A plan update that cannot be written — a malformed task id, phase id,
// agent, status or artifact, a description holding the line format's field
// labels or a block id, a new task without its phase or description, an
// unknown feature — is refused with its code and changes nothing.
func TestUpdatePlanRefusals(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	if _, err := s.UpdatePlan(PlanOptions{Project: "demo", FeatureID: "orch-2025-01-09", Phase: "Core", TaskID: "a", Description: strp("A")}); err != nil {
		t.Fatal(err)
	}
	base := PlanOptions{Project: "demo", FeatureID: "orch-2025-01-09", TaskID: "a"}
	with := func(edit func(*PlanOptions)) PlanOptions { o := base; edit(&o); return o }
	for _, c := range []struct {
		what string
		o    PlanOptions
		code errs.Code
	}{
		{"task id with a space", with(func(o *PlanOptions) { o.TaskID = "a b" }), errs.PlanValidationFailed},
		{"empty task id", with(func(o *PlanOptions) { o.TaskID = "" }), errs.PlanValidationFailed},
		{"description with a field label", with(func(o *PlanOptions) { o.Description = strp("x · **status:** done") }), errs.PlanValidationFailed},
		{"description ending in a block id", with(func(o *PlanOptions) { o.Description = strp("see ^t-4") }), errs.PlanValidationFailed},
		{"empty description", with(func(o *PlanOptions) { o.Description = strp(" ") }), errs.UpdateValidationFailed},
		{"agent with a space", with(func(o *PlanOptions) { o.Agent = strp("an agent") }), errs.PlanValidationFailed},
		{"unknown status", with(func(o *PlanOptions) { o.Status = strp("done") }), errs.PlanValidationFailed},
		{"phase id with a space", with(func(o *PlanOptions) { o.Phase = "Two"; o.PhaseID = "p 2" }), errs.PlanValidationFailed},
		{"long phase", with(func(o *PlanOptions) { o.Phase = strings.Repeat("p", 201) }), errs.UpdateValidationFailed},
		{"artifact with a backquote", with(func(o *PlanOptions) { o.Artifacts = []string{"a`b"} }), errs.PlanValidationFailed},
		{"blank artifact", with(func(o *PlanOptions) { o.Artifacts = []string{" "} }), errs.PlanValidationFailed},
		{"new task without a phase", with(func(o *PlanOptions) { o.TaskID = "b"; o.Description = strp("B") }), errs.PlanValidationFailed},
		{"new task without a description", with(func(o *PlanOptions) { o.TaskID = "b"; o.Phase = "Core" }), errs.PlanValidationFailed},
		{"unknown feature", with(func(o *PlanOptions) { o.FeatureID = "gone-2025-01-09" }), errs.FeatureNotFound},
		{"unknown project", with(func(o *PlanOptions) { o.Project = "nope" }), errs.ProjectNotFound},
	} {
		before := servicetest.Take(t, s.V.Root)
		_, err := s.UpdatePlan(c.o)
		servicetest.WantCode(t, err, c.code, c.what)
		servicetest.AssertUnchanged(t, s.V.Root, before, c.what)
	}
}

// planLines returns the plan part of a feature note: its lines from the
// first phase heading on.
func planLines(t testing.TB, s *Service, id string) string {
	t.Helper()
	n := servicetest.ReadNote(t, s.V.Root, session.FeaturePath("demo", id))
	i := strings.Index(n, "\n## Phase: ")
	if i < 0 {
		return ""
	}
	return n[i+1:]
}

// Tasks land in their phases (made in order, with their phase ids), each
// line in the note's format; a task given another phase moves there; the
// status sets started and completed times (reopening drops completed);
// artifacts add up until cleared; a task whose note exists is linked. Each
// update is one commit naming the task and its status.
func TestUpdatePlanPhasesAndTasks(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	servicetest.PersonCommits(t, s.V.Root, map[string]string{"demo/tasks/impl-core.md": "---\ntype: task\n---\n# impl-core\n"})
	up := func(o PlanOptions) Feature {
		t.Helper()
		o.Project, o.FeatureID = "demo", "orch-2025-01-09"
		out, err := s.UpdatePlan(o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		return out.Feature
	}
	up(PlanOptions{Phase: "Design", PhaseID: "d1", TaskID: "spec", Description: strp("Write the spec"), Agent: strp("architect")})
	up(PlanOptions{Phase: "Build it", TaskID: "impl-core", Description: strp("Implement the core"), Artifacts: []string{"core.go"}})
	up(PlanOptions{Phase: "d1", TaskID: "review", Description: strp("Review the spec")}) // the phase by its id
	now = now.Add(time.Hour)
	up(PlanOptions{TaskID: "spec", Status: strp(session.TaskInProgress)})
	now = now.Add(time.Hour)
	up(PlanOptions{TaskID: "spec", Status: strp(session.TaskCompleted), Artifacts: []string{"spec.md", "spec.md"}})
	if got := servicetest.Subjects(t, s.V.Root)[0]; got != "feature-plan: orch-2025-01-09: spec completed" {
		t.Errorf("commit %q", got)
	}
	up(PlanOptions{TaskID: "impl-core", Artifacts: []string{"core_test.go"}})
	want := `## Phase: Design

phase_id:: d1

- [x] spec · Write the spec · **agent:** architect · **status:** completed · **started:** 2025-01-09T11:00:00Z · **completed:** 2025-01-09T12:00:00Z · **artifacts:** ` + "`spec.md`" + ` ^t-1
- [ ] review · Review the spec · **status:** pending ^t-3

## Phase: Build it

phase_id:: build-it

- [ ] [[demo/tasks/impl-core|impl-core]] · Implement the core · **status:** pending · **artifacts:** ` + "`core.go`, `core_test.go`" + ` ^t-2
`
	if got := planLines(t, s, "orch-2025-01-09"); got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}

	// Reopened, then moved to the build phase by its name; the review goes
	// to a new phase.
	now = now.Add(time.Hour)
	start := time.Date(2025, 1, 8, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	up(PlanOptions{TaskID: "spec", Status: strp(session.TaskBlocked), StartedAt: &start, ClearArtifacts: true, Agent: strp("")})
	up(PlanOptions{TaskID: "spec", Phase: "build it"})
	f := up(PlanOptions{TaskID: "review", Phase: "QA", Status: strp(session.TaskCompleted)})
	// (The emptied phase keeps the blank line that preceded its tasks:
	// blank lines are collapsed before comparing.)
	want = `## Phase: Design

phase_id:: d1

## Phase: Build it

phase_id:: build-it

- [ ] [[demo/tasks/impl-core|impl-core]] · Implement the core · **status:** pending · **artifacts:** ` + "`core.go`, `core_test.go`" + ` ^t-2
- [ ] spec · Write the spec · **status:** blocked · **started:** 2025-01-08T08:00:00Z ^t-1

## Phase: QA

phase_id:: qa

- [x] review · Review the spec · **status:** completed · **started:** 2025-01-09T13:00:00Z · **completed:** 2025-01-09T13:00:00Z ^t-3
`
	if got := strings.ReplaceAll(planLines(t, s, "orch-2025-01-09"), "\n\n\n", "\n\n"); got != want {
		t.Errorf("plan after the moves:\n%s\nwant:\n%s", got, want)
	}
	task, phase, ok := f.Task("review")
	if !ok || phase.ID != "qa" || phase.Name != "QA" || task.Status != session.TaskCompleted || task.CompletedAt == nil {
		t.Errorf("review read back as %+v in %s (%v)", task, phase.ID, ok)
	}
	if task, _, _ := f.Task("impl-core"); task.TaskNote != "demo/tasks/impl-core" {
		t.Errorf("impl-core links %q", task.TaskNote)
	}
	if _, _, ok := f.Task("nope"); ok {
		t.Error("Task found a task the plan lacks")
	}
	servicetest.AssertClean(t, s.V.Root)
}

// What a person writes in a feature note that the engine cannot read — an
// unknown status, a time that is no time, a task line with an unknown
// status — is reported with its line and kept byte for byte by the next
// update; a box ticked in Obsidian reads as completed; a phase without a
// phase_id line gets its name's slug; artifacts listed with commas read as
// a list.
func TestFeatureNoteAsAPersonEditsIt(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	rel := "demo/features/orch-2025-01-09.md"
	if _, err := s.UpdatePlan(PlanOptions{Project: "demo", FeatureID: "orch-2025-01-09", Phase: "Core", TaskID: "a", Description: strp("A")}); err != nil {
		t.Fatal(err)
	}
	n := servicetest.ReadNote(t, s.V.Root, rel)
	n = strings.Replace(n, "status: active", "status: someday", 1)
	n = strings.Replace(n, "started_at: 2025-01-09T10:00:00Z", "started_at: last tuesday", 1)
	n = strings.Replace(n, "- [ ] a · A", "- [x] a · A", 1)
	bad := "- [ ] b · B · **status:** done ^t-7"
	n += bad + "\n\n## Phase: Wrap up\n\n- [ ] c · C ^t-8\n- [ ] d · D · **artifacts:** notes.md, docs/a b.md ,  ^t-9\n"
	servicetest.PersonCommits(t, s.V.Root, map[string]string{rel: n})

	f, err := s.Feature("demo", "orch-2025-01-09")
	if err != nil {
		t.Fatal(err)
	}
	var whys []string
	for _, p := range f.Problems {
		whys = append(whys, p.Why)
	}
	if len(f.Problems) != 3 || !strings.Contains(whys[0], "status is not one of") || !strings.Contains(whys[1], "cannot read started_at") ||
		!strings.Contains(whys[2], `status "done" is not one of`) || f.Problems[2].Text != bad || f.Problems[2].Line != strings.Count(n[:strings.Index(n, bad)], "\n")+1 {
		t.Errorf("problems = %+v", f.Problems)
	}
	if f.StartedAt != nil || f.Status != "someday" || f.Active() {
		t.Errorf("feature = %+v", f)
	}
	if a, _, _ := f.Task("a"); a.Status != session.TaskCompleted {
		t.Errorf("a ticked task reads as %s", a.Status)
	}
	if c, p, ok := f.Task("c"); !ok || p.ID != "wrap-up" || c.Status != session.TaskPending {
		t.Errorf("c = %+v in %+v (%v)", c, p, ok)
	}
	if d, _, _ := f.Task("d"); !slices.Equal(d.Artifacts, []string{"notes.md", "docs/a b.md"}) {
		t.Errorf("artifacts written without code spans read as %q", d.Artifacts)
	}

	// An update of another task keeps the person's lines as written.
	if _, err := s.UpdatePlan(PlanOptions{Project: "demo", FeatureID: "orch-2025-01-09", TaskID: "c", Agent: strp("opus")}); err != nil {
		t.Fatal(err)
	}
	after := servicetest.ReadNote(t, s.V.Root, rel)
	want := strings.Replace(n, "- [ ] c · C ^t-8", "- [ ] c · C · **agent:** opus · **status:** pending ^t-8", 1)
	if after != want {
		t.Errorf("the update changed more than its line:\n%s\nwant:\n%s", after, want)
	}
}

// A retried operation with the same operation id is done once: the retry
// makes no second commit and no error, though the feature now exists.
func TestFeatureWithOpIsDoneOnce(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	o := NewFeatureOptions{Project: "demo", Name: "Orchestrator", ID: "orch-2025-01-09"}
	first, err := s.WithOp("op-feature-1").FeatureNew(o)
	if err != nil {
		t.Fatal(err)
	}
	before := servicetest.Take(t, s.V.Root)
	again, err := s.WithOp("op-feature-1").FeatureNew(o)
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "the retry")
	if again.Result.Commit != first.Result.Commit {
		t.Errorf("the retry reports commit %s, want the first's %s", again.Result.Commit, first.Result.Commit)
	}
	_, err = s.WithOp("op-feature-2").FeatureNew(o)
	servicetest.WantCode(t, err, errs.FeatureAlreadyExists, "another op id")
	if _, err := os.Stat(filepath.Join(s.V.Root, "demo", "features", "orch-2025-01-09.md")); err != nil {
		t.Error(err)
	}
}
