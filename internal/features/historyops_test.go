package features

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// i64 returns a pointer to n.
func i64(n int64) *int64 { return &n }

// A command entry that cannot be recorded — an empty or oversized command,
// arguments or error, a model or agent that is no identifier, a malformed
// task, feature or session id, an unknown status, a negative duration — is
// refused with its code, naming its flag, and no log is written; so is one
// without an active session or for an unknown session.
func TestRecordCommandRefusals(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	big := strings.Repeat("x", session.MaxCommandField+1)
	for _, c := range []struct {
		what string
		o    RecordOptions
		code errs.Code
		flag string
	}{
		{"blank command", RecordOptions{Command: " \t"}, errs.HistoryEntryInvalid, "command"},
		{"long command", RecordOptions{Command: big}, errs.HistoryEntryInvalid, "command"},
		{"long arguments", RecordOptions{Command: "ls", Arguments: big}, errs.HistoryEntryInvalid, "arguments"},
		{"long error", RecordOptions{Command: "ls", Error: big}, errs.HistoryEntryInvalid, "error"},
		{"model with a space", RecordOptions{Command: "ls", Model: "claude opus"}, errs.HistoryEntryInvalid, "model"},
		{"agent with a bracket", RecordOptions{Command: "ls", Agent: "a[1]"}, errs.HistoryEntryInvalid, "agent"},
		{"task with a space", RecordOptions{Command: "ls", TaskID: "a b"}, errs.HistoryEntryInvalid, "task"},
		{"feature without a date", RecordOptions{Command: "ls", FeatureID: "orchestrator"}, errs.InvalidFeatureId, "feature"},
		{"status", RecordOptions{Command: "ls", Status: "ok"}, errs.HistoryEntryInvalid, "status"},
		{"negative duration", RecordOptions{Command: "ls", DurationMs: i64(-1)}, errs.HistoryEntryInvalid, "duration-ms"},
		{"session id with a slash", RecordOptions{Command: "ls", Session: "../x"}, errs.HistoryEntryInvalid, "session"},
		{"no active session", RecordOptions{Command: "ls"}, errs.NoActiveSession, ""},
		{"unknown session", RecordOptions{Command: "ls", Session: "2024-01-01-session-01"}, errs.SessionNotFound, ""},
		{"unknown project", RecordOptions{Project: "nope", Command: "ls"}, errs.ProjectNotFound, ""},
	} {
		if c.o.Project == "" {
			c.o.Project = "demo"
		}
		before := servicetest.Take(t, s.V.Root)
		_, err := s.RecordCommand(c.o)
		servicetest.WantCode(t, err, c.code, c.what)
		var e *errs.Error
		if c.flag != "" && (!errors.As(err, &e) || e.Details["flag"] != c.flag) {
			t.Errorf("%s: %v does not name --%s", c.what, err, c.flag)
		}
		servicetest.AssertUnchanged(t, s.V.Root, before, c.what)
	}
}

