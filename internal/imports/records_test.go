package imports

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// Two chats of an aider history, as aider appends them (times local to the
// vault's zone, Europe/Berlin).
const chatOne = `# aider chat started at 2024-05-30 10:22:13

> Aider v0.36.0  
> Model: gpt-4o with diff edit format  

#### /add src/cart.py  

> Added /home/dev/shop/src/cart.py to the chat  

#### fix the double discount  

I'll keep the larger discount.

> Applied edit to src/cart.py  
> Commit 3e9f0a1 fix: apply only the larger discount  
`

const chatTwo = `# aider chat started at 2024-06-02 18:05:41

> Model: claude-3-opus with diff edit format  

#### add the eta field to /orders  

Done.
`

// aiderChats parses an aider history as the aider importer does, in the
// vault's time zone.
func aiderChats(t testing.TB, s *Service, history string) []importer.Session {
	t.Helper()
	loc, err := s.V.Config.Location()
	if err != nil {
		t.Fatal(err)
	}
	logs, skipped, err := importer.ParseAiderHistory(".aider.chat.history.md", []byte(history), loc)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("parsing the history: %v %+v", err, skipped)
	}
	return logs
}

// sha is the SHA-256 of b, lower-case hex.
func sha(b string) string { s := sha256.Sum256([]byte(b)); return hex.EncodeToString(s[:]) }

