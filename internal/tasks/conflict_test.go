package tasks

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
)

// TestDetectFileConflicts: two active tasks that share key files are one
// file_conflict, medium below three shared files and high from three, of
// strength min(n/5, 1), recorded as an entry line of conflicts.md.
func TestDetectFileConflicts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		shared   int
		severity string
		strength float64
	}{
		{1, "medium", 0.2},
		{2, "medium", 0.4},
		{3, "high", 0.6},
		{6, "high", 1},
	} {
		t.Run(strconv.Itoa(c.shared), func(t *testing.T) {
			t.Parallel()
			now := fixedClock
			s := testService(t, &now)
			var files []string
			for i := c.shared; i > 0; i-- {
				files = append(files, "src/f"+strconv.Itoa(i)+".go")
			}
			newTask(t, s, NewTaskOptions{Name: "A", KeyFiles: append([]string{"only-a.go"}, files...)})
			newTask(t, s, NewTaskOptions{Name: "B", KeyFiles: append(slices.Clone(files), "only-b.go")})
			res, err := s.DetectConflicts("demo", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Detected) != 1 || len(res.Existing) != 0 {
				t.Fatalf("detected %+v, existing %+v", res.Detected, res.Existing)
			}
			got := res.Detected[0]
			slices.Sort(files)
			if got.ID != "cf-1" || got.Type != ConflictFile || got.TaskA != "a" || got.TaskB != "b" || got.Severity != c.severity ||
				got.Strength != c.strength || got.Status != ResolutionUnresolved || !got.DetectedAt.Equal(now) ||
				got.Description != "a and b share "+strconv.Itoa(c.shared)+" key files: "+strings.Join(files, ", ") {
				t.Fatalf("conflict = %+v", got)
			}
			high := 0
			if c.severity == "high" {
				high = 1
			}
			if res.Summary != (ConflictCounts{New: 1, High: high}) {
				t.Errorf("summary = %+v", res.Summary)
			}
			line := "- [ ] cf-1 · 2026-03-02T09:00:00Z · file_conflict · " + c.severity + " · " + strconv.FormatFloat(c.strength, 'f', -1, 64) +
				" · [[demo/tasks/a|a]] ↔ [[demo/tasks/b|b]] · key_files · " + got.Description + " · unresolved ^cf-1\n"
			if list := readNote(t, s, "demo/conflicts.md"); !strings.Contains(list, line) || !strings.Contains(list, "unresolved: 1\n") {
				t.Fatalf("conflicts.md lacks\n%s\nin\n%s", line, list)
			}
			if !strings.Contains(lastMessage(t, s), "conflicts-detect: 1 new conflicts") {
				t.Errorf("commit message:\n%s", lastMessage(t, s))
			}
		})
	}
}

