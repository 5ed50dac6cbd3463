package notemerge

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// testLists are the sections the tests' notes keep as lists, as the
// engine's current state does.
var testLists = map[string]bool{"Updates": true, "Decisions": true, "Blockers": true, "End checklist": true}

// testOwnership owns testLists, with entries ending in ^<letter>-<n>
// (and a machine's name).
var testOwnership = Ownership{
	List:   func(_, _, title string) bool { return testLists[title] },
	Record: func(_, typ string) bool { return typ == "session" },
	EntryID: func(line string) string {
		if id := EntryID(line); testEntryRe.MatchString(id) {
			return id
		}
		return ""
	},
}

var testEntryRe = regexp.MustCompile(`^[a-z]-\d+(?:-[a-z][a-z0-9]*)?$`)

func mergeTest(base, ours, theirs []byte) ([]byte, bool) {
	return MergeNotes("p/note.md", base, ours, theirs, testOwnership)
}

const mergeBase = `---
type: session-state
status: active
updated: 2026-11-23T10:00:00Z
version: 7
tags:
  - sessionvault
---
# Current session

## Updates

- 2026-11-23T10:00:00Z · note · first ^u-1

## Decisions

## My notes

line one
line two
`

// Two clones that both recorded updates in one session, changed properties
// and edited a person's section: updates of both sides once each, in time
// order; properties per key; the person's true conflict marked, alone.
func TestMergeNotes(t *testing.T) {
	ours := strings.Replace(mergeBase, "- 2026-11-23T10:00:00Z · note · first ^u-1\n",
		"- 2026-11-23T10:00:00Z · note · first ^u-1\n- 2026-11-23T10:05:00Z · note · ours a ^u-2\n- 2026-11-23T10:20:00Z · note · ours b ^u-3\n", 1)
	ours = strings.Replace(ours, "updated: 2026-11-23T10:00:00Z\nversion: 7", "updated: 2026-11-23T10:20:00Z\nversion: 9", 1)
	ours = strings.Replace(ours, "line two\n", "line two, ours\n", 1)
	ours = strings.Replace(ours, "## Decisions\n\n", "## Decisions\n\n- 2026-11-23T10:06:00Z · [[p/decisions/x|x]] · **choice:** a ^d-1\n\n", 1)
	theirs := strings.Replace(mergeBase, "- 2026-11-23T10:00:00Z · note · first ^u-1\n",
		"- 2026-11-23T10:00:00Z · note · first, edited ^u-1\n- 2026-11-23T10:10:00Z · note · theirs a ^u-2-lap\n", 1)
	theirs = strings.Replace(theirs, "updated: 2026-11-23T10:00:00Z\nversion: 7", "updated: 2026-11-23T10:10:00Z\nversion: 8\nlinear: ABC-1", 1)
	theirs = strings.Replace(theirs, "line two\n", "line two, theirs\n", 1)
	theirs = strings.Replace(theirs, "line one\n", "line zero\nline one\n", 1)

	got, conflicted := mergeTest([]byte(mergeBase), []byte(ours), []byte(theirs))
	want := `---
type: session-state
status: active
updated: 2026-11-23T10:20:00Z
version: 9
linear: ABC-1
tags:
  - sessionvault
---
# Current session

## Updates

- 2026-11-23T10:00:00Z · note · first, edited ^u-1
- 2026-11-23T10:05:00Z · note · ours a ^u-2
- 2026-11-23T10:10:00Z · note · theirs a ^u-2-lap
- 2026-11-23T10:20:00Z · note · ours b ^u-3

## Decisions

- 2026-11-23T10:06:00Z · [[p/decisions/x|x]] · **choice:** a ^d-1

## My notes

line zero
line one
<<<<<<< ours
line two, ours
=======
line two, theirs
>>>>>>> theirs
`
	if string(got) != want || !conflicted {
		t.Fatalf("MergeNotes (conflicted %v):\n%s\nwant:\n%s", conflicted, got, want)
	}
	// The same entry added on both sides (both pulled it from a third clone)
	// is there once; nothing conflicts.
	both := strings.Replace(mergeBase, "first ^u-1\n", "first ^u-1\n- 2026-11-23T10:30:00Z · note · third ^u-2-desk\n", 1)
	got, conflicted = mergeTest([]byte(mergeBase), []byte(both+"ours\n"), []byte(both))
	if strings.Count(string(got), "^u-2-desk") != 1 || conflicted {
		t.Fatalf("an entry both sides added: (conflicted %v)\n%s", conflicted, got)
	}
}

