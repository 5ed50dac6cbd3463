package session

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// testService returns a service over a fresh vault with project demo, made
// as `sessionvault init --project demo` makes it, under a clock that starts
// at defaultNow; the test moves it through the returned pointer.
func testService(tb testing.TB) (*Service, *time.Time) {
	tb.Helper()
	now := defaultNow
	clock := func() time.Time { return now }
	root := filepath.Join(tb.TempDir(), "vault")
	if err := makeVault(root, "demo", clock); err != nil {
		tb.Fatal(err)
	}
	v, err := vault.Open(root)
	if err != nil {
		tb.Fatal(err)
	}
	return &Service{V: v, MD: markdown.New(), Now: clock, parsed: &parsedNotes{}}, &now
}

// headOf is the vault's current commit.
func headOf(tb testing.TB, s *Service) string {
	tb.Helper()
	h, err := s.V.Head()
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// wantCode fails unless err carries code.
func wantCode(tb testing.TB, err error, code errs.Code) *errs.Error {
	tb.Helper()
	if !errs.Is(err, code) {
		tb.Fatalf("error %v (code %s), want %s", err, errs.CodeOf(err).Name, code.Name)
	}
	e, _ := err.(*errs.Error)
	return e
}

// TestTextFieldsRefuseNULAndInvalidUTF8: a NUL byte or invalid UTF-8 in
// any text an operation takes is refused before anything is written, with
// UPDATE_VALIDATION_FAILED naming the field; the session and the vault's
// history are as they were.
func TestTextFieldsRefuseNULAndInvalidUTF8(t *testing.T) {
	t.Parallel()
	s, _ := testService(t)
	if _, err := s.Start(StartOptions{Project: "demo", Objective: "Clean text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Block("demo", "stuck", "low"); err != nil {
		t.Fatal(err)
	}
	head := headOf(t, s)
	before, err := os.ReadFile(filepath.Join(s.V.Root, "demo", CurrentStateNote))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"a\x00b", "a\xffb"} {
		for _, c := range []struct {
			field string
			run   func() error
		}{
			{"objective", func() error {
				_, err := s.Start(StartOptions{Project: "demo", Objective: bad, Force: true})
				return err
			}},
			{"epic", func() error {
				_, err := s.Start(StartOptions{Project: "demo", Objective: "ok", Epic: bad, Force: true})
				return err
			}},
			{"message", func() error { _, err := s.Update(UpdateOptions{Project: "demo", Message: bad}); return err }},
			{"type", func() error { _, err := s.Update(UpdateOptions{Project: "demo", Message: "ok", Type: bad}); return err }},
			{"tag", func() error {
				_, err := s.Update(UpdateOptions{Project: "demo", Message: "ok", Tags: []string{"fine", bad}})
				return err
			}},
			{"rationale", func() error {
				_, err := s.Decide(DecideOptions{Project: "demo", Title: "t", Choice: "c", Rationale: bad})
				return err
			}},
			{"alternative", func() error {
				_, err := s.Decide(DecideOptions{Project: "demo", Title: "t", Choice: "c", Rationale: "r", Alternatives: []string{bad}})
				return err
			}},
			{"category", func() error {
				_, err := s.Decide(DecideOptions{Project: "demo", Title: "t", Choice: "c", Rationale: "r", Category: bad})
				return err
			}},
			{"description", func() error { _, err := s.Block("demo", bad, ""); return err }},
			{"severity", func() error { _, err := s.Block("demo", "ok", bad); return err }},
			{"resolution", func() error { _, err := s.Resolve("demo", "b-1", bad); return err }},
			{"blocker", func() error { _, err := s.Resolve("demo", bad, "done"); return err }},
			{"summary", func() error { _, err := s.End("demo", bad, nil); return err }},
			{"next", func() error { _, err := s.End("demo", "ok", []string{bad}); return err }},
			{"session", func() error { _, err := s.Recover("demo", bad, true); return err }},
			{"item", func() error { _, err := s.RecordEvidence(EvidenceOptions{Project: "demo", Item: bad}); return err }},
			{"file", func() error {
				_, err := s.RecordEvidence(EvidenceOptions{Project: "demo", Item: "c-1", File: bad})
				return err
			}},
		} {
			e := wantCode(t, c.run(), errs.UpdateValidationFailed)
			if e.Details["flag"] != c.field && e.Details["field"] != c.field {
				t.Errorf("%q in %s: the error names %v, want the field %s", bad, c.field, e.Details, c.field)
			}
		}
	}
	if h := headOf(t, s); h != head {
		t.Fatal("a refused operation made a commit")
	}
	after, err := os.ReadFile(filepath.Join(s.V.Root, "demo", CurrentStateNote))
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatalf("a refused operation changed the state note:\n%s", after)
	}
}