// TestDetectConflictsRecordsOnce: a conflict found again is reported as
// existing under its id and not recorded again (no commit); a new one gets
// the next id cf-N; tasks completed or archived share files freely; the
// tasks and types asked narrow what is reported; an unknown type or task
// is refused.
func TestDetectConflictsRecordsOnce(t *testing.T) {
	t.Parallel()
	now := fixedClock
	s := testService(t, &now)
	newTask(t, s, NewTaskOptions{Name: "A", KeyFiles: []string{"x.go"}})
	newTask(t, s, NewTaskOptions{Name: "B", KeyFiles: []string{"x.go"}})
	newTask(t, s, NewTaskOptions{Name: "Done", KeyFiles: []string{"x.go"}})
	newTask(t, s, NewTaskOptions{Name: "Old", KeyFiles: []string{"x.go"}})
	for id, status := range map[string]string{"done": session.TaskCompleted, "old": session.TaskArchived} {
		if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: id, Updates: TaskUpdate{Status: strp(status)}}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.DetectConflicts("demo", nil, []string{ConflictFile})
	if err != nil || len(first.Detected) != 1 || first.Detected[0].ID != "cf-1" {
		t.Fatalf("first run = %+v, %v", first, err)
	}

	was := head(t, s)
	now = now.Add(time.Hour)
	again, err := s.DetectConflicts("demo", nil, []string{ConflictFile})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Detected) != 0 || len(again.Existing) != 1 || again.Existing[0].ID != "cf-1" || !again.Existing[0].DetectedAt.Equal(fixedClock) ||
		again.Summary != (ConflictCounts{Existing: 1}) || again.Result.Commit != "" || head(t, s) != was {
		t.Fatalf("second run = %+v", again)
	}

	newTask(t, s, NewTaskOptions{Name: "C", KeyFiles: []string{"y.go", "x.go"}})
	third, err := s.DetectConflicts("demo", nil, []string{ConflictFile})
	if err != nil {
		t.Fatal(err)
	}
	var fresh []string
	for _, c := range third.Detected {
		fresh = append(fresh, c.ID+" "+c.TaskA+"↔"+c.TaskB)
	}
	if want := []string{"cf-2 a↔c", "cf-3 b↔c"}; !slices.Equal(fresh, want) || len(third.Existing) != 1 {
		t.Fatalf("third run: new %v (want %v), existing %+v", fresh, want, third.Existing)
	}
	if list := readNote(t, s, "demo/conflicts.md"); strings.Count(list, "^cf-") != 3 || !strings.Contains(list, "unresolved: 3\n") {
		t.Fatalf("conflicts.md:\n%s", list)
	}

	// Only those of task c; none of another type.
	only, err := s.DetectConflicts("demo", []string{"c"}, []string{ConflictFile})
	if err != nil || len(only.Detected) != 0 || len(only.Existing) != 2 {
		t.Fatalf("conflicts of c = %+v, %v", only, err)
	}
	none, err := s.DetectConflicts("demo", nil, []string{ConflictLock})
	if err != nil || len(none.Detected)+len(none.Existing) != 0 {
		t.Fatalf("lock collisions = %+v, %v", none, err)
	}

	recorded, err := s.Conflicts("demo")
	if err != nil || len(recorded) != 3 || recorded[1].ID != "cf-2" || recorded[1].TaskA != "a" || recorded[1].TaskB != "c" || recorded[1].Status != ResolutionUnresolved {
		t.Fatalf("recorded = %+v, %v", recorded, err)
	}

	before := snapshot(t, s)
	if _, err := s.DetectConflicts("demo", nil, []string{"spec_typo"}); !hasCode(err, errs.InvalidConflictType) {
		t.Errorf("an unknown type: %v", err)
	}
	if _, err := s.DetectConflicts("demo", []string{"nowhere"}, nil); !hasCode(err, errs.TaskNotFound) {
		t.Errorf("an unknown task: %v", err)
	}
	if _, err := s.DetectConflicts("nope", nil, nil); !hasCode(err, errs.ProjectNotFound) {
		t.Errorf("an unknown project: %v", err)
	}
	unchanged(t, s, before)
}