// One clone compacted (moved its older updates to the session's log) while
// the other recorded more: the moved updates stay out of the note.
func TestMergeNotesKeepsACompaction(t *testing.T) {
	o := "# S\n\n## Updates\n\n- 2026-11-23T10:00:00Z · note · one ^u-1\n- 2026-11-23T10:01:00Z · note · two ^u-2\n- 2026-11-23T10:02:00Z · note · three ^u-3\n\n## Decisions\n"
	compacted := "# S\n\n## Updates\n\n- 2026-11-23T10:02:00Z · note · three ^u-3\n- 2026-11-23T10:03:00Z · note · four ^u-4\n\n## Decisions\n"
	more := "# S\n\n## Updates\n\n- 2026-11-23T10:00:00Z · note · one ^u-1\n- 2026-11-23T10:01:00Z · note · two ^u-2\n- 2026-11-23T10:02:00Z · note · three ^u-3\n- 2026-11-23T10:04:00Z · note · five ^u-4-lap\n\n## Decisions\n"
	want := "# S\n\n## Updates\n\n- 2026-11-23T10:02:00Z · note · three ^u-3\n- 2026-11-23T10:03:00Z · note · four ^u-4\n- 2026-11-23T10:04:00Z · note · five ^u-4-lap\n\n## Decisions\n"
	for _, c := range [][2]string{{compacted, more}, {more, compacted}} {
		if got, _ := mergeTest([]byte(o), []byte(c[0]), []byte(c[1])); string(got) != want {
			t.Errorf("MergeNotes:\n%s\nwant:\n%s", got, want)
		}
	}
}

// Entries the two sides put into a section that was empty make one tight
// list: no blank line left between them by the two insertions landing on
// either side of the section's blank line.
func TestMergeNotesEntriesIntoAnEmptySection(t *testing.T) {
	base := "---\nx: 1\n---\n## Updates\n\n## Decisions\n"
	ours := "---\nx: 1\n---\n## Updates\n\n- 2026-11-25T02:46:40Z · note · one ^u-1\n\n## Decisions\n"
	theirs := "---\nx: 1\n---\n## Updates\n\n- 2026-11-25T02:46:41Z · note · two ^u-1-mb\n\n## Decisions\n"
	want := "---\nx: 1\n---\n## Updates\n\n- 2026-11-25T02:46:40Z · note · one ^u-1\n- 2026-11-25T02:46:41Z · note · two ^u-1-mb\n\n## Decisions\n"
	for _, sides := range [][2]string{{ours, theirs}, {theirs, ours}} {
		got, conflicted := mergeTest([]byte(base), []byte(sides[0]), []byte(sides[1]))
		if conflicted || string(got) != want {
			t.Errorf("merge (conflicted %v):\n%s\nwant:\n%s", conflicted, got, want)
		}
	}
}

// The same note made on two machines (no ancestor): what both have is
// kept once, each side's own entries are added, and the status further
// along wins.
func TestMergeNotesAddedOnBothSides(t *testing.T) {
	rec := func(status, entry, summary string) string {
		return "---\ntype: session\nstatus: " + status + "\nsession: s-1\n---\n# Session s-1\n\n## Updates\n\n- 2026-11-25T02:46:40Z · note · shared ^u-1\n" + entry + "\n## Summary\n\n" + summary + "\n"
	}
	ours := rec("abandoned", "- 2026-11-25T02:46:41Z · note · mine ^u-2-ma\n", "Abandoned: another session won.")
	theirs := rec("complete", "- 2026-11-25T02:46:42Z · note · theirs ^u-2\n", "Done.")
	for _, sides := range [][2]string{{ours, theirs}, {theirs, ours}} {
		got, _ := mergeTest(nil, []byte(sides[0]), []byte(sides[1]))
		g := string(got)
		for _, want := range []string{"status: complete\n", "# Session s-1\n", "## Updates\n", "shared ^u-1\n", "mine ^u-2-ma\n", "theirs ^u-2\n", "Done.\n"} {
			if n := strings.Count(g, want); n != 1 {
				t.Errorf("%q %d times in:\n%s", want, n, g)
			}
		}
	}
}

