package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

const ccFixtures = "testdata/claudecode/-home-dev-shop"

// ccMain parses the fixture holding every event type and content block.
func ccMain(t *testing.T) (Session, []Skipped) {
	t.Helper()
	s, skipped, err := readClaudeCodeFile(filepath.Join(ccFixtures, "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"), "-home-dev-shop/4f35e220-c435-4cf7-b9b9-f40426042847.jsonl", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return s, skipped
}

func ccTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// A project folder: one session per transcript, the rest skipped with the
// reason; a session's own folder (its subagents) is not read.
func TestScanClaudeCode(t *testing.T) {
	var progress []int
	ss, skipped, err := ScanClaudeCode(ccFixtures, time.UTC, func(done, total int) { progress = append(progress, done, total) })
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID+" "+s.SourcePath)
	}
	if want := []string{
		"2025-05-26-claude-code-c14ea43d -home-dev-shop/resumed-copy.jsonl",
		"2025-09-14-claude-code-4f35e220 -home-dev-shop/4f35e220-c435-4cf7-b9b9-f40426042847.jsonl",
	}; !reflect.DeepEqual(ids, want) {
		t.Errorf("sessions %q", ids)
	}
	want := []Skipped{
		{"-home-dev-shop/old/", "a folder: not read (give a project folder of ~/.claude/projects, or a .jsonl file)"},
		{"-home-dev-shop/sessions-index.json", "not a .jsonl transcript"},
		{"-home-dev-shop/4f35e220-c435-4cf7-b9b9-f40426042847.jsonl:21", "not JSON: unexpected end of the line in a string (cut short?)"},
		{"-home-dev-shop/agent-a1b2c3d4.jsonl", `not a Claude Code session transcript: only a subagent's events (2 with "isSidechain": true), no session of its own`},
		{"-home-dev-shop/empty.jsonl", "empty file"},
		{"-home-dev-shop/notes.jsonl", "not a Claude Code session transcript: no line is a JSON object (line 1: not JSON: does not start with '{')"},
		{"-home-dev-shop/titles-only.jsonl", "not a Claude Code session transcript: no user or assistant message (events: summary 2)"},
	}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped:\n%q\nwant\n%q", skipped, want)
	}
	if !reflect.DeepEqual(progress, []int{1, 6, 2, 6, 3, 6, 4, 6, 5, 6, 6, 6}) {
		t.Errorf("progress %v", progress)
	}

	// One file, however named: the same session.
	one, sk, err := ScanClaudeCode(filepath.Join(ccFixtures, "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"), time.UTC, nil)
	if err != nil || len(one) != 1 || len(sk) != 1 || !reflect.DeepEqual(one[0], ss[1]) {
		t.Errorf("one file: %v %v", err, sk)
	}
	// The date naming the session is the vault's: 23:27Z on 26 May is
	// the 27th in Lisbon.
	lisbon, err := time.LoadLocation("Europe/Lisbon")
	if err != nil {
		t.Skip(err)
	}
	ss, _, _ = ScanClaudeCode(filepath.Join(ccFixtures, "resumed-copy.jsonl"), lisbon, nil)
	if len(ss) != 1 || ss[0].ID != "2025-05-27-claude-code-c14ea43d" {
		t.Errorf("in Lisbon: %+v", ss)
	}
}