// TestLockCollision: a lock held past its expiry is a high lock_collision;
// resolving it (any action but ignore) releases the lock in the same
// commit that records the resolution; ignoring it keeps the lock, and
// detect then reports it as existing, ignored; a conflict resolved once is
// refused a second resolution.
func TestLockCollision(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"use_a", "ignore"} {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			now := fixedClock
			s := testService(t, &now)
			newTask(t, s, NewTaskOptions{Name: "Docs"})
			if _, err := s.LockTask("demo", "docs", "other-session", nil); err != nil {
				t.Fatal(err)
			}
			res, err := s.DetectConflicts("demo", nil, []string{ConflictLock})
			if err != nil || len(res.Detected) != 0 {
				t.Fatalf("a lock within its time = %+v, %v", res, err)
			}
			now = now.Add(6 * time.Minute)
			res, err = s.DetectConflicts("demo", nil, []string{ConflictLock})
			if err != nil || len(res.Detected) != 1 {
				t.Fatalf("an expired lock = %+v, %v", res, err)
			}
			c := res.Detected[0]
			if c.ID != "cf-1" || c.Type != ConflictLock || c.TaskA != "docs" || c.TaskB != "" || c.Severity != "high" || c.Strength != 1 ||
				c.Evidence.Location != "locked_by other-session" || !strings.Contains(c.Description, "expired at 2026-03-02T09:05:00Z") || res.Summary.High != 1 {
				t.Fatalf("lock collision = %+v", c)
			}

			now = now.Add(time.Minute)
			out, err := s.ResolveConflict(ResolveOptions{Project: "demo", ID: "cf-1", Action: action, ResolvedBy: "person", Notes: "stale"})
			if err != nil {
				t.Fatal(err)
			}
			wantStatus := map[string]string{"use_a": ResolutionResolved, "ignore": ResolutionIgnored}[action]
			if out.PreviousStatus != ResolutionUnresolved || out.NewStatus != wantStatus || out.ConflictID != "cf-1" || !out.Timestamp.Equal(now) {
				t.Fatalf("resolution = %+v", out)
			}
			list := readNote(t, s, "demo/conflicts.md")
			if !strings.Contains(list, "- [x] cf-1 ") || !strings.Contains(list, " · "+wantStatus+" ("+action+") 2026-03-02T09:07:00Z by person: stale ^cf-1\n") ||
				!strings.Contains(list, "unresolved: 0\n") {
				t.Fatalf("conflicts.md:\n%s", list)
			}
			msg := lastMessage(t, s)
			if !strings.Contains(msg, "conflicts-resolve: cf-1 "+action) || !strings.Contains(msg, "Conflict: cf-1") || !strings.Contains(msg, "Action: "+action) {
				t.Errorf("commit message:\n%s", msg)
			}
			files := gitOut(t, s, "show", "--name-only", "--format=", "HEAD")
			task, err := s.Task("demo", "docs")
			if err != nil {
				t.Fatal(err)
			}
			if action == "ignore" {
				if task.Lock == nil || files != "demo/conflicts.md" {
					t.Fatalf("ignore released the lock (%+v) or wrote %q", task.Lock, files)
				}
				again, err := s.DetectConflicts("demo", nil, []string{ConflictLock})
				if err != nil || len(again.Detected) != 0 || len(again.Existing) != 1 || again.Existing[0].Status != ResolutionIgnored {
					t.Fatalf("detect after ignore = %+v, %v", again, err)
				}
			} else if task.Lock != nil || !strings.Contains(files, "demo/tasks/docs.md") || !strings.Contains(files, "demo/conflicts.md") {
				t.Fatalf("the lock after use_a = %+v; the commit holds %q", task.Lock, files)
			}
			before := snapshot(t, s)
			_, err = s.ResolveConflict(ResolveOptions{Project: "demo", ID: "cf-1", Action: "use_b"})
			wantCode(t, err, errs.ConflictAlreadyResolved)
			unchanged(t, s, before)
		})
	}
}