// A line both sides added at two places is a person's line written twice
// and stays twice; in a session's record (Ownership.Record), which each
// machine's reconciliation joins a lost session's lines into, it is the same
// line joined twice and lands once.
func TestMergeNotesLineAddedTwice(t *testing.T) {
	base := "---\ntype: %s\n---\n## Next steps\n\nfirst\nsecond\n"
	ours := "---\ntype: %s\n---\n## Next steps\n\nfirst\nnew line\nsecond\n"
	theirs := "---\ntype: %s\n---\n## Next steps\n\nfirst\nsecond\nthird\nnew line\n"
	for _, c := range []struct {
		typ  string
		want int
	}{{"note", 2}, {"session", 1}} {
		f := func(s string) []byte { return []byte(fmt.Sprintf(s, c.typ)) }
		for _, sides := range [][2]string{{ours, theirs}, {theirs, ours}} {
			got, _ := mergeTest(f(base), f(sides[0]), f(sides[1]))
			if n := strings.Count(string(got), "new line\n"); n != c.want || !strings.Contains(string(got), "third\n") {
				t.Errorf("type %s: %q %d times, want %d:\n%s", c.typ, "new line", n, c.want, got)
			}
		}
	}
}

// The first way person text was lost: a line both sides' new text shares
// ("same") was dropped from one side. Both appended sections are kept
// whole, ours then theirs.
func TestMergeNotesSharedLineKeptOnBothSides(t *testing.T) {
	base := mergeBase
	ours := base + "\n## One\n\nsame\n\nalpha\n"
	theirs := base + "\n## Two\n\nsame\n\nbeta\n"
	got, conflicted := mergeTest([]byte(base), []byte(ours), []byte(theirs))
	if want := base + "\n## One\n\nsame\n\nalpha\n\n## Two\n\nsame\n\nbeta\n"; string(got) != want || conflicted {
		t.Fatalf("merge (conflicted %v):\n%s\nwant:\n%s", conflicted, got, want)
	}
}

// The second: a section lost every blank line when the other side's new
// text carried a block id (any line ending in ^id made the region a list of
// entries).
func TestMergeNotesBlockIDKeepsBlankLines(t *testing.T) {
	base := mergeBase
	ours := base + "\n## One\n\nalpha ^x\n"
	theirs := base + "\n## Two\n\nbeta\n\ngamma\n"
	for _, sides := range [][2]string{{ours, theirs}, {theirs, ours}} {
		got, conflicted := mergeTest([]byte(base), []byte(sides[0]), []byte(sides[1]))
		want := base + strings.TrimPrefix(sides[0], base) + strings.TrimPrefix(sides[1], base)
		if string(got) != want || conflicted {
			t.Errorf("merge (conflicted %v):\n%s\nwant:\n%s", conflicted, got, want)
		}
	}
}

// The third: a person's block id was merged as if it were an engine
// entry's id, across the whole note: the same ^gh in two sections made one
// line of two, in the wrong section. Only the engine's lists unify ids.
func TestMergeNotesPersonBlockIDsAreText(t *testing.T) {
	base := mergeBase + "\n## One\n\n- one ^gh\n"
	ours := strings.Replace(base, "first ^u-1\n", "first ^u-1\n- 2026-11-23T10:30:00Z · note · a ^u-2\n", 1)
	theirs := base + "\n## Two\n\n- two ^gh\n"
	for _, sides := range [][2]string{{ours, theirs}, {theirs, ours}} {
		got, conflicted := mergeTest([]byte(base), []byte(sides[0]), []byte(sides[1]))
		want := strings.Replace(theirs, "first ^u-1\n", "first ^u-1\n- 2026-11-23T10:30:00Z · note · a ^u-2\n", 1)
		if string(got) != want || conflicted {
			t.Errorf("merge (conflicted %v):\n%s\nwant:\n%s", conflicted, got, want)
		}
	}
	// An engine id shape in a person's section is text too: both kept.
	a := mergeBase + "\n## Mine\n\n- copied ^u-1\n"
	b := mergeBase + "\n## Yours\n\n- also copied ^u-1\n"
	got, _ := mergeTest([]byte(mergeBase), []byte(a), []byte(b))
	if n := strings.Count(string(got), "^u-1\n"); n != 3 {
		t.Errorf("^u-1 on %d lines, want 3 (the entry and two person lines):\n%s", n, got)
	}
}

