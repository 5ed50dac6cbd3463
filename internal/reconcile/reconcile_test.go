package reconcile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"
)

// t0 is when the machines' clocks start in these tests.
var t0 = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// ok fails the test when an operation on m fails.
func (m *machine) ok(_ any, err error) {
	m.t.Helper()
	if err != nil {
		m.t.Fatalf("%s: %v", m.name, err)
	}
}

// archived is the record of session id of project demo on m, read back.
func (m *machine) archived(id string) session.State {
	m.t.Helper()
	st, err := m.Archived("demo", id)
	if err != nil {
		m.t.Fatalf("%s: reading the record of %s: %v", m.name, id, err)
	}
	return st
}

// section is the body of the H2 section title of note (without its
// heading; "" when it has none).
func section(note, title string) string {
	_, rest, ok := strings.Cut(note, "\n## "+title+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i+1]
	}
	return rest
}

// ids is the entry ids of the lines of text, in order.
func ids(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if m := entryIDRe.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// Two machines that each start a session before they sync: whichever
// machine merges, the merged current state holds the session started
// first, alone; Reconcile records the other as sessions/<id>.md, status
// abandoned, with its objective and updates, names it in the history and
// reports it. Reconciling again, and on the other machine after it takes
// the merge, records nothing twice.
func TestConcurrentStartsKeepTheFirst(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		firstA, mergB bool // a starts first; b makes the merge (else a does)
	}{
		{"a first, merged on b", true, true},
		{"a first, merged on a", true, false},
		{"b first, merged on b", false, true},
		{"b first, merged on a", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, b := twoMachines(t, t0)
			first, second := a, b
			if !c.firstA {
				first, second = b, a
			}
			first.tick(time.Minute)
			first.ok(first.Start(session.StartOptions{Project: "demo", Objective: "on " + first.name}))
			second.tick(2 * time.Minute)
			second.ok(second.Start(session.StartOptions{Project: "demo", Objective: "on " + second.name}))
			for _, m := range []*machine{a, b} {
				m.tick(time.Minute)
				m.ok(m.Update(session.UpdateOptions{Project: "demo", Message: m.name + " did this"}))
				m.ok(m.Decide(session.DecideOptions{Project: "demo", Title: m.name + " chose", Choice: "x", Rationale: "r"}))
			}
			won, lost := first.sessionID(), second.sessionID()
			if won == lost || won == "" || lost == "" {
				t.Fatalf("sessions %q and %q", won, lost)
			}
			merger, other := a, b
			if c.mergB {
				merger, other = b, a
			}
			if !merger.pull(other) {
				t.Fatalf("git pull made no merge commit")
			}
			rep := merger.reconcile()
			if rep.Merges != 1 || len(rep.Abandoned) != 1 || rep.Abandoned[0] != "demo/"+lost || len(rep.Joined) != 0 || rep.Moved != 0 || rep.Commit == "" {
				t.Fatalf("report: %+v, want %s abandoned", rep, lost)
			}
			if got := merger.git("rev-parse", "HEAD"); got != rep.Commit {
				t.Errorf("HEAD %s is not the reconcile commit %s", got, rep.Commit)
			}
			if msg := merger.git("log", "-1", "--format=%s"); !strings.Contains(msg, "recorded demo/"+lost) {
				t.Errorf("the commit message does not say what was recorded: %q", msg)
			}

			state := merger.state()
			if got := merger.sessionID(); got != won {
				t.Errorf("the current state holds %s, want %s (started first)", got, won)
			}
			if strings.Contains(state, second.name+" did this") || strings.Contains(state, second.name+" chose") || !strings.Contains(state, first.name+" did this ^") {
				t.Errorf("the current state mixes the two sessions:\n%s", state)
			}
			rec := merger.read("demo/sessions/" + lost + ".md")
			for _, want := range []string{"type: session\n", "status: abandoned\n", "objective: on " + second.name + "\n",
				second.name + " did this ^u-1", second.name + " chose]]", "Abandoned: session " + won + " was started on another machine"} {
				if !strings.Contains(rec, want) {
					t.Errorf("the record of %s lacks %q:\n%s", lost, want, rec)
				}
			}
			if strings.Contains(rec, first.name+" did this") {
				t.Errorf("the record of %s holds the other session's update:\n%s", lost, rec)
			}
			st := merger.archived(lost)
			if st.Status != session.StatusAbandoned || len(st.Updates) != 1 || st.Updates[0].Message != second.name+" did this" || len(st.Decisions) != 1 {
				t.Errorf("the record read back: status %s, updates %+v, decisions %d", st.Status, st.Updates, len(st.Decisions))
			}
			if !strings.Contains(merger.read("demo/"+session.HistoryNote), lost) {
				t.Errorf("the history does not name %s", lost)
			}
			merger.assertClean()

			again := merger.reconcile()
			if again.Merges != 0 || len(again.Abandoned)+len(again.Joined)+again.Moved != 0 || again.Commit != "" {
				t.Errorf("reconcile again: %+v", again)
			}

			// The other machine takes the merge (a fast-forward): it looks at
			// the merge, finds the record made and changes nothing.
			head := merger.git("rev-parse", "HEAD")
			if other.pull(merger) {
				t.Fatalf("%s: the pull of a merged branch made a merge", other.name)
			}
			orep := other.reconcile()
			if orep.Merges != 1 || len(orep.Abandoned)+len(orep.Joined)+orep.Moved != 0 || orep.Commit != "" {
				t.Errorf("%s after the fast-forward: %+v", other.name, orep)
			}
			if got := other.git("rev-parse", "HEAD"); got != head {
				t.Errorf("the machines differ: %s and %s", got, head)
			}
			other.assertClean()
		})
	}
}