// TestStateMismatch: a task note edited outside sessionvault is a medium
// state_mismatch naming the last commit; resolving it use_b commits the
// edit (as the person's) and then puts the committed version back.
func TestStateMismatch(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	newTask(t, s, NewTaskOptions{Name: "A"})
	newTask(t, s, NewTaskOptions{Name: "B"})
	committed := readNote(t, s, "demo/tasks/a.md")
	was := head(t, s)
	editNote(t, s, "demo/tasks/a.md", "priority: 0", "priority: 9")
	res, err := s.DetectConflicts("demo", nil, []string{ConflictState})
	if err != nil || len(res.Detected) != 1 {
		t.Fatalf("detect = %+v, %v", res, err)
	}
	c := res.Detected[0]
	if c.TaskA != "a" || c.Type != ConflictState || c.Severity != "medium" || c.Strength != 0.8 || c.Evidence.Location != "demo/tasks/a.md@"+was[:12] || c.Evidence.ExpectedValue != was {
		t.Fatalf("state mismatch = %+v", c)
	}
	if readNote(t, s, "demo/tasks/a.md") == committed {
		t.Fatal("detect changed the edited note")
	}
	out, err := s.ResolveConflict(ResolveOptions{Project: "demo", ID: c.ID, Action: "use_b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readNote(t, s, "demo/tasks/a.md"); got != committed {
		t.Fatalf("after use_b:\n%s\nwant:\n%s", got, committed)
	}
	if out.Result.PersonCommit == "" || !strings.Contains(gitOut(t, s, "show", out.Result.PersonCommit+":demo/tasks/a.md"), "priority: 9") {
		t.Errorf("the person's edit was not committed first: %+v", out.Result)
	}
	if st := gitOut(t, s, "status", "--porcelain"); st != "" {
		t.Errorf("the vault is not clean:\n%s", st)
	}
}

// TestVersionDivergence: a task note both sides of a merge changed is a
// low version_divergence naming the merge; use_a restores the first
// parent's version of the note, use_b the second's.
func TestVersionDivergence(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"use_a", "use_b"} {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			s := testService(t, nil)
			newTask(t, s, NewTaskOptions{Name: "A"})
			newTask(t, s, NewTaskOptions{Name: "B"})
			rel := "demo/tasks/a.md"
			base := head(t, s)
			if _, err := s.SaveTask(SaveTaskOptions{Project: "demo", TaskID: "a", Updates: TaskUpdate{Phase: strp("ours")}}); err != nil {
				t.Fatal(err)
			}
			ours, oursNote := head(t, s), readNote(t, s, rel)
			theirsNote := strings.Replace(gitOut(t, s, "show", base+":"+rel)+"\n", "priority: 0", "priority: 7", 1)
			theirs := commitOn(t, s, base, rel, theirsNote, "on another clone")
			// The merge keeps our tree: the working tree and index stay as they are.
			merge := gitWith(t, s, nil, "", "commit-tree", ours+"^{tree}", "-p", ours, "-p", theirs, "-m", "merge")
			gitOut(t, s, "update-ref", "HEAD", merge)

			res, err := s.DetectConflicts("demo", nil, []string{ConflictDivergence})
			if err != nil || len(res.Detected) != 1 {
				t.Fatalf("detect = %+v, %v", res, err)
			}
			c := res.Detected[0]
			if c.TaskA != "a" || c.Type != ConflictDivergence || c.Severity != "low" || c.Strength != 0.5 || c.Evidence.Location != "merge "+merge[:12] ||
				c.Evidence.ExpectedValue != ours || c.Evidence.ActualValue != theirs {
				t.Fatalf("divergence = %+v", c)
			}
			if _, err := s.ResolveConflict(ResolveOptions{Project: "demo", ID: c.ID, Action: action}); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"use_a": oursNote, "use_b": theirsNote}[action]
			if got := readNote(t, s, rel); got != want {
				t.Fatalf("after %s:\n%s\nwant:\n%s", action, got, want)
			}
			if st := gitOut(t, s, "status", "--porcelain"); st != "" {
				t.Errorf("the vault is not clean:\n%s", st)
			}
		})
	}
}