// importChats imports the chats of history and checks that progress was
// called once per chat, in order.
func importChats(t testing.TB, s *Service, history string, dryRun bool) ImportReport {
	t.Helper()
	logs := aiderChats(t, s, history)
	var calls []int
	rep, res, err := s.ImportRecords("demo", logs, ImportOptions{DryRun: dryRun, What: "aider chats"}, func(done, total int) {
		if total != len(logs) {
			t.Errorf("progress total %d, want %d", total, len(logs))
		}
		calls = append(calls, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != len(logs) || (len(calls) > 0 && calls[len(calls)-1] != len(logs)) {
		t.Errorf("progress called with %v for %d chats", calls, len(logs))
	}
	if rep.DryRun != dryRun {
		t.Errorf("report DryRun %v", rep.DryRun)
	}
	if (res.Commit != "") != (rep.Sessions+rep.Updated > 0 && !dryRun) {
		t.Errorf("commit %q for report %+v", res.Commit, rep)
	}
	return rep
}

// An aider history imports as one archived session per chat, each keeping
// its chat's text, in one commit; a dry run says so and writes nothing;
// a second import changes nothing. A chat that went on rewrites its
// record and its history entry — unless a person edited them: an edited
// record whose source is unchanged is unchanged, one whose source changed
// is kept and skipped with the reason, and so is one whose kept text was
// edited; a person's history entry is kept as written.
func TestImportRecordsAider(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := withTimeZone(t, testService(t, &now), "Europe/Berlin", &now)
	history := "\n" + chatOne + "\n" + chatTwo
	one, two := "demo/sessions/2024-05-30-aider-102213.md", "demo/sessions/2024-06-02-aider-180541.md"

	before := servicetest.Take(t, s.V.Root)
	if rep := importChats(t, s, history, true); rep.Sessions != 2 || rep.Unchanged != 0 || len(rep.Skipped) != 0 {
		t.Errorf("dry run: %+v", rep)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "a dry run")

	commits := len(servicetest.Subjects(t, s.V.Root))
	if rep := importChats(t, s, history, false); rep.Sessions != 2 || rep.Decisions != 0 || len(rep.Skipped) != 0 {
		t.Errorf("first import: %+v", rep)
	}
	if got := servicetest.Subjects(t, s.V.Root); len(got) != commits+1 || got[0] != "import: 2 sessions from aider chats" {
		t.Errorf("commits: %q", got[:2])
	}
	servicetest.AssertClean(t, s.V.Root)
	rec := servicetest.ReadNote(t, s.V.Root, one)
	for _, want := range []string{"\nstatus: complete\n", "\nstarted: 2024-05-30T08:22:13Z\n", "\nsource: .aider.chat.history.md\n", "\nsource_format: aider-chat\n",
		"\nobjective: fix the double discount\n", "\nsource_bytes: " + strconv.Itoa(len(chatOne)) + "\n", "\nsource_sha256: " + sha(chatOne) + "\n",
		"\n- 2024-05-30T08:22:13Z · note · /add src/cart.py ^u-1\n", "\n- Commit 3e9f0a1 fix: apply only the larger discount\n",
		"\n## Original text\n\nThe source `.aider.chat.history.md` as imported, byte for byte:\n\n```markdown\n" + chatOne + "```\n"} {
		if !strings.Contains(rec, want) {
			t.Errorf("the record lacks %q:\n%s", want, rec)
		}
	}
	if hist := servicetest.ReadNote(t, s.V.Root, "demo/session-history.md"); strings.Count(hist, "### [[demo/sessions/") != 2 {
		t.Errorf("history:\n%s", hist)
	}
	if rep, err := s.Check(func(int) {}); err != nil || len(rep.Problems) > 0 {
		t.Errorf("check: %+v %v", rep.Problems, err)
	}

	before = servicetest.Take(t, s.V.Root)
	if rep := importChats(t, s, history, false); rep.Sessions != 0 || rep.Unchanged != 2 || rep.Updated != 0 {
		t.Errorf("second import: %+v", rep)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "a second import")

	// The second chat went on: its record and history entry follow.
	grown := chatTwo + "\n#### and document it  \n\nDocumented.\n"
	history = "\n" + chatOne + "\n" + grown
	before = servicetest.Take(t, s.V.Root)
	if rep := importChats(t, s, history, true); rep.Updated != 1 || rep.Unchanged != 1 {
		t.Errorf("dry run of the update: %+v", rep)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "a dry run of an update")
	if rep := importChats(t, s, history, false); rep.Updated != 1 || rep.Unchanged != 1 || rep.Sessions != 0 {
		t.Errorf("after the chat went on: %+v", rep)
	}
	if got := servicetest.Subjects(t, s.V.Root)[0]; got != "import: 0 sessions, 1 updated, from aider chats" {
		t.Errorf("commit %q", got)
	}
	rec = servicetest.ReadNote(t, s.V.Root, two)
	hist := servicetest.ReadNote(t, s.V.Root, "demo/session-history.md")
	if !strings.Contains(rec, "· note · and document it ^u-2\n") || !strings.Contains(rec, "\nsource_sha256: "+sha(grown)+"\n") ||
		!strings.Contains(hist, "2 user messages, 2 replies") || strings.Contains(hist, "1 user message, 1 reply") {
		t.Errorf("the grown chat's record:\n%s\nhistory:\n%s", rec, hist)
	}
	servicetest.AssertClean(t, s.V.Root)

	// A person adds to the first record: the same chat is unchanged; a chat
	// that went on leaves the record as the person has it.
	mine := servicetest.ReadNote(t, s.V.Root, one) + "\n## My notes\n\nAsk  Sam.\n"
	servicetest.PersonCommits(t, s.V.Root, map[string]string{one: mine})
	if rep := importChats(t, s, history, false); rep.Unchanged != 2 || len(rep.Skipped) != 0 {
		t.Errorf("after a person's edit: %+v", rep)
	}
	history = "\n" + chatOne + "\n#### one more  \n\n" + "\n" + grown
	before = servicetest.Take(t, s.V.Root)
	rep := importChats(t, s, history, false)
	if len(rep.Skipped) != 1 || rep.Skipped[0].Path != ".aider.chat.history.md" ||
		!strings.Contains(rep.Skipped[0].Reason, "the source changed since it was imported, and "+one+" was edited in the vault since: kept the vault's copy") {
		t.Errorf("an edited record of a changed chat: %+v", rep)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "skipping an edited record")

	// A person edits the text the second record keeps, and the history
	// entry of the second chat; the chat goes on once more.
	rec = strings.Replace(servicetest.ReadNote(t, s.V.Root, two), "#### and document it", "#### and document it well", 1)
	hist = servicetest.ReadNote(t, s.V.Root, "demo/session-history.md")
	servicetest.PersonCommits(t, s.V.Root, map[string]string{two: rec})
	before = servicetest.Take(t, s.V.Root)
	rep = importChats(t, s, history, false)
	if len(rep.Skipped) != 2 || !strings.Contains(rep.Skipped[1].Reason, "the source text kept in it was edited (it no longer matches its source_sha256)") {
		t.Errorf("a record whose kept text was edited: %+v", rep.Skipped)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "skipping a record whose text was edited")

	servicetest.PersonCommits(t, s.V.Root, map[string]string{two: strings.Replace(rec, "document it well", "document it", 1),
		"demo/session-history.md": strings.Replace(hist, "2 user messages, 2 replies", "two messages (Sam)", 1)})
	history += "\n#### thanks  \n"
	rep = importChats(t, s, history, false)
	if rep.Updated != 1 {
		t.Errorf("the chat went on again: %+v", rep)
	}
	if got := servicetest.ReadNote(t, s.V.Root, "demo/session-history.md"); !strings.Contains(got, "two messages (Sam)") || strings.Contains(got, "3 user messages") {
		t.Errorf("the person's history entry was rewritten:\n%s", got)
	}
	if !strings.Contains(servicetest.ReadNote(t, s.V.Root, two), "· note · thanks ^u-3\n") {
		t.Errorf("the record was not updated:\n%s", servicetest.ReadNote(t, s.V.Root, two))
	}
	servicetest.AssertClean(t, s.V.Root)
}

// A Claude Code session note written on Windows (CRLF) is kept with LF
// endings and its SHA-256 still names the source's bytes; a second import
// finds it unchanged; the commit names what was imported ("imported
// sessions" by default).
func TestImportRecordsClaudeSessionCRLF(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := withTimeZone(t, testService(t, &now), "UTC", &now)
	text := "# Development Session - 2025-01-16 13:47 - editor\r\n\r\n## Goals\r\n- Build the editor\r\n\r\n## Progress\r\n\r\n### Update - 2025-01-16 14:15\r\n\r\n**Summary**: routes in place\r\n"
	l, err := importer.ParseClaudeSession(".claude/sessions/2025-01-16-1347-editor.md", []byte(text), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	rep, res, err := s.ImportRecords("demo", []importer.Session{l}, ImportOptions{}, nil)
	if err != nil || rep.Sessions != 1 || res.Commit == "" {
		t.Fatalf("import: %+v %+v %v", rep, res, err)
	}
	if got := servicetest.Subjects(t, s.V.Root)[0]; got != "import: 1 sessions from imported sessions" {
		t.Errorf("commit %q", got)
	}
	rec := servicetest.ReadNote(t, s.V.Root, "demo/sessions/"+l.ID+".md")
	if !strings.Contains(rec, "\nsource_sha256: "+sha(text)+"\n") || !strings.Contains(rec, "as imported, byte for byte (its CRLF line endings shown as LF):") ||
		!strings.Contains(rec, "```markdown\n"+strings.ReplaceAll(text, "\r\n", "\n")+"```\n") || strings.Contains(rec, "\r") ||
		!strings.Contains(rec, "\n- 2025-01-16T14:15:00Z · note · routes in place ^u-1\n") {
		t.Errorf("the record:\n%s", rec)
	}
	before := servicetest.Take(t, s.V.Root)
	if rep, _, err := s.ImportRecords("demo", []importer.Session{l}, ImportOptions{}, nil); err != nil || rep.Unchanged != 1 {
		t.Errorf("again: %+v %v", rep, err)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "a second import")
}

// Sessions an import cannot write are skipped with the reason — an id that
// cannot name a note, a record the vault already has that keeps no source
// text — and the others are imported; an unknown project is refused and
// nothing changes. (A record over the 10 MB a note may have is not
// skipped but fails the import: see the report of these tests.)
func TestImportRecordsSkips(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	day := time.Date(2025, 1, 16, 13, 47, 0, 0, time.UTC)
	servicetest.PersonCommits(t, s.V.Root, map[string]string{"demo/sessions/taken.md": "---\ntype: session\n---\n# taken\n"})
	logs := []importer.Session{
		{ID: "../escape", SourcePath: "a.md", Format: importer.FormatClaudeSession, Date: day, Original: []byte("x\n")},
		{ID: "taken", SourcePath: "taken.md", Format: importer.FormatClaudeSession, Date: day, Original: []byte("z\n")},
		{ID: "fine", SourcePath: "fine.md", Format: importer.FormatClaudeSession, Date: day, Objective: "Fine", Original: []byte("# fine\n")},
	}
	before := servicetest.Take(t, s.V.Root)
	_, _, err := s.ImportRecords("nope", logs, ImportOptions{}, nil)
	servicetest.WantCode(t, err, errs.ProjectNotFound, "an unknown project")
	_, _, err = s.ImportSessions("nope", logs, nil)
	servicetest.WantCode(t, err, errs.ProjectNotFound, "an unknown project (session logs)")
	servicetest.AssertUnchanged(t, s.V.Root, before, "an unknown project")

	rep, _, err := s.ImportRecords("demo", logs, ImportOptions{What: "notes"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != 1 || len(rep.Skipped) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	for i, want := range []string{`session id "../escape" must be letters, digits`, "the source text kept in it was edited"} {
		if !strings.Contains(rep.Skipped[i].Reason, want) || rep.Skipped[i].Path != logs[i].SourcePath {
			t.Errorf("skipped %d: %+v, want %q", i, rep.Skipped[i], want)
		}
	}
	if got := servicetest.ReadNote(t, s.V.Root, "demo/sessions/taken.md"); got != "---\ntype: session\n---\n# taken\n" {
		t.Errorf("the vault's record was overwritten:\n%s", got)
	}
	for _, p := range []string{"escape.md", "demo/escape.md"} {
		if _, err := os.Stat(filepath.Join(s.V.Root, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if got := servicetest.Subjects(t, s.V.Root)[0]; got != "import: 1 sessions from notes" {
		t.Errorf("commit %q", got)
	}
	servicetest.AssertClean(t, s.V.Root)
}

// The decisions of session logs: a note each, named by the session's date
// and the decision; a title the session repeats gets "(2)"; a decision
// note the vault already has is kept and not counted again. The history
// lists a session by its end.
func TestImportSessionsDecisions(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	day := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	existing := "demo/" + session.DecisionsDir + "/2025-03-01-s2-use-sqlite.md"
	servicetest.PersonCommits(t, s.V.Root, map[string]string{existing: "---\ntype: decision\n---\n# Mine\n"})
	logs := []importer.Session{
		{ID: "s1", SourcePath: "sessions/s1.json", Format: "json-legacy", Date: day, Ended: day.Add(2 * time.Hour), Objective: "Storage",
			Decisions: []importer.Decision{{Title: "Use SQLite", Choice: "SQLite", Rationale: "one file"}, {Title: "Use SQLite", Choice: "SQLite again"}, {Choice: "WAL mode"}}},
		{ID: "s2", SourcePath: "sessions/s2.md", Format: "markdown", Date: day, Decisions: []importer.Decision{{Title: "Use SQLite"}}},
	}
	var calls int
	rep, res, err := s.ImportSessions("demo", logs, func(done, total int) { calls++ })
	if err != nil || res.Commit == "" {
		t.Fatal(err)
	}
	if rep.Sessions != 2 || rep.Decisions != 3 || calls != 2 {
		t.Errorf("report %+v, progress called %d times", rep, calls)
	}
	if got := servicetest.Subjects(t, s.V.Root)[0]; got != "import: 2 sessions and 3 decisions from session logs" {
		t.Errorf("commit %q", got)
	}
	for _, p := range []string{"2025-03-01-s1-use-sqlite.md", "2025-03-01-s1-use-sqlite-2.md", "2025-03-01-s1-wal-mode.md"} {
		if _, err := os.Stat(filepath.Join(s.V.Root, "demo", session.DecisionsDir, p)); err != nil {
			t.Errorf("decision note %s: %v", p, err)
		}
	}
	rec := servicetest.ReadNote(t, s.V.Root, "demo/sessions/s1.md")
	for _, want := range []string{"|Use SQLite (2)]] · **choice:** SQLite again · **why:** Not recorded in the session log. ^d-2", "|WAL mode]] · **choice:** WAL mode", "\nended: 2025-03-01T11:00:00Z\n"} {
		if !strings.Contains(rec, want) {
			t.Errorf("s1's record lacks %q:\n%s", want, rec)
		}
	}
	if got := servicetest.ReadNote(t, s.V.Root, existing); got != "---\ntype: decision\n---\n# Mine\n" {
		t.Errorf("the vault's decision note was overwritten:\n%s", got)
	}
	if objective := servicetest.ReadNote(t, s.V.Root, "demo/sessions/s2.md"); !strings.Contains(objective, "\nobjective: s2\n") {
		t.Errorf("a session without an objective:\n%s", objective)
	}
	servicetest.AssertClean(t, s.V.Root)
}

// A Claude Code transcript whose summary is longer than the record's
// summary property keeps (many commits) still has its history entry
// rewritten when the session goes on: its record keeps a digest, not the
// transcript, so the entry is matched with the summary the record's Summary
// section holds, not the clipped property.
func TestImportRecordsLongSummaryRewritesHistory(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	var tr strings.Builder
	n := 0
	event := func(typ, message string) {
		n++
		fmt.Fprintf(&tr, `{"type":%q,"sessionId":"4f35e220-c435-4cf7-b9b9-f40426042847","cwd":"/home/dev/shop","gitBranch":"main","uuid":"u-%d","timestamp":"2025-09-14T08:%02d:%02d.000Z","message":%s}`+"\n", typ, n, n/60, n%60, message)
	}
	event("user", `{"role":"user","content":"move the pricing rules into their own modules"}`)
	commit := func(i int, msg string) {
		event("assistant", fmt.Sprintf(`{"role":"assistant","model":"claude-opus-4-1-20250805","content":[{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"git commit -am \"%s\""}}]}`, i, msg))
		event("user", fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"[main %07x] %s"}]}`, i, 0x3e9f0a1+i, msg))
	}
	for i := 0; i < 30; i++ {
		commit(i, fmt.Sprintf("move rule %d of the pricing service into its own module", i))
	}
	imp := func(text string) ImportReport {
		t.Helper()
		l, skipped, err := importer.ParseClaudeCode("-home-dev-shop/4f35e220-c435-4cf7-b9b9-f40426042847.jsonl", strings.NewReader(text), time.UTC)
		if err != nil || len(skipped) > 0 {
			t.Fatalf("parsing the transcript: %v %+v", err, skipped)
		}
		rep, _, err := s.ImportRecords("demo", []importer.Session{l}, ImportOptions{What: "Claude Code transcripts"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := imp(tr.String()); rep.Sessions != 1 {
		t.Fatalf("first import: %+v", rep)
	}
	hist := servicetest.ReadNote(t, s.V.Root, "demo/session-history.md")
	if !strings.Contains(hist, "rule 29 of the pricing service") || strings.Count(hist, "### [[demo/sessions/") != 1 {
		t.Fatalf("the first import's history entry lacks the summary's end:\n%s", hist)
	}

	commit(30, "document the pricing rules")
	if rep := imp(tr.String()); rep.Updated != 1 {
		t.Fatalf("the session went on: %+v", rep)
	}
	hist = servicetest.ReadNote(t, s.V.Root, "demo/session-history.md")
	if strings.Count(hist, "### [[demo/sessions/") != 1 || !strings.Contains(hist, "document the pricing rules") {
		t.Errorf("the history entry was not rewritten:\n%s", hist)
	}
	servicetest.AssertClean(t, s.V.Root)
}