// A machine that went on recording a session another machine had ended:
// after the merge the current state is the ended one's (idle); Reconcile
// joins what the late machine recorded into the session's record — each
// update, decision and blocker once, in time order (an earlier decision
// before the record's), and a person's line in the objective — and leaves
// a person's own section out of the record. The record reads back whole.
func TestLateEntriesJoinTheEndedSessionsRecord(t *testing.T) {
	t.Parallel()
	a, b := twoMachines(t, t0)
	a.tick(time.Minute)
	a.ok(a.Start(session.StartOptions{Project: "demo", Objective: "shared"}))
	b.pull(a)
	id := a.sessionID()

	a.tick(time.Minute) // 9:02
	a.ok(a.Update(session.UpdateOptions{Project: "demo", Message: "before the end"}))
	a.tick(4 * time.Minute) // 9:06
	a.ok(a.Decide(session.DecideOptions{Project: "demo", Title: "late on a", Choice: "x", Rationale: "r"}))
	a.ok(a.End("demo", "done on a", nil))

	b.tick(3 * time.Minute) // 9:03
	b.ok(b.Decide(session.DecideOptions{Project: "demo", Title: "early on b", Choice: "y", Rationale: "r"}))
	b.ok(b.Update(session.UpdateOptions{Project: "demo", Message: "late on b"}))
	b.ok(b.Block("demo", "waiting for the spec", ""))
	p := filepath.Join(b.V.Root, "demo", session.CurrentStateNote)
	edited := strings.Replace(b.state(), "\nshared\n\n## Start", "\nshared\nAlso the lexer.\n\n## Start", 1)
	edited += "\n## My notes\n\nkeep this here\n"
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	b.tick(time.Minute) // 9:04
	b.ok(b.Update(session.UpdateOptions{Project: "demo", Message: "after the edit"}))

	if !b.pull(a) {
		t.Fatal("git pull made no merge commit")
	}
	if got := b.sessionID(); got != "" {
		t.Fatalf("the merged current state holds %q, want none (ended on a)", got)
	}
	rep := b.reconcile()
	if rep.Merges != 1 || len(rep.Joined) != 1 || rep.Joined[0] != "demo/"+id || len(rep.Abandoned) != 0 || rep.Commit == "" {
		t.Fatalf("report: %+v", rep)
	}
	rec := b.read("demo/sessions/" + id + ".md")
	if !strings.Contains(rec, "status: complete\n") || !strings.Contains(rec, "\ndone on a\n") {
		t.Errorf("the record is not the ended one:\n%s", rec)
	}
	if got := strings.Join(ids(section(rec, session.SecUpdates)), " "); got != "u-1 u-1-mb u-2-mb" {
		t.Errorf("record updates %s, want u-1 u-1-mb u-2-mb in time order:\n%s", got, rec)
	}
	if got := strings.Join(ids(section(rec, session.SecDecisions)), " "); got != "d-1-mb d-1" {
		t.Errorf("record decisions %s, want d-1-mb (9:03) before d-1 (9:06):\n%s", got, rec)
	}
	if got := strings.Join(ids(section(rec, session.SecBlockers)), " "); got != "b-1-mb" {
		t.Errorf("record blockers %s:\n%s", got, rec)
	}
	if obj := section(rec, session.SecObjective); !strings.Contains(obj, "shared\nAlso the lexer.\n") {
		t.Errorf("the person's line in the objective is not in the record's:\n%s", obj)
	}
	if strings.Contains(rec, "My notes") || strings.Contains(rec, "keep this here") {
		t.Errorf("a person's own section went into the record:\n%s", rec)
	}
	st := b.archived(id)
	var msgs []string
	for _, u := range st.Updates {
		msgs = append(msgs, u.Message)
	}
	if strings.Join(msgs, "|") != "before the end|late on b|after the edit" || len(st.Decisions) != 2 || len(st.Blockers) != 1 {
		t.Errorf("the record read back: updates %q, decisions %d, blockers %d", msgs, len(st.Decisions), len(st.Blockers))
	}
	b.assertClean()

	again := b.reconcile()
	if again.Merges != 0 || len(again.Joined) != 0 || again.Commit != "" || b.read("demo/sessions/"+id+".md") != rec {
		t.Errorf("reconcile again: %+v", again)
	}
	a.pull(b)
	if arep := a.reconcile(); len(arep.Joined)+len(arep.Abandoned) != 0 || arep.Commit != "" {
		t.Errorf("a after taking b's merge: %+v", arep)
	}
	a.assertClean()
}