// TestHeartbeatAndHookHeartbeat: a heartbeat of an idle project is refused
// and writes nothing, the hooks' heartbeat does nothing then; with a
// session active both move its last sign of life without a commit, and a
// state changed outside the engine keeps the hooks' heartbeat quiet.
func TestHeartbeatAndHookHeartbeat(t *testing.T) {
	t.Parallel()
	s, now := testService(t)
	_, err := s.Heartbeat("demo")
	wantCode(t, err, errs.NoActiveSession)
	if err := s.HookHeartbeat("demo"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.V.ReadState("heartbeat-demo"); err == nil {
		t.Fatal("a heartbeat of an idle project was written")
	}
	_, err = s.Heartbeat("nosuch")
	wantCode(t, err, errs.ProjectNotFound)

	out, err := s.Start(StartOptions{Project: "demo", Objective: "Alive"})
	if err != nil {
		t.Fatal(err)
	}
	head := headOf(t, s)
	*now = now.Add(10 * time.Minute)
	st, err := s.Heartbeat("")
	if err != nil {
		t.Fatal(err)
	}
	if st.Session != out.ID || st.LastSign == nil || !st.LastSign.Equal(*now) {
		t.Fatalf("after the heartbeat: session %s, last sign %v, want %s", st.Session, st.LastSign, *now)
	}
	*now = now.Add(10 * time.Minute)
	if err := s.HookHeartbeat("demo"); err != nil {
		t.Fatal(err)
	}
	if b := s.LastBeat("demo", out.ID); b == nil || !b.Equal(*now) {
		t.Fatalf("last beat after the hooks' heartbeat = %v, want %s", b, *now)
	}
	if b := s.LastBeat("demo", "2026-01-01-session-01"); b != nil {
		t.Fatalf("another session's last beat = %v", b)
	}
	if headOf(t, s) != head {
		t.Fatal("a heartbeat made a commit")
	}
	// A garbled heartbeat file is no sign of life.
	if err := s.V.WriteState("heartbeat-demo", []byte("yesterday "+out.ID+"\n")); err != nil {
		t.Fatal(err)
	}
	if b := s.LastBeat("demo", out.ID); b != nil {
		t.Fatalf("garbled heartbeat read as %v", b)
	}

	if err := s.HookHeartbeat("demo"); err != nil {
		t.Fatal(err)
	}
	last := *now

	// The mode forged by hand: the hooks' heartbeat does not vouch for the
	// state.
	rel := filepath.Join(s.V.Root, "demo", CurrentStateNote)
	data, err := os.ReadFile(rel)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), "\nmode: coding\n", "\nmode: disabled\n", 1)
	if forged == string(data) {
		t.Fatalf("no mode property to forge in:\n%s", data)
	}
	if err := os.WriteFile(rel, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(10 * time.Minute)
	if err := s.HookHeartbeat("demo"); err != nil {
		t.Fatal(err)
	}
	if b := s.LastBeat("demo", out.ID); b == nil || !b.Equal(last) {
		t.Fatalf("last beat %v after the hooks' heartbeat of a tampered state, want it left at %s", b, last)
	}
}

// TestGuardFacts: the facts a PreToolUse decision reads: none active when
// idle; for an active session its mode and the start gate's MUST items that
// lack evidence, none once the state was read, none in disabled mode; a
// sealed property changed by hand is refused as tampering.
func TestGuardFacts(t *testing.T) {
	t.Parallel()
	s, _ := testService(t)
	f, err := s.Guard("demo")
	if err != nil {
		t.Fatal(err)
	}
	if f.Active || f.Session != "" || len(f.StartMissing) != 0 {
		t.Fatalf("idle facts %+v", f)
	}
	out, err := s.Start(StartOptions{Project: "demo", Objective: "Guarded"})
	if err != nil {
		t.Fatal(err)
	}
	ids := func() []string {
		t.Helper()
		f, err := s.Guard("demo")
		if err != nil {
			t.Fatal(err)
		}
		if !f.Active || f.Session != out.ID || f.Mode != "coding" || f.GateError != "" {
			t.Fatalf("active facts %+v", f)
		}
		var ids []string
		for _, m := range f.StartMissing {
			ids = append(ids, m.ID)
		}
		return ids
	}
	// The objective was observed by start itself; the branch item is a
	// SHOULD: only "read the current state" is open.
	if got := ids(); !reflect.DeepEqual(got, []string{"c-1"}) {
		t.Fatalf("start gate missing %v, want c-1", got)
	}
	// Asked again (from the cache while nothing changed): the same.
	if got := ids(); !reflect.DeepEqual(got, []string{"c-1"}) {
		t.Fatalf("start gate missing %v on the second reading", got)
	}
	// The state handed to the agent (what `status` and SessionStart do)
	// is observed: the gate passes with no evidence recorded by hand.
	if err := s.ObserveStateRead("demo", "status"); err != nil {
		t.Fatal(err)
	}
	if got := ids(); len(got) != 0 {
		t.Fatalf("after the state was read, missing %v", got)
	}
	if _, err := s.SetMode("demo", protocol.Disabled); err != nil {
		t.Fatal(err)
	}
	if f, err := s.Guard("demo"); err != nil || f.Mode != "disabled" || len(f.StartMissing) != 0 {
		t.Fatalf("disabled facts %+v, %v", f, err)
	}
	// The mode put back by hand, past the engine.
	rel := filepath.Join(s.V.Root, "demo", CurrentStateNote)
	data, err := os.ReadFile(rel)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), "\nmode: disabled\n", "\nmode: coding\n", 1)
	if forged == string(data) {
		t.Fatalf("no mode property to forge in:\n%s", data)
	}
	if err := os.WriteFile(rel, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Guard("demo"); err == nil {
		t.Fatal("the guard read a state whose sealed mode was changed by hand")
	}
}

