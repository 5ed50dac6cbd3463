package importer

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Session notes in the variants people keep — named YYYY-MM-DD-<slug>,
// "**Started**:" and "Started:" lines, front-matter dates, a date without a
// time, a note whose only date is its first commit — are all read: the
// start and end from the first source that states them, what is only
// estimated marked so, the objective from the title and an Issue or Goal
// line, Todo checklists kept as checklists, dated lines and Notes/Progress
// items as updates. A note that is no session (a README) is skipped with
// the reason.
func TestSessionNoteVariants(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "claude-sessions-variants")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The note whose only date is its commit.
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x",
			"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x", "GIT_AUTHOR_DATE=2026-03-11T16:20:00Z", "GIT_COMMITTER_DATE=2026-03-11T16:20:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "cleanup-session.md", "README.md") // a committed README that names sessions is still no session
	git("commit", "-q", "-m", "notes")

	loc := time.UTC
	logs, skipped, err := ScanClaudeSessions(dir, loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var notes []Skipped
	for _, s := range skipped {
		if !strings.HasSuffix(s.Path, ".git/") {
			notes = append(notes, s)
		}
	}
	if len(notes) != 1 || path.Base(notes[0].Path) != "README.md" || !strings.Contains(notes[0].Reason, "not a session log") || !strings.Contains(notes[0].Reason, "shaped like a session") {
		t.Errorf("skipped = %+v, want the README alone", notes)
	}
	got := map[string]Session{}
	for _, s := range logs {
		got[path.Base(s.SourcePath)] = s
	}
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, w := range []struct {
		file, objective, status string
		start, end              time.Time
		estimated               []string
		updates                 []string
		checklist               []ChecklistItem
	}{
		{file: "2026-03-07-login-page.md", objective: "Login page: #42 Login fails on Safari", status: "in progress",
			start:     at("2026-03-07T20:35:00Z"),
			updates:   []string{"The cookie is set without SameSite", "Safari drops it on the redirect"},
			checklist: []ChecklistItem{{Phase: "Todo", Step: "Reproduce on Safari", Done: true}, {Phase: "Todo", Step: "Fix the cookie flag"}, {Phase: "Todo", Step: "Add a regression test"}}},
		{file: "2026-03-08-refactor.md", objective: "Refactor auth", start: at("2026-03-08T09:10:00Z"), end: at("2026-03-08T23:59:59Z"),
			estimated: []string{"ended: a date without a time (the end of that day assumed)"},
			updates:   []string{"split the handler in two", "moved the token check into middleware", "all tests green"}},
		{file: "notes-on-cache.md", objective: "cache warmup: warm the cache before the first request", start: at("2026-03-09T14:00:00Z"), end: at("2026-03-09T15:30:00Z"),
			updates: []string{"Warmed 12 keys at boot"}},
		{file: "2026-03-10-docs.md", objective: "Docs pass", start: at("2026-03-10T00:00:00Z"),
			estimated: []string{"started: a date without a time (00:00 assumed)"},
			updates:   []string{"Rewrote the quick start", "Fixed two broken links"}},
		{file: "cleanup-session.md", objective: "cleanup", start: at("2026-03-11T16:20:00Z"),
			estimated: []string{"started: the time the note was first committed"},
			updates:   []string{"Removed the dead feature flags"}},
	} {
		s, ok := got[w.file]
		if !ok {
			t.Errorf("%s: not imported", w.file)
			continue
		}
		if s.Objective != w.objective || !s.Date.Equal(w.start) || !s.Ended.Equal(w.end) {
			t.Errorf("%s: objective %q, start %v, end %v\nwant %q, %v, %v", w.file, s.Objective, s.Date, s.Ended, w.objective, w.start, w.end)
		}
		if w.status != "" && s.Status != w.status {
			t.Errorf("%s: status %q, want %q", w.file, s.Status, w.status)
		}
		if !reflect.DeepEqual(s.Estimated, w.estimated) {
			t.Errorf("%s: estimated %q, want %q", w.file, s.Estimated, w.estimated)
		}
		if !reflect.DeepEqual(s.Updates, w.updates) {
			t.Errorf("%s: updates %q, want %q", w.file, s.Updates, w.updates)
		}
		if !reflect.DeepEqual(s.Checklist, w.checklist) {
			t.Errorf("%s: checklist %+v, want %+v", w.file, s.Checklist, w.checklist)
		}
		if string(s.Original) == "" {
			t.Errorf("%s: the source text is not kept", w.file)
		}
	}
}

// A BOM an editor left and a time with fractions of a second are read as
// the rest: the title, and the zone the time states.
func TestSessionNoteBOMAndFractionalSeconds(t *testing.T) {
	loc := time.FixedZone("EST", -5*3600) // the vault's time_zone, not the note's
	src := "\xef\xbb\xbf---\nstarted: 2026-03-09T14:00:00.000Z\n---\n# Login page\n\n## Notes\n\n- done\n"
	s, err := ParseClaudeSession("notes.md", []byte(src), loc)
	if err != nil {
		t.Fatal(err)
	}
	if s.Objective != "Login page" || !s.Date.Equal(time.Date(2026, 3, 9, 14, 0, 0, 0, time.UTC)) || len(s.Estimated) != 0 {
		t.Errorf("objective %q, start %v, estimated %q", s.Objective, s.Date, s.Estimated)
	}
	if string(s.Original) != src {
		t.Error("the source text is not kept byte for byte (its BOM included)")
	}
	if _, err := ParseClaudeSession("bom.md", []byte("\xef\xbb\xbf"), loc); err == nil {
		t.Error("a file holding only a BOM was read as a session")
	}
}