// Both sides edited the same line of a person's section: only the lines
// that differ are marked; what both changed alike stays once, outside the
// markers. Both sides changed nothing but blank lines at one place: no
// conflict.
func TestMergeNotesConflictMarksOnlyTheDifference(t *testing.T) {
	base := "# N\n\n## Mine\n\none\ntwo\nthree\n"
	ours := "# N\n\n## Mine\n\none\nsame start\ntwo, ours\nsame end\nthree\n"
	theirs := "# N\n\n## Mine\n\none\nsame start\ntwo, theirs\nsame end\nthree\n"
	got, conflicted := mergeTest([]byte(base), []byte(ours), []byte(theirs))
	want := "# N\n\n## Mine\n\none\nsame start\n<<<<<<< ours\ntwo, ours\n=======\ntwo, theirs\n>>>>>>> theirs\nsame end\nthree\n"
	if string(got) != want || !conflicted {
		t.Errorf("merge (conflicted %v):\n%s\nwant:\n%s", conflicted, got, want)
	}
	base = "# N\n\ntext\n\n\nmore\n"
	ours = "# N\n\ntext\nours\n\nmore\n"
	theirs = "# N\n\ntext\n\ntheirs\nmore\n"
	got, conflicted = mergeTest([]byte(base), []byte(ours), []byte(theirs))
	if conflicted || !strings.Contains(string(got), "ours\n") || !strings.Contains(string(got), "theirs\n") {
		t.Errorf("blank lines changed on both sides (conflicted %v):\n%s", conflicted, got)
	}
}

// A note a person made on two machines (no ancestor) keeps both texts
// whole, ours then theirs, not interleaved by the lines they share.
func TestMergeNotesPersonNoteAddedOnBothSides(t *testing.T) {
	ours := "# Ideas\n\n- alpha\n- shared\n"
	theirs := "# Ideas\n\n- beta\n- shared\n"
	got, _ := mergeTest(nil, []byte(ours), []byte(theirs))
	if want := ours + theirs; string(got) != want {
		t.Errorf("merge:\n%s\nwant:\n%s", got, want)
	}
}

// Two clones took one task's lock before a sync: after the merge, on both
// clones, the earlier taker holds it — holder, time and expiry from one side.
func TestMergeNotesTaskLockEarlierTakerWins(t *testing.T) {
	base := "---\ntype: task\ntask_id: docs\nstatus: pending\nupdated: 2026-11-23T10:00:00Z\n---\n# Docs\n"
	lock := func(holder, at, exp string) string {
		return strings.Replace(base, "updated: 2026-11-23T10:00:00Z\n", "updated: "+at+"\nlocked_by: "+holder+"\nlocked_at: "+at+"\nlock_expires: "+exp+"\n", 1)
	}
	early := lock("session-b", "2026-11-23T10:01:00Z", "2026-11-23T10:06:00Z")
	late := lock("session-a", "2026-11-23T10:02:00Z", "2026-11-23T10:07:00Z")
	for _, c := range []struct{ name, ours, theirs string }{{"ours late", late, early}, {"ours early", early, late}} {
		m, conflicted := mergeTest([]byte(base), []byte(c.ours), []byte(c.theirs))
		if conflicted {
			t.Fatalf("%s: conflicted:\n%s", c.name, m)
		}
		for _, want := range []string{"locked_by: session-b\n", "locked_at: 2026-11-23T10:01:00Z\n", "lock_expires: 2026-11-23T10:06:00Z\n"} {
			if !strings.Contains(string(m), want) {
				t.Errorf("%s: merged lock lacks %q:\n%s", c.name, want, m)
			}
		}
		if strings.Contains(string(m), "session-a") || strings.Contains(string(m), "10:07:00Z") {
			t.Errorf("%s: the later taker's lock survived:\n%s", c.name, m)
		}
	}
}