func TestScanClaudeCodeErrors(t *testing.T) {
	if _, _, err := ScanClaudeCode("testdata/claudecode/missing", time.UTC, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	_, skipped, err := ScanClaudeCode(dir, time.UTC, nil)
	if !errors.Is(err, ErrNoTranscripts) || len(skipped) != 1 {
		t.Errorf("no transcript: %v %v", err, skipped)
	}
}

// The transcript holding every event type and content block kind: what
// becomes of each.
func TestParseClaudeCodeSession(t *testing.T) {
	s, skipped := ccMain(t)
	if s.ID != "2025-09-14-claude-code-4f35e220" || s.Format != FormatClaudeCode || s.SourcePath != "-home-dev-shop/4f35e220-c435-4cf7-b9b9-f40426042847.jsonl" {
		t.Errorf("names: %s %s %s", s.ID, s.Format, s.SourcePath)
	}
	// The first and last events (the Caveat a slash command leaves is an
	// event of the session too).
	if !s.Date.Equal(ccTime("2025-09-14T08:00:01Z")) || !s.Ended.Equal(ccTime("2025-09-14T08:40:00Z")) {
		t.Errorf("times %v %v", s.Date, s.Ended)
	}
	// The first prompt typed, not the /model command before it.
	if s.Objective != "The discount is applied twice when a coupon and a member price both apply (see #42). Fix it so only the larger discount counts." {
		t.Errorf("objective %q", s.Objective)
	}
	// The first branch; the commit made by the successful git commit
	// (its output), not the failed one.
	if s.Branch != "main" || s.EndCommit != "1a2b3c4" || s.StartCommit != "" {
		t.Errorf("git: %q %q %q", s.Branch, s.StartCommit, s.EndCommit)
	}
	// Every TodoWrite item once, with its last status.
	if want := []ChecklistItem{
		{Phase: ccTodoPhase, Step: "Find where discounts are applied", Done: true, Evidence: "completed"},
		{Phase: ccTodoPhase, Step: "Apply only the larger discount", Done: true, Evidence: "completed"},
		{Phase: ccTodoPhase, Step: "Add a test for coupon plus member price", Evidence: "in_progress"},
		{Phase: ccTodoPhase, Step: "Update the changelog", Evidence: "pending"},
	}; !reflect.DeepEqual(s.Checklist, want) {
		t.Errorf("checklist %+v", s.Checklist)
	}
	// Prompts and commands, compactions, summary lines; not the Caveat
	// (isMeta), a command's output, tool results, the interrupt, nor the
	// subagent's events. The prompt whose bytes are not UTF-8 is read
	// with U+FFFD.
	wantUpdates := []string{
		"Summary: Fix coupon discount applied twice",
		"/model opus",
		"The discount is applied twice when a coupon and a member price both apply (see #42). Fix it so only the larger discount counts.",
		"does it work for caf\uFFFD prices too?",
		"Conversation compacted (auto, 155000 tokens before)",
		"Compaction summary: This session is being continued from a previous conversation that ran out of context. The conversation is summarized below: Analysis: the coupon and the member discount were both subtracted; fixed in src/cart.py, PR #57 opened.",
		"add a changelog entry too",
	}
	if !reflect.DeepEqual(s.Updates, wantUpdates) {
		t.Errorf("updates:\n%q", s.Updates)
	}
	wantTimes := []string{"", "2025-09-14T08:00:01.1Z", "2025-09-14T08:00:05.12Z", "2025-09-14T08:05:00Z", "2025-09-14T08:20:00Z", "2025-09-14T08:20:01Z", "2025-09-14T08:30:00Z"}
	for i, w := range wantTimes {
		if got := s.UpdateTimes[i]; w == "" && !got.IsZero() || w != "" && !got.Equal(ccTime(w)) {
			t.Errorf("update %d at %v, want %q", i, got, w)
		}
	}
	wantOutcomes := []string{
		"4 prompts, 10 replies, 8 tool calls (2 failed), 2 files edited, 1 commit, 1 compaction, 1 interruption",
		"Models: claude-opus-4-1-20250805, claude-sonnet-4-5-20250929",
		"Claude Code 2.0.61 in /home/dev/shop",
		"Tools: Bash 2, TodoWrite 2, Edit 1, MultiEdit 1, Read 1, Write 1",
		"Edited src/cart.py",
		"Edited tests/test_cart.py",
		"Commit 1a2b3c4 fix: apply only the larger discount",
		"git commit run 2 times, 1 commit made",
		"Branches: main, fix/discount",
		"Not read: 2 subagent (sidechain) events; events of other types (file-history-snapshot 1, future-event 1, progress 1); content blocks of other types (document 1); 1 thinking block; 1 image",
		"1 line not JSON, not read: 21",
	}
	if !reflect.DeepEqual(s.Outcomes, wantOutcomes) {
		t.Errorf("outcomes:\n%q", s.Outcomes)
	}
	if !reflect.DeepEqual(s.Issues, []string{"#42", "PR #57"}) {
		t.Errorf("issues %q", s.Issues)
	}
	if !reflect.DeepEqual(skipped, []Skipped{{"-home-dev-shop/4f35e220-c435-4cf7-b9b9-f40426042847.jsonl:21", "not JSON: unexpected end of the line in a string (cut short?)"}}) {
		t.Errorf("skipped %q", skipped)
	}
}

// The digest kept as the record's text: one line per prompt, reply, tool
// call, failed result, commit, compaction and unreadable line.
func TestParseClaudeCodeDigest(t *testing.T) {
	s, _ := ccMain(t)
	d := string(s.Original)
	if !utf8.ValidString(d) || strings.ContainsAny(d, "\r\x00") {
		t.Fatalf("not clean text: %q", d)
	}
	for _, want := range []string{
		"Claude Code transcript -home-dev-shop/4f35e220-c435-4cf7-b9b9-f40426042847.jsonl in brief, not its JSON:",
		"; left out: 2 subagent events; events of other types (file-history-snapshot 1, future-event 1, progress 1).\n",
		"\nL1 summary: Fix coupon discount applied twice\n",
		"\nL6 08:00:05 user: The discount is applied twice when a coupon and a member price both apply (see #42). Fix it so only the larger discount counts.\n",
		"\nL8 08:00:09 assistant: I'll look at the cart code first.\n",
		"\nL9 08:00:10 → TodoWrite: 3 todos, 0 completed\n",
		"\nL11 08:00:12 → Read: src/cart.py\n",
		"\nL14 08:00:15 ✗ Edit: <tool_use_error>String to replace not found in file. String: price = cart.price - coupon(cart)</tool_use_error>\n",
		"\nL21 not read: not JSON: unexpected end of the line in a string (cut short?)\n",
		"\nL22 08:05:00 user: does it work for caf\uFFFD prices too?\n",
		"\nL25 08:05:06 commit: Commit 1a2b3c4 fix: apply only the larger discount\n",
		"\nL26 08:20:00 compacted: Conversation compacted (auto, 155000 tokens before)\n",
		"\nL32 08:22:30 system api_error error: API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n",
		"\nL38 08:31:01 ✗ Bash: On branch fix/discount nothing to commit, working tree clean\n",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("digest lacks %q:\n%s", want, d)
		}
	}
	for _, not := range []string{"README.md", "thinking", "let me look", "Todos have been modified", "hook_progress", "Set model to opus", "Caveat"} {
		if strings.Contains(d, not) {
			t.Errorf("digest holds %q", not)
		}
	}
	// The same transcript gives the same session, byte for byte.
	again, _ := ccMain(t)
	if !reflect.DeepEqual(again, s) {
		t.Error("a second parse differs")
	}
}