// What RecordCommand writes reads back exactly through CommandHistory —
// line breaks, tabs, backslashes and backquotes in the command, its
// arguments and error — each entry one line of the session's log note
// (front matter type command-log), with the session's active task and
// feature unless told otherwise ("-": none), linked when their notes
// exist. With Commit the log is committed at once, as the agent's edit.
func TestRecordCommandReadsBack(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "history"}); err != nil {
		t.Fatal(err)
	}
	newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	head := servicetest.Git(t, s.V.Root, "rev-parse", "HEAD")
	entries := []RecordOptions{
		{Command: "go test ./...\n\techo `done` \\n", Arguments: `{"path":"C:\\temp\\new"}`, Model: "sonnet", Agent: "Explore", DurationMs: i64(1234)},
		{Command: "make lint", Status: session.CommandFailure, Error: "exit status 2\r\nsee ``log``", TaskID: "impl-core"},
		{Command: "``", FeatureID: "-", TaskID: "-"},
		{Command: "git push", FeatureID: "other-2025-01-09", DurationMs: i64(0)},
	}
	for i, o := range entries {
		o.Project = "demo"
		now = now.Add(time.Minute)
		out, err := s.RecordCommand(o)
		if err != nil {
			t.Fatal(err)
		}
		if out.Entry.ID != "h-"+string(rune('1'+i)) || out.Clamped || out.Commit != "" {
			t.Errorf("entry %d: %+v", i+1, out)
		}
	}
	if got := servicetest.Git(t, s.V.Root, "rev-parse", "HEAD"); got != head {
		t.Error("recording without Commit made a commit")
	}
	h, err := s.CommandHistory(HistoryOptions{Project: "demo"})
	if err != nil || len(h.Problems) > 0 || len(h.Entries) != len(entries) || h.Session != "2025-01-09-session-01" {
		t.Fatalf("history: %+v %v", h, err)
	}
	wantFeature := []string{"orch-2025-01-09", "orch-2025-01-09", "", "other-2025-01-09"}
	wantTask := []string{"", "impl-core", "", ""}
	for i, e := range h.Entries {
		o := entries[i]
		status := session.FirstNonEmpty(o.Status, session.CommandSuccess)
		if e.Command != o.Command || e.Arguments != o.Arguments || e.Error != o.Error || e.Model != o.Model || e.Agent != o.Agent || e.Status != status ||
			e.FeatureID != wantFeature[i] || e.TaskID != wantTask[i] || !e.Timestamp.Equal(time.Date(2025, 1, 9, 10, i+1, 0, 0, time.UTC)) ||
			(o.DurationMs == nil) != (e.DurationMs == nil) || (o.DurationMs != nil && *o.DurationMs != *e.DurationMs) || e.Line == 0 {
			ej, _ := json.Marshal(e)
			t.Errorf("entry %d read back as %s\nrecorded %+v", i+1, ej, o)
		}
	}
	log := servicetest.ReadNote(t, s.V.Root, "demo/sessions/2025-01-09-session-01/commands.md")
	lines := strings.Split(log, "\n")
	for _, want := range []string{"type: command-log", "session: 2025-01-09-session-01", "started: 2025-01-09T10:01:00Z",
		"- 2025-01-09T10:01:00Z · success · ``go test ./...\\n\\techo `done` \\\\n`` · **args:** `{\"path\":\"C:\\\\\\\\temp\\\\\\\\new\"}` · **model:** sonnet · **agent:** Explore · **feature:** [[demo/features/orch-2025-01-09|orch-2025-01-09]] · **duration:** 1234 ms ^h-1",
		"- 2025-01-09T10:02:00Z · failure · `make lint` · **task:** impl-core · **feature:** [[demo/features/orch-2025-01-09|orch-2025-01-09]] · **error:** ``` exit status 2\\r\\nsee ``log`` ``` ^h-2",
		"- 2025-01-09T10:03:00Z · success · ``` `` ``` ^h-3",
		"- 2025-01-09T10:04:00Z · success · `git push` · **feature:** other-2025-01-09 · **duration:** 0 ms ^h-4",
	} {
		found := false
		for _, l := range lines {
			found = found || l == want
		}
		if !found {
			t.Errorf("the log lacks the line\n%s\nlog:\n%s", want, log)
		}
	}
	if h.Entries[3].Line != len(lines)-1 {
		t.Errorf("the last entry is said to be on line %d of %d", h.Entries[3].Line, len(lines)-1)
	}

	// Commit commits the log (and only it) at once.
	out, err := s.RecordCommand(RecordOptions{Project: "demo", Command: "ls", Commit: true})
	if err != nil || out.Commit == "" {
		t.Fatalf("commit: %+v %v", out, err)
	}
	if got := servicetest.Git(t, s.V.Root, "show", "--name-only", "--format=%s", "HEAD"); got != "agent-edit: demo/sessions/2025-01-09-session-01/commands.md changed by the agent's command-history call\n\ndemo/sessions/2025-01-09-session-01/commands.md" {
		t.Errorf("the commit:\n%s", got)
	}
	servicetest.AssertClean(t, s.V.Root)
}