// Locks claimed through the remote merge as one (holder, times, machine,
// clone, provisional): a lock claimed on the remote beats a provisional
// one taken earlier offline; a lock taken after the other's lease ended
// replaces it; the same session on two clones is two holders.
func TestMergeNotesTaskLockClaims(t *testing.T) {
	base := "---\ntype: task\ntask_id: docs\nstatus: pending\nupdated: 2026-11-23T10:00:00Z\n---\n# Docs\n"
	lock := func(holder, clone, at, exp string, provisional bool) string {
		p := ""
		if provisional {
			p = "lock_provisional: true\n"
		}
		return strings.Replace(base, "updated: 2026-11-23T10:00:00Z\n", "updated: "+at+"\nlocked_by: "+holder+"\nlocked_at: "+at+"\nlock_expires: "+exp+
			"\nlock_machine: m"+clone+"\nlock_clone: "+clone+"\n"+p, 1)
	}
	for _, c := range []struct{ name, a, b, want, gone string }{
		{"claimed beats an earlier provisional",
			lock("session-a", "ca", "2026-11-23T10:02:00Z", "2026-11-23T10:32:00Z", false),
			lock("session-b", "cb", "2026-11-23T10:01:00Z", "2026-11-23T10:31:00Z", true), "lock_clone: ca\n", "cb"},
		{"a takeover after the lease's end",
			lock("session-a", "ca", "2026-11-23T10:01:00Z", "2026-11-23T10:31:00Z", false),
			lock("session-b", "cb", "2026-11-23T10:40:00Z", "2026-11-23T11:10:00Z", false), "lock_clone: cb\n", "ca"},
		{"one session on two clones",
			lock("session-a", "ca", "2026-11-23T10:01:00Z", "2026-11-23T10:31:00Z", false),
			lock("session-a", "cb", "2026-11-23T10:02:00Z", "2026-11-23T10:32:00Z", true), "lock_clone: ca\n", "cb"},
	} {
		for _, order := range [][2]string{{c.a, c.b}, {c.b, c.a}} {
			m, conflicted := mergeTest([]byte(base), []byte(order[0]), []byte(order[1]))
			if conflicted {
				t.Fatalf("%s: conflicted:\n%s", c.name, m)
			}
			if !strings.Contains(string(m), c.want) || strings.Contains(string(m), c.gone) {
				t.Errorf("%s: merged:\n%s\nwant %q and no %q", c.name, m, c.want, c.gone)
			}
			if c.want == "lock_clone: ca\n" && strings.Contains(string(m), "lock_provisional") {
				t.Errorf("%s: the loser's provisional mark survived:\n%s", c.name, m)
			}
		}
	}
}

// One merge of a long session's current state: 2,000 updates in common, 50
// more on each side, and a person's section appended on each.
func BenchmarkMergeNotesLongSession(b *testing.B) {
	var base strings.Builder
	base.WriteString("---\ntype: session-state\nsession: s-1\nupdated: 2026-11-23T10:00:00Z\n---\n# Current session\n\n## Updates\n\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&base, "- 2026-11-%02dT10:%02d:%02dZ · note · update %d ^u-%d\n", 1+i/3600, i/60%60, i%60, i, i+1)
	}
	base.WriteString("\n## Decisions\n\n## Next steps\n\n## My notes\n\nsome text\n")
	side := func(suffix string, at int) string {
		var s strings.Builder
		for i := 0; i < 50; i++ {
			fmt.Fprintf(&s, "- 2026-11-24T%02d:%02d:00Z · note · %s %d ^u-%d%s\n", at, i, suffix, i, 2001+i, suffix)
		}
		return strings.Replace(base.String(), "\n\n## Decisions", "\n"+strings.TrimSuffix(s.String(), "\n")+"\n\n## Decisions", 1) + "\n## From " + suffix + "\n\nsame\n\ntext\n"
	}
	o, a, t := []byte(base.String()), []byte(side("", 10)), []byte(side("-mb", 11))
	b.ReportAllocs()
	for b.Loop() {
		mergeTest(o, a, t)
	}
}

// Two sides holding different sessions: the winner's session whole
// (properties, lists and the engine's prose), and the other side's person
// sections merged in.
func TestMergeNotesSessionClashKeepsPersonText(t *testing.T) {
	own := testOwnership
	own.Owned = func(_, _, title string) bool { return testLists[title] || title == "Objective" }
	state := func(session, objective, updates, tail string) string {
		return "---\ntype: session-state\nsession: " + session + "\nstarted: 2026-11-23T10:00:00Z\n---\n# Current session\n\n## Objective\n\n" + objective +
			"\n\n## Updates\n\n" + updates + "\n## Mine\n\nkept\n" + tail
	}
	base := state("s-1", "first", "- 2026-11-23T10:00:00Z · note · one ^u-1\n", "")
	ended := state("s-2", "second", "", "")
	wrote := state("s-1", "first", "- 2026-11-23T10:00:00Z · note · one ^u-1\n- 2026-11-23T10:05:00Z · note · late ^u-2-mb\n", "my line\n\n## Theirs\n\n- a ^gh\n")
	want := state("s-2", "second", "", "my line\n\n## Theirs\n\n- a ^gh\n")
	for _, sides := range [][2]string{{ended, wrote}, {wrote, ended}} {
		got, conflicted := MergeNotes("p/session-current-state.md", []byte(base), []byte(sides[0]), []byte(sides[1]), own)
		if string(got) != want || conflicted {
			t.Errorf("merge (conflicted %v):\n%s\nwant:\n%s", conflicted, got, want)
		}
	}
}