// ccLines joins events into a transcript.
func ccJoin(lines ...string) io.Reader { return strings.NewReader(strings.Join(lines, "\n") + "\n") }

const ccSID = "0b7e6e0a-1c1d-4d2e-9f00-5a5b5c5d5e5f"

// ccEv is one event line with the usual fields.
func ccEv(typ, ts string, fields string) string {
	return `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"` + ccSID + `","version":"2.1.3","gitBranch":"dev","type":"` + typ + `","timestamp":"` + ts + `"` + fields + `}`
}

func TestParseClaudeCodeCases(t *testing.T) {
	prompt := func(ts, text string) string {
		return ccEv("user", ts, `,"message":{"role":"user","content":`+strings.TrimSpace(mustJSON(text))+`}`)
	}
	reply := func(ts, text string) string {
		return ccEv("assistant", ts, `,"message":{"id":"m`+ts+`","role":"assistant","model":"claude-x","content":[{"type":"text","text":`+mustJSON(text)+`}]}`)
	}
	for _, c := range []struct {
		name  string
		src   string
		in    io.Reader
		check func(t *testing.T, s Session, skipped []Skipped, err error)
	}{
		{"only a command typed: it is the objective", "p/" + ccSID + ".jsonl",
			ccJoin(prompt("2025-01-02T03:04:05.000Z", "<command-name>/review</command-name>\n<command-message>review</command-message>\n<command-args>PR 123</command-args>"), reply("2025-01-02T03:04:09.000Z", "ok")),
			func(t *testing.T, s Session, _ []Skipped, err error) {
				if err != nil || s.Objective != "/review PR 123" || !reflect.DeepEqual(s.Updates, []string{"/review PR 123"}) || s.ID != "2025-01-02-claude-code-0b7e6e0a" {
					t.Errorf("%v %+v", err, s)
				}
			}},
		{"no prompt: the summary line, else the session ID", "p/x.jsonl",
			ccJoin(`{"type":"summary","summary":"Tidy the build","leafUuid":"a"}`, reply("2025-01-02T03:04:09.000Z", "ok")),
			func(t *testing.T, s Session, _ []Skipped, err error) {
				if err != nil || s.Objective != "Tidy the build" {
					t.Errorf("%v %q", err, s.Objective)
				}
			}},
		{"nothing typed nor summarised", "p/x.jsonl",
			ccJoin(reply("2025-01-02T03:04:09.000Z", "ok")),
			func(t *testing.T, s Session, _ []Skipped, err error) {
				if err != nil || s.Objective != "Claude Code session "+ccSID {
					t.Errorf("%v %q", err, s.Objective)
				}
			}},
		{"a renamed copy: the events' session ID names it", "p/my copy.jsonl",
			ccJoin(prompt("2025-01-02T03:04:05.000Z", "hi"), reply("2025-01-02T03:04:09.000Z", "ok")),
			func(t *testing.T, s Session, _ []Skipped, err error) {
				if err != nil || s.ID != "2025-01-02-claude-code-0b7e6e0a" {
					t.Errorf("%v %q", err, s.ID)
				}
			}},
		{"not a UUID: the ID made a name", "p/x.jsonl",
			ccJoin(strings.ReplaceAll(prompt("2025-01-02T03:04:05.000Z", "hi"), ccSID, "my session/1")),
			func(t *testing.T, s Session, _ []Skipped, err error) {
				if err != nil || s.ID != "2025-01-02-claude-code-my-session-1" {
					t.Errorf("%v %q", err, s.ID)
				}
			}},
		{"times with an offset, out of order; a BOM and CRLF", "p/x.jsonl",
			strings.NewReader("\xef\xbb\xbf" + prompt("2025-01-02T10:00:00+02:00", "b") + "\r\n" + prompt("2025-01-02T07:00:00.5Z", "a") + "\r\n"),
			func(t *testing.T, s Session, skipped []Skipped, err error) {
				if err != nil || len(skipped) > 0 || !s.Date.Equal(ccTime("2025-01-02T07:00:00.5Z")) || !s.Ended.Equal(ccTime("2025-01-02T08:00:00Z")) || !s.UpdateTimes[0].Equal(ccTime("2025-01-02T08:00:00Z")) {
					t.Errorf("%v %v %v %v %v", err, skipped, s.Date, s.Ended, s.UpdateTimes)
				}
			}},
		{"cut mid-write: the last line has no newline", "p/x.jsonl",
			strings.NewReader(prompt("2025-01-02T03:04:05.000Z", "hi") + "\n" + reply("2025-01-02T03:04:09.000Z", "ok") + "\n" + `{"type":"assistant","message":{"content":[{"type":"te`),
			func(t *testing.T, s Session, skipped []Skipped, err error) {
				if err != nil || !reflect.DeepEqual(skipped, []Skipped{{"p/x.jsonl:3", "not JSON: unexpected end of the line in a string (cut short?)"}}) || !s.Ended.Equal(ccTime("2025-01-02T03:04:09Z")) {
					t.Errorf("%v %q %v", err, skipped, s.Ended)
				}
			}},
		{"the last line complete without a newline", "p/x.jsonl",
			strings.NewReader(prompt("2025-01-02T03:04:05.000Z", "hi") + "\n" + reply("2025-01-02T03:04:09.000Z", "ok")),
			func(t *testing.T, s Session, skipped []Skipped, err error) {
				if err != nil || len(skipped) > 0 || !s.Ended.Equal(ccTime("2025-01-02T03:04:09Z")) {
					t.Errorf("%v %q %v", err, skipped, s.Ended)
				}
			}},
		{"no timestamp", "p/x.jsonl",
			ccJoin(`{"type":"user","message":{"role":"user","content":"hi"}}`),
			func(t *testing.T, _ Session, _ []Skipped, err error) {
				if !errors.Is(err, ErrNotClaudeCodeTranscript) || !strings.Contains(err.Error(), "no event has a timestamp") {
					t.Error(err)
				}
			}},
		{"blank lines only", "p/x.jsonl", strings.NewReader("\n \r\n\n"),
			func(t *testing.T, _ Session, _ []Skipped, err error) {
				if !errors.Is(err, ErrEmpty) {
					t.Error(err)
				}
			}},
		{"JSON of another kind", "p/issues.jsonl",
			ccJoin(`{"id":"bd-1","title":"x","status":"open"}`, `{"id":"bd-2","title":"y","status":"open"}`),
			func(t *testing.T, _ Session, _ []Skipped, err error) {
				if !errors.Is(err, ErrNotClaudeCodeTranscript) || !strings.Contains(err.Error(), "no user or assistant message (events: (no type) 2)") {
					t.Error(err)
				}
			}},
		{"many unreadable lines: the first ones named, the rest counted", "p/x.jsonl",
			ccJoin(append([]string{prompt("2025-01-02T03:04:05.000Z", "hi")}, strings.Split(strings.Repeat("{oops\n", 25), "\n")...)...),
			func(t *testing.T, s Session, skipped []Skipped, err error) {
				if err != nil || len(skipped) != maxCCBadLines+1 || skipped[0].Path != "p/x.jsonl:2" ||
					!reflect.DeepEqual(skipped[maxCCBadLines], Skipped{"p/x.jsonl:22", "not JSON, nor are 4 more lines after it: not read"}) ||
					s.Outcomes[len(s.Outcomes)-1] != "25 lines not JSON, not read: 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21 and 5 more" {
					t.Errorf("%v %q %q", err, skipped, s.Outcomes)
				}
			}},
		{"a line longer than the reader's buffer", "p/x.jsonl",
			ccJoin(prompt("2025-01-02T03:04:05.000Z", "hi"), ccEv("user", "2025-01-02T03:04:06.000Z", `,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"`+strings.Repeat("x", 3*ccReadBuffer)+`"}]}`), reply("2025-01-02T03:04:07.000Z", "done")),
			func(t *testing.T, s Session, skipped []Skipped, err error) {
				if err != nil || len(skipped) > 0 || !s.Ended.Equal(ccTime("2025-01-02T03:04:07Z")) {
					t.Errorf("%v %v %v", err, skipped, s.Ended)
				}
			}},
		{"escapes: quotes, backslashes, \\u, surrogate pairs", "p/x.jsonl",
			ccJoin(ccEv("user", "2025-01-02T03:04:05.000Z", `,"message":{"role":"user","content":"say \"hi\" to C:\\dir \u00e9t\u00e9 \ud83d\ude00 \ud800 end"}`)),
			func(t *testing.T, s Session, _ []Skipped, err error) {
				if err != nil || s.Objective != `say "hi" to C:\dir été 😀 `+"\uFFFD"+` end` {
					t.Errorf("%v %q", err, s.Objective)
				}
			}},
		{"a multi-line prompt, and one with text blocks around an image", "p/x.jsonl",
			ccJoin(ccEv("user", "2025-01-02T03:04:05.000Z", `,"message":{"role":"user","content":[{"type":"text","text":"look at"},{"type":"image","source":{"type":"base64","data":"AA=="}},{"type":"text","text":"this\nscreenshot"}]}`)),
			func(t *testing.T, s Session, _ []Skipped, err error) {
				if err != nil || s.Objective != "look at this screenshot" {
					t.Errorf("%v %q", err, s.Objective)
				}
			}},
		{"Windows paths are shown relative to the session's folder", "p/x.jsonl",
			ccJoin(strings.Replace(ccEv("assistant", "2025-01-02T03:04:05.000Z", `,"message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"C:\\w\\src\\a.go","content":"x"}}]}`), `"cwd":"/w"`, `"cwd":"C:\\w"`, 1)),
			func(t *testing.T, s Session, _ []Skipped, err error) {
				if err != nil || !containsString(s.Outcomes, `Edited src\a.go`) {
					t.Errorf("%v %q", err, s.Outcomes)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, skipped, err := ParseClaudeCode(c.src, c.in, time.UTC)
			c.check(t, s, skipped, err)
		})
	}
}

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A line over the cap is named and dropped, without holding it: the lines
// after it are read.
func TestParseClaudeCodeTooLong(t *testing.T) {
	defer func(n int) { ccMaxLine = n }(ccMaxLine)
	ccMaxLine = 1 << 20
	in := ccJoin(ccEv("user", "2025-01-02T03:04:05.000Z", `,"message":{"role":"user","content":"hi"}`),
		`{"type":"user","x":"`+strings.Repeat("y", 3<<20)+`"}`,
		ccEv("user", "2025-01-02T03:04:06.000Z", `,"message":{"role":"user","content":"again"}`))
	s, skipped, err := ParseClaudeCode("p/x.jsonl", in, time.UTC)
	if err != nil || !reflect.DeepEqual(skipped, []Skipped{{"p/x.jsonl:2", "longer than 1 MB: not read"}}) || len(s.Updates) != 2 {
		t.Errorf("%v %q %q", err, skipped, s.Updates)
	}
}

// A long session keeps a bounded digest: its start and its end, with the
// count of lines left out between them.
func TestParseClaudeCodeDigestBounded(t *testing.T) {
	var b strings.Builder
	n := 0
	for b.Len() < 3*maxCCDigest {
		n++
		ts := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format("2006-01-02T15:04:05.000Z")
		b.WriteString(ccEv("assistant", ts, fmt.Sprintf(`,"message":{"id":"m%d","role":"assistant","content":[{"type":"text","text":"reply %d %s"}]}`, n, n, strings.Repeat("z", 300))) + "\n")
	}
	s, _, err := ParseClaudeCode("p/x.jsonl", strings.NewReader(b.String()), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	d := string(s.Original)
	if len(d) > maxCCDigest+1024 || !strings.Contains(d, "\nL1 00:00:01 assistant: reply 1 ") || !strings.Contains(d, fmt.Sprintf("\nL%d ", n)) || !strings.Contains(d, " lines left out …\n") {
		t.Errorf("%d bytes:\n%.300s\n…\n%s", len(d), d, d[len(d)-300:])
	}
}

// The scanner agrees with encoding/json on what is one JSON object, for
// lines whose strings hold no escapes and no control characters (whose
// checking it leaves out).
func TestCCScanAgreesWithEncodingJSON(t *testing.T) {
	for _, l := range []string{
		`{}`, `{"a":1}`, ` { "a" : [ 1 , 2.5e-3 , -0 , true , false , null , "x" , { } , [ ] ] } `,
		`{"a":1,}`, `{"a":[1,]}`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1}}`, `{"a":1} x`, `{"a":01}`, `{"a":1.}`,
		`{"a":.5}`, `{"a":-}`, `{"a":0}`, `{"a":-0.5E+10}`, `{"a":00}`, `{"a":-01}`, `{"a":1e}`, `{"a":tru}`, `{"a":nul}`, `{"a":"x`, `{"a":[1,2`, `[1]`, `"x"`, `1`, ``, `{`,
		`{"a":"\""}`, `{"a":"\\"}`, `{"a":"\\\""}`, `{"a":"x\\"}`, `{"a":"x\\\"}`, `{"a":[[[[[]]]]]}`, `{"a":{"b":{"c":[{"d":"e"}]}}}`,
		`{"a":"` + strings.Repeat("q", 100) + `\"` + strings.Repeat("r", 100) + `"}`,
	} {
		s := ccScan{b: []byte(l)}
		ok := s.peek() == '{'
		if ok {
			s.skip()
			ok = s.err == nil && s.peek() == 0
		}
		if want := json.Valid([]byte(l)) && strings.HasPrefix(strings.TrimSpace(l), "{"); ok != want {
			t.Errorf("%q: scanner %v, want %v (%v)", l, ok, want, s.err)
		}
	}
	deep := strings.Repeat("[", ccMaxDepth+1) + strings.Repeat("]", ccMaxDepth+1)
	s := ccScan{b: []byte(`{"a":` + deep + `}`)}
	s.skip()
	if s.err == nil || s.err.Error() != "nested too deep" {
		t.Errorf("deep: %v", s.err)
	}
}

func TestCCStr(t *testing.T) {
	for _, c := range []struct {
		raw  string
		max  int
		want string
	}{
		{`plain`, 0, "plain"},
		{`a\nb\tc\"d\\e\/f\u00e9`, 0, "a\nb\tc\"d\\e/fé"},
		{`\ud83d\ude00`, 0, "😀"},
		{`\ud83d x`, 0, "\uFFFD x"},
		{`\u12`, 0, "\uFFFD12"},
		{"caf\xe9", 0, "caf\uFFFD"},
		{`héllo wörld`, 2, "h"},
		{`héllo wörld`, 3, "hé"},
		{`h\u00e9llo`, 3, "hé"},
		{`abc\`, 0, "abc"},
	} {
		if got := ccStr([]byte(c.raw), c.max); got != c.want {
			t.Errorf("ccStr(%q, %d) = %q, want %q", c.raw, c.max, got, c.want)
		}
	}
}

// scanRefs finds what refs.scan finds.
func TestCCScanRefs(t *testing.T) {
	for _, text := range []string{"see #42", "PR 123 and PR-4567", "pr\t77", "PR#9", "pull request #12", "https://github.com/a/b/pull/7",
		"Step 12 of 40", "no digits here #x", "improve 2 things", "prompt 99"} {
		var want refs
		want.scan(text)
		p := newCCParser("x")
		p.scanRefs(text)
		if !reflect.DeepEqual(p.refs.list(), want.list()) {
			t.Errorf("%q: %q, want %q", text, p.refs.list(), want.list())
		}
	}
}

// ccLine is line, quicker.
func TestCCLine(t *testing.T) {
	for _, s := range []string{"", "  a\tb\n\nc  ", "plain words", "**bold** `code` [link](x) <b>x</b> __init__ ~~x~~", strings.Repeat("word ", 200), "tab\u00a0nbsp\u2003"} {
		if got, want := ccLine(s), line(s); got != want {
			t.Errorf("ccLine(%q) = %q, line gives %q", s, got, want)
		}
	}
}

// FuzzParseClaudeCode: any input gives a session or an error, never a
// panic; what is kept is clean one-line UTF-8 text; the scanner never
// accepts a line encoding/json rejects unless the line's strings hold
// escapes or control characters.
func FuzzParseClaudeCode(f *testing.F) {
	data, err := os.ReadFile(filepath.Join(ccFixtures, "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		f.Add(l)
	}
	f.Add(data)
	// Session IDs that are not text: the fallback objective stays one
	// clean line.
	f.Add([]byte("{\"sessionId\":\"\x80\",\"type\":\"assistant\",\"timestamp\":\"0000-01-01T0:00:00Z\"}"))
	f.Add([]byte("{\"sessionId\":\"\r\",\"type\":\"user\",\"timestamp\":\"0000-01-01T0:00:00Z\"}"))
	f.Add([]byte("{\"type\":\"\\r\"}\n{\"type\":\"assistant\",\"timestamp\":\"0000-01-01T0:00:00Z\"}"))
	// A timestamp of the canonical shape whose digits are not digits.
	f.Add([]byte("{\"type\":\"user\",\"timestamp\":\"2025\x80\x80-26T07:27:40.079Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, _, err := ParseClaudeCode("p/x.jsonl", bytes.NewReader(in), time.UTC)
		if err == nil {
			if !utf8.Valid(s.Original) || bytes.ContainsAny(s.Original, "\r\x00") {
				t.Errorf("digest %q", s.Original)
			}
			for _, u := range append(append([]string{s.Objective, s.Branch}, s.Updates...), s.Outcomes...) {
				if strings.ContainsAny(u, "\n\r") || !utf8.ValidString(u) || len(u) > MaxLineLen {
					t.Errorf("line %q", u)
				}
			}
		}
		for _, l := range bytes.Split(in, []byte("\n")) {
			sc := ccScan{b: l}
			if sc.peek() != '{' {
				continue
			}
			sc.skip()
			if sc.err == nil && sc.peek() == 0 && !json.Valid(l) && !bytes.ContainsAny(l, "\\\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f") && utf8.Valid(l) {
				t.Errorf("scanner accepts %q", l)
			}
		}
	})
}

// ccSynthetic builds a transcript of about size bytes shaped like real
// ones: most of the bytes are tool output (files read, with their quotes,
// tabs and newlines escaped) and tool inputs (edits), each line carrying
// the metadata Claude Code repeats on every event; every sixth exchange is
// a prompt, some Bash calls fail.
func ccSynthetic(tb testing.TB, size int) []byte {
	tb.Helper()
	src, err := os.ReadFile("claudecodelog.go")
	if err != nil {
		tb.Fatal(err)
	}
	code := string(src)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as JSON.stringify writes it
	start := time.Date(2025, 9, 14, 8, 0, 0, 0, time.UTC)
	n := 0
	emit := func(typ string, extra map[string]any) {
		n++
		e := map[string]any{"parentUuid": fmt.Sprintf("00000000-0000-4000-8000-%012d", n-1), "isSidechain": false, "userType": "external",
			"cwd": "/home/dev/shop", "sessionId": "4f35e220-c435-4cf7-b9b9-f40426042847", "version": "2.0.61", "gitBranch": "main",
			"type": typ, "uuid": fmt.Sprintf("00000000-0000-4000-8000-%012d", n), "timestamp": start.Add(time.Duration(n) * time.Second).Format("2006-01-02T15:04:05.000Z")}
		for k, v := range extra {
			e[k] = v
		}
		if err := enc.Encode(e); err != nil {
			tb.Fatal(err)
		}
	}
	usage := map[string]any{"input_tokens": 4, "cache_creation_input_tokens": 1834, "cache_read_input_tokens": 40321, "output_tokens": 250, "service_tier": "standard"}
	asst := func(id string, blocks ...any) {
		emit("assistant", map[string]any{"requestId": "req_" + id, "message": map[string]any{"id": id, "type": "message", "role": "assistant",
			"model": "claude-opus-4-1-20250805", "content": blocks, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	}
	result := func(id string, content any, isErr bool, toolUseResult any) {
		emit("user", map[string]any{"message": map[string]any{"role": "user", "content": []any{map[string]any{"tool_use_id": id, "type": "tool_result", "content": content, "is_error": isErr}}},
			"toolUseResult": toolUseResult})
	}
	for i := 0; buf.Len() < size; i++ {
		off := (i * 7919) % (len(code) - 12000)
		chunk := code[off : off+8000+i%4000]
		file := fmt.Sprintf("/home/dev/shop/internal/pkg%d/file%d.go", i%7, i)
		id := fmt.Sprintf("toolu_%04d", i)
		switch i % 6 {
		case 0:
			emit("user", map[string]any{"message": map[string]any{"role": "user", "content": fmt.Sprintf("Step %d: make the importer handle case %d, and keep the tests green.", i, i)}})
			asst(fmt.Sprintf("msg_%04da", i), map[string]any{"type": "thinking", "thinking": chunk[:600], "signature": strings.Repeat("Eq", 100)})
			asst(fmt.Sprintf("msg_%04da", i), map[string]any{"type": "text", "text": "I'll read the file first, then change it."})
		case 1, 2:
			asst(fmt.Sprintf("msg_%04d", i), map[string]any{"type": "tool_use", "id": id, "name": "Read", "input": map[string]any{"file_path": file}})
			result(id, chunk, false, map[string]any{"type": "text", "file": map[string]any{"filePath": file, "content": chunk, "numLines": strings.Count(chunk, "\n"), "startLine": 1}})
		case 3:
			asst(fmt.Sprintf("msg_%04d", i), map[string]any{"type": "tool_use", "id": id, "name": "Edit", "input": map[string]any{"file_path": file, "old_string": chunk[:1500], "new_string": chunk[1500:3200]}})
			result(id, "The file "+file+" has been updated. Here's the result of running `cat -n` on a snippet:\n"+chunk[:1200], false, map[string]any{"filePath": file, "oldString": chunk[:1500], "newString": chunk[1500:3200]})
		case 4:
			asst(fmt.Sprintf("msg_%04d", i), map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": "go test ./internal/...", "description": "Run the tests"}})
			result(id, "ok  \tgithub.com/x/y/internal/a\t0.12s\n--- FAIL: TestX (0.00s)\n    x_test.go:12: got \"a\", want \"b\"\n"+chunk[:2000], i%12 == 4, map[string]any{"stdout": chunk[:2000], "stderr": "", "interrupted": false})
		case 5:
			asst(fmt.Sprintf("msg_%04d", i), map[string]any{"type": "tool_use", "id": id, "name": "TodoWrite", "input": map[string]any{"todos": []any{
				map[string]any{"content": fmt.Sprintf("Handle case %d", i), "status": "completed", "activeForm": "Handling"},
				map[string]any{"content": fmt.Sprintf("Handle case %d", i+6), "status": "pending", "activeForm": "Handling"}}}})
			result(id, "Todos have been modified successfully.", false, nil)
			emit("file-history-snapshot", map[string]any{"messageId": id, "snapshot": map[string]any{"trackedFileBackups": map[string]any{file: map[string]any{"backupFileName": "abc@v2", "version": 2}}}})
		}
	}
	return buf.Bytes()
}

// ccBenchFile writes a 1 MB transcript for the benchmarks.
func ccBenchFile(b *testing.B) (string, int64) {
	b.Helper()
	data := ccSynthetic(b, 1<<20)
	p := filepath.Join(b.TempDir(), "4f35e220-c435-4cf7-b9b9-f40426042847.jsonl")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return p, int64(len(data))
}

// ccEachLine reads the file at p line by line as the parser does, calling
// fn on each line.
func ccEachLine(b *testing.B, p string, fn func([]byte)) {
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	lr := newCCLines(f)
	defer lr.release()
	for {
		l, _, err := lr.next()
		if err == io.EOF {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		fn(l)
	}
}

// The benchmark pair: BenchmarkClaudeCodeParse takes at most twice as long
// as BenchmarkClaudeCodeReadJSON, which reads the same 1 MB transcript the
// way any reader of it must: line by line, checking that each line is one
// JSON object (so that a line that is not can be named), reading nothing
// out of it. BenchmarkClaudeCodeReadLines (the lines' bytes alone) and
// BenchmarkClaudeCodeReadJSONStdlib (each line checked by encoding/json)
// are there to compare with.

// BenchmarkClaudeCodeReadJSON reads the 1 MB transcript's lines and checks
// each is one JSON object.
func BenchmarkClaudeCodeReadJSON(b *testing.B) {
	p, size := ccBenchFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		ccEachLine(b, p, func(l []byte) {
			s := ccScan{b: l}
			s.skip()
			if s.err != nil || s.peek() != 0 {
				b.Fatal(s.err)
			}
		})
	}
}

// BenchmarkClaudeCodeParse parses the 1 MB transcript into its session.
func BenchmarkClaudeCodeParse(b *testing.B) {
	p, size := ccBenchFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		s, skipped, err := readClaudeCodeFile(p, "-home-dev-shop/x.jsonl", time.UTC)
		if err != nil || len(skipped) > 0 || len(s.Updates) == 0 {
			b.Fatal(err, skipped)
		}
	}
}

// BenchmarkClaudeCodeReadLines reads the 1 MB transcript's lines, bytes
// only.
func BenchmarkClaudeCodeReadLines(b *testing.B) {
	p, size := ccBenchFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		total := 0
		ccEachLine(b, p, func(l []byte) { total += len(l) })
		if total == 0 {
			b.Fatal("nothing read")
		}
	}
}

// BenchmarkClaudeCodeReadJSONStdlib reads the 1 MB transcript's lines and
// checks each with encoding/json.
func BenchmarkClaudeCodeReadJSONStdlib(b *testing.B) {
	p, size := ccBenchFile(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		ccEachLine(b, p, func(l []byte) {
			if !json.Valid(l) {
				b.Fatal("not JSON")
			}
		})
	}
}