// A late machine that compacted the session after another machine ended
// it: the record gains the Compactions section it lacked, with that
// compaction's entry, and the archive note the compaction wrote comes with
// the merge; no update is in both.
func TestLateCompactionJoinsTheRecord(t *testing.T) {
	t.Parallel()
	a, b := twoMachines(t, t0)
	b.V.Config.CompactUpdates = 4
	a.tick(time.Minute)
	a.ok(a.Start(session.StartOptions{Project: "demo", Objective: "shared"}))
	b.pull(a)
	id := a.sessionID()
	a.tick(time.Minute)
	a.ok(a.End("demo", "done on a", nil))
	for i := 1; i <= 7; i++ {
		b.tick(time.Minute)
		b.ok(b.Update(session.UpdateOptions{Project: "demo", Message: fmt.Sprintf("b step %d", i)}))
	}
	if !strings.Contains(b.state(), "\n## "+session.SecCompactions+"\n") {
		t.Fatalf("b did not compact:\n%s", b.state())
	}
	b.pull(a)
	rep := b.reconcile()
	if len(rep.Joined) != 1 || rep.Commit == "" {
		t.Fatalf("report: %+v", rep)
	}
	rec := b.read("demo/sessions/" + id + ".md")
	archive := b.read(session.ArchivePath("demo", id))
	if got := ids(section(rec, session.SecCompactions)); len(got) != 1 || !strings.HasPrefix(got[0], "k-") {
		t.Errorf("the record's compactions: %v\n%s", got, rec)
	}
	recUpdates, archived := ids(section(rec, session.SecUpdates)), ids(section(archive, session.SecUpdates))
	if len(recUpdates)+len(archived) != 7 || len(archived) == 0 {
		t.Errorf("updates: %v in the record, %v in the archive; want the 7 of b once", recUpdates, archived)
	}
	b.assertClean()
}