// An entry for a session that has ended goes to that session's log, with
// no task or feature of the session that is active now; an active session
// named explicitly is the active one.
func TestRecordCommandForAnArchivedSession(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.End("demo", "done", nil); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "second"}); err != nil {
		t.Fatal(err)
	}
	newFeature(t, s, "Orchestrator", "orch-2025-01-09")
	out, err := s.RecordCommand(RecordOptions{Project: "demo", Session: "2025-01-09-session-01", Command: "late"})
	if err != nil || out.Entry.Session != "2025-01-09-session-01" || out.Entry.FeatureID != "" || out.Entry.Log != "demo/sessions/2025-01-09-session-01/commands.md" {
		t.Fatalf("archived: %+v %v", out, err)
	}
	out, err = s.RecordCommand(RecordOptions{Project: "demo", Session: "2025-01-09-session-02", Command: "now"})
	if err != nil || out.Entry.FeatureID != "orch-2025-01-09" {
		t.Fatalf("the active session by name: %+v %v", out, err)
	}
	h, err := s.CommandHistory(HistoryOptions{Project: "demo", Session: "2025-01-09-session-01"})
	if err != nil || len(h.Entries) != 1 || h.Entries[0].Command != "late" {
		t.Errorf("the archived session's history: %+v %v", h, err)
	}
}

// History queries: the active session's log by default (else the last
// session's), a session by id, "all" logs merged by time; filtered by
// feature and cut to the newest Limit entries. An unknown or malformed
// session is errs.SessionNotFound, a malformed feature
// errs.InvalidFeatureId; a vault without sessions has no history. A line a
// person broke is reported with its line, the others still read.
func TestCommandHistoryQueries(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	if h, err := s.CommandHistory(HistoryOptions{Project: "demo"}); err != nil || len(h.Entries) != 0 || h.Session != "" {
		t.Errorf("no session yet: %+v %v", h, err)
	}
	rec := func(cmd string, o RecordOptions) {
		t.Helper()
		now = now.Add(time.Minute)
		o.Project, o.Command = "demo", cmd
		if _, err := s.RecordCommand(o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "one"}); err != nil {
		t.Fatal(err)
	}
	if h, err := s.CommandHistory(HistoryOptions{Project: "demo"}); err != nil || len(h.Entries) != 0 || h.Session != "2025-01-09-session-01" {
		t.Errorf("a session without a log: %+v %v", h, err)
	}
	newFeature(t, s, "Alpha", "alpha-2025-01-09")
	rec("a1", RecordOptions{})
	rec("a2", RecordOptions{TaskID: "t1"})
	if _, err := s.End("demo", "done", nil); err != nil {
		t.Fatal(err)
	}
	if h, err := s.CommandHistory(HistoryOptions{Project: "demo"}); err != nil || h.Session != "2025-01-09-session-01" || len(h.Entries) != 2 {
		t.Errorf("after the end, the last session's: %+v %v", h, err)
	}
	now = now.Add(time.Minute)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "two"}); err != nil {
		t.Fatal(err)
	}
	rec("b1", RecordOptions{FeatureID: "-"})
	rec("b2", RecordOptions{FeatureID: "alpha-2025-01-09"})
	rec("late-a", RecordOptions{Session: "2025-01-09-session-01"}) // newest, in the older log
	rec("b3", RecordOptions{FeatureID: "-", Status: session.CommandFailure})

	cmds := func(h History) string {
		var out []string
		for _, e := range h.Entries {
			out = append(out, e.Command)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		o    HistoryOptions
		want string
	}{
		{HistoryOptions{}, "b1 b2 b3"},
		{HistoryOptions{Session: "2025-01-09-session-01"}, "a1 a2 late-a"},
		{HistoryOptions{Session: "all"}, "a1 a2 b1 b2 late-a b3"},
		{HistoryOptions{Session: "all", Feature: "alpha-2025-01-09"}, "a1 a2 b2"},
		{HistoryOptions{Session: "all", Limit: 2}, "late-a b3"},
		{HistoryOptions{Limit: 10}, "b1 b2 b3"},
		{HistoryOptions{Session: "all", Feature: "beta-2025-01-09"}, ""},
	} {
		c.o.Project = "demo"
		h, err := s.CommandHistory(c.o)
		if err != nil || cmds(h) != c.want {
			t.Errorf("%+v: %s (%v), want %s", c.o, cmds(h), err, c.want)
		}
		if c.o.Session == "all" && h.Session != "" {
			t.Errorf("%+v: session %q", c.o, h.Session)
		}
	}
	for _, c := range []struct {
		o    HistoryOptions
		code errs.Code
	}{
		{HistoryOptions{Session: "2020-01-01-session-01"}, errs.SessionNotFound},
		{HistoryOptions{Session: "../../etc"}, errs.SessionNotFound},
		{HistoryOptions{Feature: "Alpha"}, errs.InvalidFeatureId},
		{HistoryOptions{Project: "nope"}, errs.ProjectNotFound},
	} {
		c.o.Project = session.FirstNonEmpty(c.o.Project, "demo")
		_, err := s.CommandHistory(c.o)
		servicetest.WantCode(t, err, c.code, "history "+c.o.Session+c.o.Feature+c.o.Project)
	}

	// A person's broken line: reported, the rest read.
	p := filepath.Join(s.V.Root, "demo", "sessions", "2025-01-09-session-02", "commands.md")
	data, _ := os.ReadFile(p)
	broken := "- yesterday · success · `x` ^h-99"
	os.WriteFile(p, append(data, broken+"\r\n"...), 0o644)
	h, err := s.CommandHistory(HistoryOptions{Project: "demo", Session: "all"})
	if err != nil || len(h.Entries) != 6 || len(h.Problems) != 1 || h.Problems[0].Text != broken ||
		h.Problems[0].Line != strings.Count(string(data), "\n")+1 || !strings.Contains(h.Problems[0].Why, "cannot read the time") {
		t.Errorf("a broken line: %d entries, problems %+v (%v)", len(h.Entries), h.Problems, err)
	}
}

