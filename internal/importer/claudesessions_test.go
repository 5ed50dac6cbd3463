package importer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Asia/Tokyo on any machine
)

func at(s string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

func byID(ss []Session) map[string]Session {
	m := map[string]Session{}
	for _, s := range ss {
		m[s.ID] = s
	}
	return m
}

// Every session note of the fixture folder, whatever it holds (a full
// session, one started and never ended, one in Japanese, one without a
// title, goals or end), becomes a session with what it states; the rest is
// skipped with the reason.
func TestScanClaudeSessions(t *testing.T) {
	ss, skipped, err := ScanClaudeSessions("testdata/claude/repo", time.UTC, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := byID(ss)
	if len(ss) != 5 {
		t.Fatalf("%d sessions: %v", len(ss), reflect.ValueOf(got).MapKeys())
	}
	full := got["2025-01-16-1347-campaign-editor"]
	if full.SourcePath != ".claude/sessions/2025-01-16-1347-campaign-editor.md" || full.Format != FormatClaudeSession ||
		!full.Date.Equal(at("2025-01-16 13:47")) || !full.Ended.Equal(at("2025-01-16 16:02")) || full.Status != "ended" ||
		full.Branch != "feature/campaign-editor" {
		t.Errorf("full session: %+v", full)
	}
	if want := "campaign-editor: Dedicated editor page for e-mail campaigns; Markdown with live preview; Auto-save every 10 seconds"; full.Objective != want {
		t.Errorf("objective %q", full.Objective)
	}
	if !reflect.DeepEqual(full.Updates, []string{"Editor route and layout in place", "Live preview with remark, sanitised with rehype-sanitize"}) ||
		!full.UpdateTimes[0].Equal(at("2025-01-16 14:15")) || !full.UpdateTimes[1].Equal(at("2025-01-16 15:40")) {
		t.Errorf("updates %q at %v", full.Updates, full.UpdateTimes)
	}
	if len(full.Outcomes) != 3 || full.Outcomes[0] != "Campaign editor page with markdown support" ||
		!reflect.DeepEqual(full.NextSteps, []string{"Auto-save (needs a draft table first)"}) || !reflect.DeepEqual(full.Issues, []string{"#142"}) {
		t.Errorf("outcomes %q next %q issues %q", full.Outcomes, full.NextSteps, full.Issues)
	}
	data, _ := os.ReadFile("testdata/claude/repo/.claude/sessions/2025-01-16-1347-campaign-editor.md")
	if !bytes.Equal(full.Original, data) {
		t.Error("the original text is not the file's bytes")
	}

	open := got["2025-02-03-0915-auth-refactor"]
	if open.Status != "active: named in .current-session" || !open.Ended.IsZero() || len(open.Updates) != 0 ||
		open.Objective != "auth-refactor: Move session handling from cookies to signed tokens; Keep the old login working during the migration" {
		t.Errorf("started, never ended: %+v", open)
	}
	ja := got["2025-03-10-2210"]
	if ja.Objective != "データ移行: 旧テーブル orders_v1 から orders へデータを移行する; 移行中もサービスを止めない" ||
		!ja.Ended.Equal(at("2025-03-11 00:00")) || len(ja.Updates) != 2 || !ja.UpdateTimes[1].Equal(at("2025-03-10 23:55")) ||
		!reflect.DeepEqual(ja.NextSteps, []string{"移行後の旧テーブル削除"}) {
		t.Errorf("Japanese session: %+v", ja)
	}
	bare := got["2025-04-01-0800"]
	if bare.Status != "open: no session-end summary" || len(bare.Updates) != 2 || bare.Objective == "" || !bare.Date.Equal(at("2025-04-01 08:00")) {
		t.Errorf("no title, no goals: %+v", bare)
	}
	old := got["2024-12-20-1600-year-end-cleanup"]
	if old.SourcePath != ".claude/sessions/archive/2024-12-20-1600-year-end-cleanup.md" || !old.Ended.Equal(at("2024-12-20 17:30")) ||
		!reflect.DeepEqual(old.Outcomes, []string{"Removed 7 of 9 dead flags"}) {
		t.Errorf("sub-folder session: %+v", old)
	}
	if ss[0].ID != "2024-12-20-1600-year-end-cleanup" {
		t.Errorf("not sorted by start: first %s", ss[0].ID)
	}

	want := map[string]string{
		".claude/sessions/.current-session":         "names 2025-02-03-0915-auth-refactor.md",
		".claude/sessions/2025-05-05-1200-empty.md": "empty file",
		".claude/sessions/README.md":                "not a session",
		".claude/sessions/notes.txt":                "not a .md file",
	}
	for _, s := range skipped {
		if w, ok := want[s.Path]; !ok || !strings.Contains(s.Reason, w) {
			t.Errorf("skipped %s: %q", s.Path, s.Reason)
		}
		delete(want, s.Path)
	}
	if len(want) > 0 {
		t.Errorf("not skipped: %v", want)
	}
}

// The paths reported do not depend on how the folder was named, and a
// folder with no session notes is an error.
func TestClaudeSessionsFolder(t *testing.T) {
	for _, dir := range []string{"testdata/claude/repo", "testdata/claude/repo/.claude", "testdata/claude/repo/.claude/sessions"} {
		ss, _, err := ScanClaudeSessions(dir, time.UTC, nil)
		if err != nil || len(ss) != 5 || ss[1].SourcePath != ".claude/sessions/2025-01-16-1347-campaign-editor.md" {
			t.Errorf("%s: %v %d", dir, err, len(ss))
		}
	}
	if _, _, err := ScanClaudeSessions("testdata/memorybank", time.UTC, nil); !errors.Is(err, ErrNoSessionsFolder) {
		t.Errorf("no sessions folder: %v", err)
	}
}

// CRLF line endings, times read in the vault's zone, a big note (hundreds
// of updates) and notes that are not sessions.
func TestParseClaudeSessionVariants(t *testing.T) {
	data, _ := os.ReadFile("testdata/claude/repo/.claude/sessions/2025-03-10-2210-データ移行.md")
	lf, err := ParseClaudeSession("2025-03-10-2210-データ移行.md", data, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	crlfData := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	crlf, err := ParseClaudeSession("2025-03-10-2210-データ移行.md", crlfData, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(crlf.Original, crlfData) {
		t.Error("CRLF: the original is not the file's bytes")
	}
	crlf.Original, lf.Original = nil, nil
	if !reflect.DeepEqual(crlf, lf) {
		t.Errorf("CRLF reads differently:\n%+v\n%+v", crlf, lf)
	}

	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := ParseClaudeSession("2025-03-10-2210-x.md", data, tokyo); !s.Date.Equal(time.Date(2025, 3, 10, 13, 10, 0, 0, time.UTC)) {
		t.Errorf("a time without a zone is read in the vault's zone: %v", s.Date)
	}

	var big bytes.Buffer
	big.WriteString("# Development Session - 2025-06-01 07:00 - long-haul\n\n## Goals\n- Port the billing service\n\n## Progress\n\n")
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&big, "### Update - 2025-06-01 %02d:%02d\n\n**Summary**: step %d of the port\n\n**Details**: %s\n\n", 7+i/60, i%60, i, strings.Repeat("detail ", 60))
	}
	if big.Len() < 200<<10 {
		t.Fatalf("the big note is only %d bytes", big.Len())
	}
	s, err := ParseClaudeSession("2025-06-01-0700-long-haul.md", big.Bytes(), time.UTC)
	if err != nil || len(s.Updates) != 600 || s.Updates[599] != "step 599 of the port" || !s.UpdateTimes[599].Equal(at("2025-06-01 16:59")) {
		t.Errorf("big note: %v, %d updates", err, len(s.Updates))
	}

	for name, tc := range map[string]struct {
		data string
		want error
	}{
		"empty.md":  {" \n\n", ErrEmpty},
		"notes.md":  {"# Shopping list\n- milk\n", ErrNotSessionLog},
		"latin1.md": {"# Development Session\n\xe9", nil},
	} {
		_, err := ParseClaudeSession(name, []byte(tc.data), time.UTC)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A session titled as one but with no time anywhere has no start.
	if _, err := ParseClaudeSession("x.md", []byte("# Session: refactor\n\n### Update\n\nDid it.\n"), time.UTC); err == nil || !strings.Contains(err.Error(), "no start time") {
		t.Errorf("no start time: %v", err)
	}
}

// Reparse reads a record's kept text back into the same session.
func TestReparseClaudeSession(t *testing.T) {
	ss, _, err := ScanClaudeSessions("testdata/claude/repo", time.UTC, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		r, err := Reparse(s, s.Original, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != r.Status && !strings.HasPrefix(s.Status, "active") {
			t.Errorf("%s: status %q, again %q", s.ID, s.Status, r.Status)
		}
		r.Status = s.Status
		if !reflect.DeepEqual(r, s) {
			t.Errorf("%s read again differs:\n%+v\n%+v", s.ID, r, s)
		}
	}
	if _, err := Reparse(Session{Format: FormatMarkdown}, []byte("x"), time.UTC); err == nil {
		t.Error("a format without kept text was read again")
	}
}