// Updates a compaction on one machine moved to the session's archive and a
// merge brought back into the current state (the other machine's person
// had fixed one's text) are taken out of the current state again, once:
// every update of the session is then read once, and `check` is clean.
func TestCompactedUpdatesAMergeBroughtBackAreTakenOut(t *testing.T) {
	t.Parallel()
	a, b := twoMachines(t, t0)
	a.V.Config.CompactUpdates = 4
	a.tick(time.Minute)
	a.ok(a.Start(session.StartOptions{Project: "demo", Objective: "shared"}))
	for i := 1; i <= 4; i++ {
		a.tick(time.Minute)
		a.ok(a.Update(session.UpdateOptions{Project: "demo", Message: fmt.Sprintf("step %d", i)}))
	}
	b.pull(a)
	id := a.sessionID()
	for i := 5; i <= 6; i++ {
		a.tick(time.Minute)
		a.ok(a.Update(session.UpdateOptions{Project: "demo", Message: fmt.Sprintf("step %d", i)}))
	}
	if a.read(session.ArchivePath("demo", id)) == "" || strings.Contains(a.state(), "^u-2\n") {
		t.Fatalf("a did not compact u-2:\n%s", a.state())
	}
	b.tick(10 * time.Minute)
	p := filepath.Join(b.V.Root, "demo", session.CurrentStateNote)
	if err := os.WriteFile(p, []byte(strings.Replace(b.state(), "step 2 ^u-2", "step two ^u-2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	b.ok(b.Update(session.UpdateOptions{Project: "demo", Message: "on b"}))

	b.pull(a)
	if !strings.Contains(b.state(), "^u-2\n") {
		t.Fatalf("the merge did not bring u-2 back; nothing to reconcile:\n%s", b.state())
	}
	rep := b.reconcile()
	if rep.Moved < 1 || rep.Commit == "" || len(rep.Abandoned)+len(rep.Joined) != 0 {
		t.Fatalf("report: %+v", rep)
	}
	if msg := b.git("log", "-1", "--format=%s"); !strings.Contains(msg, "already in the update log out of the current state") {
		t.Errorf("the commit message: %q", msg)
	}
	if got := strings.Join(ids(section(b.state(), session.SecUpdates)), " "); got != "u-4 u-5 u-6 u-5-mb" {
		t.Errorf("current state updates %s, want u-4 u-5 u-6 u-5-mb:\n%s", got, b.state())
	}
	st, err := b.Status("demo")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range st.Updates {
		got = append(got, u.ID)
	}
	if strings.Join(got, " ") != "u-1 u-2 u-3 u-4 u-5 u-6 u-5-mb" {
		t.Errorf("the session's updates read back: %v", got)
	}
	b.assertClean()

	again := b.reconcile()
	if again.Moved != 0 || again.Commit != "" {
		t.Errorf("reconcile again: %+v", again)
	}
}

// A project one machine added while the other worked in another: the merge
// brings the new project's current state from one side only; Reconcile
// records no session and makes no commit, and both projects stay whole.
func TestProjectAddedOnOneMachine(t *testing.T) {
	t.Parallel()
	a, b := twoMachines(t, t0)
	a.tick(time.Minute)
	a.ok(a.InitProject("second"))
	a.ok(a.Start(session.StartOptions{Project: "second", Objective: "new project"}))
	b.tick(time.Minute)
	b.ok(b.Start(session.StartOptions{Project: "demo", Objective: "on b"}))
	if !b.pull(a) {
		t.Fatal("git pull made no merge commit")
	}
	rep := b.reconcile()
	if rep.Merges != 1 || len(rep.Abandoned)+len(rep.Joined)+rep.Moved != 0 || rep.Commit != "" {
		t.Errorf("report: %+v", rep)
	}
	for project, want := range map[string]string{"demo": "on b", "second": "new project"} {
		if st, err := b.Current(project); err != nil || st.Objective != want || st.Status != session.StatusActive {
			t.Errorf("%s: %s %q (%v), want active %q", project, st.Status, st.Objective, err, want)
		}
	}
	b.assertClean()
}

// Reconcile on a vault that merged nothing looks at no merge and commits
// nothing; a fast-forward brings no merge either.
func TestReconcileWithoutMerges(t *testing.T) {
	t.Parallel()
	a, b := twoMachines(t, t0)
	a.ok(a.Start(session.StartOptions{Project: "demo", Objective: "alone"}))
	head := a.git("rev-parse", "HEAD")
	rep := a.reconcile()
	if rep.Merges != 0 || rep.Commit != "" || len(rep.Abandoned)+len(rep.Joined)+rep.Moved != 0 {
		t.Errorf("a: %+v", rep)
	}
	if a.git("rev-parse", "HEAD") != head {
		t.Errorf("reconcile with nothing to do made a commit")
	}
	if b.pull(a) {
		t.Fatal("a fast-forward made a merge")
	}
	if rep := b.reconcile(); rep.Merges != 0 || rep.Commit != "" {
		t.Errorf("b after a fast-forward: %+v", rep)
	}
}

// Reconcile repeated under its operation id on the same merge does nothing
// again: no second commit, the lost session recorded once.
func TestReconcileRepeatedWithOpID(t *testing.T) {
	t.Parallel()
	a, b := twoMachines(t, t0)
	a.tick(time.Minute)
	a.ok(a.Start(session.StartOptions{Project: "demo", Objective: "on a"}))
	b.tick(2 * time.Minute)
	b.ok(b.Start(session.StartOptions{Project: "demo", Objective: "on b"}))
	lost := b.sessionID()
	b.pull(a)
	first, err := b.WithOp("sync-1").Reconcile()
	if err != nil || len(first.Abandoned) != 1 || first.Commit == "" {
		t.Fatalf("first: %+v %v", first, err)
	}
	head := b.git("rev-parse", "HEAD")
	again, err := b.WithOp("sync-1").Reconcile()
	if err != nil || len(again.Abandoned)+len(again.Joined)+again.Moved != 0 {
		t.Errorf("repeated: %+v %v", again, err)
	}
	if got := b.git("rev-parse", "HEAD"); got != head {
		t.Errorf("the repeat made a commit")
	}
	if n := strings.Count(b.git("ls-files", "demo/sessions"), lost+".md"); n != 1 {
		t.Errorf("%s recorded %d times", lost, n)
	}
	b.assertClean()
}