// The hook records a call in the session that ended during it (it started
// before the state's last change), and not when it started after; the
// model SessionStart recorded for the Claude Code session names the
// model of its calls, not of another session's.
func TestRecordToolCommandSessionsAndModels(t *testing.T) {
	t.Parallel()
	// The hook measures a call's start on the system clock; the session's
	// clock is set an hour after it, so that the end comes after any call
	// the test makes.
	now := time.Now().UTC().Add(time.Hour).Truncate(time.Second)
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "hooks"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordModel("demo", "claude-1", "claude-opus-4"); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordModel("demo", "claude-1", ""); err != nil { // no model named: the record stays
		t.Fatal(err)
	}
	bash := json.RawMessage(`{"command":"ls"}`)
	log, due, err := s.RecordToolCommand("demo", ToolCall{Tool: "Bash", Input: bash, ClaudeSession: "claude-1"})
	if err != nil || log != "demo/sessions/"+now.Format("2006-01-02")+"-session-01/commands.md" || !due {
		t.Fatalf("first call: %q %v %v (the first entry of a log is due for a commit)", log, due, err)
	}
	if _, _, err := s.RecordToolCommand("demo", ToolCall{Tool: "Bash", Input: bash, ClaudeSession: "claude-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.End("demo", "done", nil); err != nil {
		t.Fatal(err)
	}
	// The call that ended the session: it started a minute ago.
	log2, due, err := s.RecordToolCommand("demo", ToolCall{Tool: "mcp__sessionvault__session_end", Input: json.RawMessage(`{}`), DurationMs: i64(60000)})
	if err != nil || log2 != log || !due {
		t.Errorf("the ending call: %q %v %v", log2, due, err)
	}
	// Without a duration nothing says when a call started; with the session
	// ended it is not recorded.
	if l, _, err := s.RecordToolCommand("demo", ToolCall{Tool: "Bash", Input: bash}); l != "" || err != nil {
		t.Errorf("a call after the end: %q %v", l, err)
	}
	h, err := s.CommandHistory(HistoryOptions{Project: "demo", Session: "all"})
	if err != nil || len(h.Entries) != 3 {
		t.Fatalf("history: %+v %v", h, err)
	}
	if h.Entries[0].Model != "claude-opus-4" || h.Entries[1].Model != "" || h.Entries[2].Command != "mcp__sessionvault__session_end" || h.Entries[2].Arguments != "" || *h.Entries[2].DurationMs != 60000 {
		t.Errorf("entries: %+v", h.Entries)
	}
}

// A call that started after the session ended is not recorded anywhere.
func TestRecordToolCommandAfterTheEnd(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC) // long before the system clock
	s := testService(t, &now)
	if _, err := s.Start(session.StartOptions{Project: "demo", Objective: "hooks"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.End("demo", "done", nil); err != nil {
		t.Fatal(err)
	}
	before := servicetest.Take(t, s.V.Root)
	if l, due, err := s.RecordToolCommand("demo", ToolCall{Tool: "Bash", Input: json.RawMessage(`{"command":"ls"}`), DurationMs: i64(1000)}); l != "" || due || err != nil {
		t.Errorf("a call after the end: %q %v %v", l, due, err)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "a call after the end")
}
