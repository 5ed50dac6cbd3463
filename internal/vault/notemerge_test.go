package vault

import (
	"strings"
	"testing"
)

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

	got, conflicted := MergeNotes([]byte(mergeBase), []byte(ours), []byte(theirs))
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
	got, conflicted = MergeNotes([]byte(mergeBase), []byte(both+"ours\n"), []byte(both))
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
		if got, _ := MergeNotes([]byte(o), []byte(c[0]), []byte(c[1])); string(got) != want {
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
		got, conflicted := MergeNotes([]byte(base), []byte(sides[0]), []byte(sides[1]))
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
		got, _ := MergeNotes(nil, []byte(sides[0]), []byte(sides[1]))
		g := string(got)
		for _, want := range []string{"status: complete\n", "# Session s-1\n", "## Updates\n", "shared ^u-1\n", "mine ^u-2-ma\n", "theirs ^u-2\n", "Done.\n"} {
			if n := strings.Count(g, want); n != 1 {
				t.Errorf("%q %d times in:\n%s", want, n, g)
			}
		}
	}
}

// A line both sides added, at two places (it reached each side by another
// route), is kept once.
func TestMergeNotesLineAddedTwiceKeptOnce(t *testing.T) {
	base := "## Next steps\n\nfirst\nsecond\n"
	ours := "## Next steps\n\nfirst\nnew line\nsecond\n"
	theirs := "## Next steps\n\nfirst\nsecond\nthird\nnew line\n"
	for _, sides := range [][2]string{{ours, theirs}, {theirs, ours}} {
		got, _ := MergeNotes([]byte(base), []byte(sides[0]), []byte(sides[1]))
		if n := strings.Count(string(got), "new line\n"); n != 1 || !strings.Contains(string(got), "third\n") {
			t.Errorf("merge:\n%s", got)
		}
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
		m, conflicted := MergeNotes([]byte(base), []byte(c.ours), []byte(c.theirs))
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