// TestCommandLogs: which notes are command logs, and committing them: paths
// that are not a session's commands.md are never committed, a changed log
// is, as the agent's edit; the logs' commit is due until one was made.
func TestCommandLogs(t *testing.T) {
	t.Parallel()
	for rel, want := range map[string]bool{
		"demo/sessions/2026-11-23-session-01/commands.md": true,
		"demo/sessions/commands.md":                       false,
		"demo/sessions/2026-11-23-session-01/notes.md":    false,
		"demo/notes/2026-11-23-session-01/commands.md":    false,
		"a/demo/sessions/x/commands.md":                   false,
	} {
		if got := IsCommandLog(rel); got != want {
			t.Errorf("IsCommandLog(%q) = %v, want %v", rel, got, want)
		}
	}

	s, _ := testService(t)
	if !s.LogsCommitDue("demo") {
		t.Fatal("the logs' commit is not due before any was made")
	}
	rel := CommandLogPath("demo", "2026-11-23-session-01")
	other := "demo/scratch.md"
	for _, r := range []string{rel, other} {
		p := filepath.Join(s.V.Root, filepath.FromSlash(r))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("| 2026-11-23T10:00:00Z | go test | success |\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !s.NoteExists(rel) || s.NoteExists("../outside.md") || s.NoteExists("demo/none.md") {
		t.Fatal("NoteExists disagrees with the disk")
	}
	head := headOf(t, s)
	if c, err := s.CommitCommandLogs("demo", "", other); err != nil || c != "" {
		t.Fatalf("committing no log: %q, %v", c, err)
	}
	if headOf(t, s) != head {
		t.Fatal("a path that is not a command log was committed")
	}
	c, err := s.CommitCommandLogs("demo", other, rel)
	if err != nil || c == "" {
		t.Fatalf("committing the log: %q, %v", c, err)
	}
	pending, err := s.V.Uncommitted("demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].Path != other {
		t.Fatalf("after committing the log, pending %+v, want only %s", pending, other)
	}
	if s.LogsCommitDue("demo") {
		t.Fatal("the logs' commit is due right after one")
	}
	if err := s.V.WriteState("history-committed-demo", []byte("not a time")); err != nil {
		t.Fatal(err)
	}
	if !s.LogsCommitDue("demo") {
		t.Fatal("an unreadable record of the last commit does not make it due")
	}
}

// TestProjectsAndTimes: the projects are the vault's folders that hold a
// current-state note, sorted; times given on flags are read in RFC 3339 and
// the short forms, anything else refused.
func TestProjectsAndTimes(t *testing.T) {
	t.Parallel()
	s, _ := testService(t)
	if _, err := s.InitProject("alpha"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.V.Root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := s.Projects()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"alpha", "demo"}) {
		t.Fatalf("projects %v, want alpha demo", got)
	}
	for v, want := range map[string]string{
		"2026-11-25T09:30:00+01:00": "2026-11-25T08:30:00Z",
		"2026-11-25T09:30:00Z":      "2026-11-25T09:30:00Z",
	} {
		tm, err := s.ParseTime(v)
		if err != nil || tm.UTC().Format(time.RFC3339) != want {
			t.Errorf("ParseTime(%q) = %v, %v; want %s", v, tm, err, want)
		}
	}
	if _, err := s.ParseTime("next tuesday"); err == nil {
		t.Fatal("ParseTime read \"next tuesday\"")
	}
}