// TestResolveConflictRefusals: an unknown action, custom without a value,
// bad notes or an unknown id are refused and change nothing; custom with a
// value records the value and the notes.
func TestResolveConflictRefusals(t *testing.T) {
	t.Parallel()
	s := testService(t, nil)
	newTask(t, s, NewTaskOptions{Name: "A", KeyFiles: []string{"x.go"}})
	newTask(t, s, NewTaskOptions{Name: "B", KeyFiles: []string{"x.go"}})
	if _, err := s.DetectConflicts("demo", nil, nil); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, s)
	for _, c := range []struct {
		what string
		o    ResolveOptions
		code errs.Code
	}{
		{"an unknown action", ResolveOptions{ID: "cf-1", Action: "use_c"}, errs.UpdateValidationFailed},
		{"custom without a value", ResolveOptions{ID: "cf-1", Action: "custom", Value: " "}, errs.UpdateValidationFailed},
		{"notes with a NUL", ResolveOptions{ID: "cf-1", Action: "merge", Notes: "a\x00"}, errs.UpdateValidationFailed},
		{"an unknown id", ResolveOptions{ID: "cf-9", Action: "ignore"}, errs.ConflictNotFound},
		{"a missing project", ResolveOptions{Project: "nope", ID: "cf-1", Action: "ignore"}, errs.ProjectNotFound},
	} {
		if c.o.Project == "" {
			c.o.Project = "demo"
		}
		if _, err := s.ResolveConflict(c.o); !hasCode(err, c.code) {
			t.Errorf("%s: error %v, want %s", c.what, err, c.code.Name)
		}
	}
	unchanged(t, s, before)
	out, err := s.ResolveConflict(ResolveOptions{Project: "demo", ID: "cf-1", Action: "custom", Value: "a keeps x.go", Notes: "agreed"})
	if err != nil || out.NewStatus != ResolutionResolved {
		t.Fatalf("custom = %+v, %v", out, err)
	}
	if list := readNote(t, s, "demo/conflicts.md"); !strings.Contains(list, " · resolved (custom) ") || !strings.Contains(list, ", value: a keeps x.go: agreed ^cf-1") {
		t.Fatalf("conflicts.md:\n%s", list)
	}
	recorded, err := s.Conflicts("demo")
	if err != nil || len(recorded) != 1 || recorded[0].Status != ResolutionResolved {
		t.Fatalf("recorded = %+v, %v", recorded, err)
	}
}

// TestConflictLineRoundTrip: a conflict written as its entry line reads
// back with its id, tasks, type, severity, strength, location, description
// and status word; lines that are no entries are not read as conflicts.
func TestConflictLineRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []Conflict{
		{ID: "cf-1", TaskA: "a", TaskB: "b", Type: ConflictFile, Severity: "high", Strength: 0.6, Description: "a and b share 3 key files", Evidence: ConflictEvidence{Location: "key_files"}, Status: ResolutionUnresolved, DetectedAt: fixedClock},
		{ID: "cf-12-m2", TaskA: "docs", Type: ConflictLock, Severity: "high", Strength: 1, Description: "locked", Evidence: ConflictEvidence{Location: "locked_by s1"}, Status: ResolutionResolved, DetectedAt: fixedClock},
		{ID: "cf-3", TaskA: "x", Type: ConflictState, Severity: "medium", Strength: 0.8, Description: "edited", Evidence: ConflictEvidence{Location: "demo/tasks/x.md@abc"}, Status: ResolutionIgnored, DetectedAt: fixedClock},
		{ID: "cf-4", TaskA: "x", Type: ConflictDivergence, Severity: "low", Strength: 0.5, Description: "both sides", Evidence: ConflictEvidence{Location: "merge abc"}, Status: "investigating", DetectedAt: fixedClock},
	} {
		t.Run(c.ID, func(t *testing.T) {
			line := formatConflict("demo", c)
			got, ok := parseConflict(line)
			if !ok {
				t.Fatalf("%q does not read back", line)
			}
			c.Evidence = ConflictEvidence{Location: c.Evidence.Location}
			got.Evidence = ConflictEvidence{Location: got.Evidence.Location}
			if got != c {
				t.Fatalf("read back %+v\nwant      %+v\nfrom %q", got, c, line)
			}
		})
	}
	// A resolution's status line reads back as its first word; an unknown
	// word as unresolved.
	for status, want := range map[string]string{"resolved (use_a) 2026-03-02T09:00:00Z by s1: ok": ResolutionResolved, "pending review": ResolutionUnresolved} {
		c := Conflict{ID: "cf-1", TaskA: "a", Type: ConflictFile, Status: status}
		if got, ok := parseConflict(formatConflict("demo", c)); !ok || got.Status != want {
			t.Errorf("status %q read back as %q", status, got.Status)
		}
	}
	for _, line := range []string{"", "Found by detect.", "- [ ] too · few · fields", "- a plain item"} {
		if _, ok := parseConflict(line); ok {
			t.Errorf("%q read as a conflict", line)
		}
	}
}