// TestObservedEvidenceReachesTheNote: what the engine observed between
// operations (the state read through `status`) is written on the item's
// checklist line by the next operation, with what saw it; the update itself
// ticks "record updates". No evidence is recorded by hand.
func TestObservedEvidenceReachesTheNote(t *testing.T) {
	t.Parallel()
	s, _ := testService(t)
	if _, err := s.Start(StartOptions{Project: "demo", Objective: "Observed"}); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(s.V.Root, "demo", CurrentStateNote)
	if data, _ := os.ReadFile(note); !strings.Contains(string(data), "- [ ] **MUST** Read the current state (`session-current-state`) ^c-1") {
		t.Fatalf("c-1 ticked before the state was read:\n%s", data)
	}
	if err := s.ObserveStateRead("demo", "status"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(UpdateOptions{Project: "demo", Message: "first step"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(note)
	for _, want := range []string{"- [x] **MUST** Read the current state (`session-current-state`) · **evidence:** observed: status ",
		"- [x] **MUST** Record the session's progress as updates · **evidence:** observed: update u-1 "} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the note lacks %q:\n%s", want, data)
		}
	}
	st, err := s.Verified("demo")
	if err != nil {
		t.Fatal(err)
	}
	if it := st.StartChecklist[0]; !it.Done || it.Unverified {
		t.Errorf("c-1 after the update = %+v, want done and sealed", it)
	}
}

// TestHandedOverBeforeTheSessionStarts: what SessionStart hands over before
// `start` (the state and the latest history) is ticked by the start itself,
// and spent by it.
func TestHandedOverBeforeTheSessionStarts(t *testing.T) {
	t.Parallel()
	s, _ := testService(t)
	if err := s.ObserveStateRead("demo", "SessionStart"); err != nil {
		t.Fatal(err)
	}
	if err := s.ObserveHistoryRead("demo", "SessionStart"); err != nil {
		t.Fatal(err)
	}
	data, err := s.V.ReadState("observed-demo")
	if err != nil || len(data) == 0 {
		t.Fatalf("no observations recorded: %v", err)
	}
	if _, err := s.Start(StartOptions{Project: "demo", Objective: "Handed over"}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Verified("demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 4} {
		if it := st.StartChecklist[i]; !it.Done || !strings.HasPrefix(it.Evidence, "observed: SessionStart ") {
			t.Errorf("%s = %+v, want done by SessionStart's observation", it.ID, it)
		}
	}
	// The start spent them: the next session starts with nothing observed.
	if got := s.observations("demo"); len(got) != 0 {
		t.Errorf("observations after start: %+v", got)
	}
}

// TestEvidenceLinesAreBoundToTheirProject: a signed tool-evidence or
// observation line copied into another project's file (the same session id
// there) counts for nothing.
func TestEvidenceLinesAreBoundToTheirProject(t *testing.T) {
	t.Parallel()
	s, _ := testService(t)
	proto := "# Session protocol\n\n## Session start\n\n| Req | Step | Evidence |\n|---|---|---|\n| MUST | Run a shell command | `tool: Bash` |\n| MUST | Read the current state | `file: session-current-state.md` |\n"
	if err := os.WriteFile(filepath.Join(s.V.Root, "SESSION-PROTOCOL.md"), []byte(proto), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InitProject("other"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"demo", "other"} {
		if _, _, err := s.Accept(p); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Start(StartOptions{Project: p, Objective: "Bound"}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := s.RecordToolCall("demo", "Bash"); err != nil || len(got) != 1 {
		t.Fatalf("RecordToolCall = %v, %v", got, err)
	}
	if err := s.ObserveStateRead("demo", "status"); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Current("demo")
	if _, _, ok := s.toolSeen("demo", st.Session, "c-1"); !ok {
		t.Fatal("the tool call is not seen in its own project")
	}
	for _, name := range []string{"tools", "observed"} {
		data, err := s.V.ReadState(name + "-demo")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.V.WriteState(name+"-other", data); err != nil {
			t.Fatal(err)
		}
	}
	other, _ := s.Current("other")
	if other.Session != st.Session {
		t.Fatalf("the two projects' sessions are %s and %s; the test needs one id", st.Session, other.Session)
	}
	if _, _, ok := s.toolSeen("other", other.Session, "c-1"); ok {
		t.Error("a tool line copied from another project counts")
	}
	if _, ok := s.readSeen("other", other.Session, obsStateRead, s.NowUTC()); ok {
		t.Error("an observation copied from another project counts")
	}
}
