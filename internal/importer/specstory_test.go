package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

const specStoryRepo = "testdata/specstory/repo"

func scanSpecStoryFixtures(t *testing.T) (map[string]Session, []Skipped) {
	t.Helper()
	ss, skipped, err := ScanSpecStory(specStoryRepo, time.UTC, nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Session{}
	for _, s := range ss {
		byID[s.ID] = s
		if s.Format != FormatSpecStory {
			t.Errorf("%s: format %q", s.ID, s.Format)
		}
		data, err := os.ReadFile(filepath.Join(specStoryRepo, filepath.FromSlash(s.SourcePath)))
		if err != nil || !bytes.Equal(data, s.Original) {
			t.Errorf("%s: its text is not the file's bytes (%v)", s.ID, err)
		}
		if s.UpdateTimes != nil && len(s.UpdateTimes) != len(s.Updates) {
			t.Errorf("%s: %d update times for %d updates", s.ID, len(s.UpdateTimes), len(s.Updates))
		}
	}
	return byID, skipped
}

func rfc3339(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// One session per chat file, whatever SpecStory version wrote it: start and
// end from the chat's times, the first request as objective, the requests
// and the changes the assistant made as updates, files and commands listed.
func TestParseSpecStoryFormats(t *testing.T) {
	byID, _ := scanSpecStoryFixtures(t)
	var ids []string
	for id := range byID {
		ids = append(ids, id)
	}
	if len(ids) != 7 {
		t.Fatalf("sessions %v", ids)
	}
	type want struct {
		date, ended string
		objective   string
		updates     []string
		times       []string // nil: UpdateTimes nil
		outcomes    []string
		issues      []string
	}
	for id, w := range map[string]want{
		// The first Cursor versions: "## SpecStory", a local time in the
		// title, "_****_" parts, bare diff and bash blocks, a bare <think>.
		"add-rate-limiting-to-the-api": {
			date: "2025-02-13T09:33:58Z", objective: "Using @plan.md let's add rate limiting to the public API, see #142",
			updates: []string{"Asked: Using @plan.md let's add rate limiting to the public API, see #142",
				"Edited a file (+3 -1): Let's create the rate limiter middleware.", "Ran cd api && npm install limiter",
				"Asked: also return a Retry-After header", "Edited a file (+1 -0)"},
			outcomes: []string{"2 user requests, 2 replies, 2 edits, 1 command", "Ran cd api && npm install limiter"},
			issues:   []string{"#142"},
		},
		// Cursor, 2025: "Tool use: **name**" lines, <details> with "Edit
		// file:", <think><details>, emphasis in the request.
		"2025-05-12_14-03Z-cart-discount-applied-twice": {
			date:      "2025-05-12T14:03:00Z",
			objective: "The discount is applied twice when a coupon and a member price both apply. Fix it so only the larger one counts.",
			updates: []string{"Asked: The discount is applied twice when a coupon and a member price both apply. Fix it so only the larger one counts.",
				"Edited cart/total.py (+2 -2): Apply only the larger of the coupon and the member discount.", "Ran pytest tests/test_total.py -q"},
			outcomes: []string{"1 user request, 1 reply, 1 edit, 1 command", "Edited cart/total.py", "Ran pytest tests/test_total.py -q"},
		},
		// Cursor, late 2025: session comment, timed user lines, "Agent
		// (model …, mode Agent)", <tool-use> blocks (search, read, task,
		// write with a diff, shell with an escaped command).
		"2025-12-02_12-49Z-remove-the-legacy-exporter": {
			date: "2025-12-02T12:49:00Z", ended: "2025-12-02T13:05:00Z",
			objective: "remove the legacy CSV exporter entirely, it was replaced in PR 318",
			updates: []string{"Asked: remove the legacy CSV exporter entirely, it was replaced in PR 318", "Edited export/__init__.py (+0 -1)",
				"Ran cd /home/dev/shop && pytest -q", "Asked: don't touch the changelog by hand"},
			times: []string{"2025-12-02T12:49:00Z", "", "", "2025-12-02T13:05:00Z"},
			outcomes: []string{"2 user requests, 2 replies, 1 edit, 1 command", "Recorded from cursor (session 0d4b7c1e-5a61-4f0e-9d4c-2b7f1a8e3c55)",
				"Model: claude-4.5-opus-high-thinking", "Edited export/__init__.py", "Read export/formats.py", "Ran cd /home/dev/shop && pytest -q"},
			issues: []string{"PR #318"},
		},
		// The specstory CLI on Claude Code (Markdown v2.1.0): a time-only
		// title, a time on every speaker line, Bash with a description and a
		// `command` or a bash block, Read, Edit and Write results, a
		// sub-agent, an interrupted request, a speaker line inside a code
		// block that is not one.
		"2026-03-06_19-16-40Z-fix-the-flaky-retry-test": {
			date: "2026-03-06T19:16:40Z", ended: "2026-03-06T19:20:31Z",
			objective: "fix the flaky retry test in worker/test_retry.py (see #57)",
			updates: []string{"Asked: fix the flaky retry test in worker/test_retry.py (see #57)",
				"Ran pytest worker/test_retry.py -q (Run the retry tests)", "Edited /home/dev/shop/worker/retry.py",
				"Created /home/dev/shop/docs/retry-notes.md", "Ran cd /home/dev/shop; pytest worker/test_retry.py -q --count 2 (Run the tests twice)",
				"Asked: thanks, commit it", `Ran git commit -am "Seed the retry jitter in tests" (Commit the fix)`},
			times: []string{"2026-03-06T19:16:40Z", "2026-03-06T19:16:52Z", "2026-03-06T19:17:20Z", "2026-03-06T19:17:41Z", "2026-03-06T19:17:55Z",
				"2026-03-06T19:20:15Z", "2026-03-06T19:20:31Z"},
			outcomes: []string{"2 user requests, 8 replies, 2 edits, 3 commands", "Recorded from Claude Code (session 5c7d5c23-0691-4467-b98e-0fb865b4a639)",
				"Model: claude-opus-4-5-20251101, claude-haiku-4-5", "Edited /home/dev/shop/worker/retry.py", "Created /home/dev/shop/docs/retry-notes.md",
				"Read ./worker/retry.py", "Ran pytest worker/test_retry.py -q", "Ran cd /home/dev/shop; pytest worker/test_retry.py -q --count 2",
				`Ran git commit -am "Seed the retry jitter in tests"`},
			issues: []string{"#57"},
		},
		// The specstory CLI's earlier Claude Code output: "Tool use: **Read**
		// `path`", "Tool use: **Bash** description" then `command`, a
		// sidechain agent "(model) (sidechain)", the time in the comment
		// written 2025-07-20_00-45-12Z.
		"2025-07-20_00-45-12Z-plan-realtime-editing": {
			date:      "2025-07-20T00:45:12Z",
			objective: "we have a create/read markdown API in @apps/api. Plan real-time multi-author editing in apps/api/plans/update_plan.md",
			updates: []string{"Asked: we have a create/read markdown API in @apps/api. Plan real-time multi-author editing in apps/api/plans/update_plan.md",
				"Ran ls apps/api/app/api/v1/files (List the API routes)", "Created /Users/dev/tny/apps/api/plans/update_plan.md"},
			outcomes: []string{"1 user request, 5 replies, 1 edit, 1 command", "Recorded from Claude Code (session a0f3c2d1-7b9e-4c55-8e21-6d4f0b1a2c3e)",
				"Model: claude-opus-4-20250514", "Created /Users/dev/tny/apps/api/plans/update_plan.md", "Read ./apps/api/lib/storage.ts",
				"Ran ls apps/api/app/api/v1/files"},
		},
		// No time in the title nor on the speaker lines: the file name's,
		// in a YYYY/MM sub-folder.
		"2025-09-01_08-00Z-notes-on-the-exporter": {
			date: "2025-09-01T08:00:00Z", objective: "why does the exporter write dates in local time?",
			updates:  []string{"Asked: why does the exporter write dates in local time?"},
			outcomes: []string{"1 user request, 1 reply, 0 edits, 0 commands"},
		},
		// Cut short while SpecStory wrote it: what is there is read.
		"2025-10-01_23-30Z-avatars-stopped-moving": {
			date: "2025-10-01T23:30:00Z", ended: "2025-10-01T23:41:00Z", objective: "the avatars stopped moving",
			updates: []string{"Asked: the avatars stopped moving", `Ran grep -n "avatar" script.js`, "Asked: still broken, check styles.css",
				"Edited styles.css (+1 -1)", "Edited script.js (+1 -1)"},
			times: []string{"", "", "2025-10-01T23:41:00Z", "", ""},
			outcomes: []string{"2 user requests, 3 replies, 2 edits, 1 command", "Model: claude-4.5-sonnet-thinking", "Edited styles.css", "Edited script.js",
				`Ran grep -n "avatar" script.js`},
		},
	} {
		s, ok := byID[id]
		if !ok {
			t.Errorf("%s: missing", id)
			continue
		}
		if !s.Date.Equal(rfc3339(w.date)) {
			t.Errorf("%s: date %v, want %s", id, s.Date, w.date)
		}
		if (w.ended == "") != s.Ended.IsZero() || w.ended != "" && !s.Ended.Equal(rfc3339(w.ended)) {
			t.Errorf("%s: ended %v, want %q", id, s.Ended, w.ended)
		}
		if s.Objective != w.objective {
			t.Errorf("%s: objective %q", id, s.Objective)
		}
		if !reflect.DeepEqual(s.Updates, w.updates) {
			t.Errorf("%s: updates\n%q\nwant\n%q", id, s.Updates, w.updates)
		}
		if !reflect.DeepEqual(s.Outcomes, w.outcomes) {
			t.Errorf("%s: outcomes\n%q\nwant\n%q", id, s.Outcomes, w.outcomes)
		}
		if !reflect.DeepEqual(s.Issues, w.issues) {
			t.Errorf("%s: issues %q, want %q", id, s.Issues, w.issues)
		}
		switch {
		case w.times == nil && s.UpdateTimes != nil:
			t.Errorf("%s: update times %v for a chat without times", id, s.UpdateTimes)
		case w.times != nil:
			var got []string
			for _, u := range s.UpdateTimes {
				if u.IsZero() {
					got = append(got, "")
				} else {
					got = append(got, u.UTC().Format(time.RFC3339))
				}
			}
			if !reflect.DeepEqual(got, w.times) {
				t.Errorf("%s: update times %q, want %q", id, got, w.times)
			}
		}
	}
}

// Malformed lines are named file:line and the rest of the chat is read;
// files that are no chat are skipped with the reason; the .specstory
// folder's own files are not read.
func TestSpecStorySkipped(t *testing.T) {
	_, skipped := scanSpecStoryFixtures(t)
	want := []Skipped{
		{".specstory/history/.gitkeep", "not a SpecStory chat: a hidden file"},
		{".specstory/history/2025-10-01_23-30Z-avatars-stopped-moving.md:5", "a speaker line with an unreadable time: the message is read without it"},
		{".specstory/history/2025-10-01_23-30Z-avatars-stopped-moving.md:45", "a <tool-use> block opened here is not closed before the end of the file (a chat cut short?): read to the end"},
		{".specstory/history/2025-10-01_23-30Z-avatars-stopped-moving.md:48", "a code block opened here is not closed before the end of the file (a chat cut short?): read as code to the end"},
		{".specstory/history/notes.txt", "not a SpecStory chat: not a .md file (SpecStory saves chats as markdown)"},
		{".specstory/history/scratch.md", `not a SpecStory chat: neither a "<!-- Generated by SpecStory -->" header nor a "_**User**_" line`},
	}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped\n%q\nwant\n%q", skipped, want)
	}
}

// The repository, its .specstory folder, the history folder and one file
// give the same paths; anything else is refused with the reason.
func TestScanSpecStoryFolders(t *testing.T) {
	all, _, err := ScanSpecStory(specStoryRepo, time.UTC, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{specStoryRepo + "/.specstory", specStoryRepo + "/.specstory/history"} {
		ss, _, err := ScanSpecStory(dir, time.UTC, nil)
		if err != nil || !reflect.DeepEqual(ss, all) {
			t.Errorf("%s: %d sessions, %v", dir, len(ss), err)
		}
	}
	one, skipped, err := ScanSpecStory(specStoryRepo+"/.specstory/history/2025/09/2025-09-01_08-00Z-notes-on-the-exporter.md", time.UTC, nil)
	if err != nil || len(one) != 1 || len(skipped) != 0 || one[0].SourcePath != ".specstory/history/2025/09/2025-09-01_08-00Z-notes-on-the-exporter.md" {
		t.Errorf("one file: %v %v %v", one, skipped, err)
	}
	if _, _, err := ScanSpecStory(specStoryRepo+"/.specstory/history/scratch.md", time.UTC, nil); !errors.Is(err, ErrNotSpecStoryChat) {
		t.Errorf("one file that is no chat: %v", err)
	}
	if _, _, err := ScanSpecStory("testdata/aider", time.UTC, nil); !errors.Is(err, ErrNoSpecStoryHistory) {
		t.Errorf("a folder without chats: %v", err)
	}
	if _, _, err := ScanSpecStory("testdata/nothing-here", time.UTC, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing folder: %v", err)
	}
	// Another folder of chats named as SpecStory names them.
	dir := t.TempDir()
	src, _ := os.ReadFile(specStoryRepo + "/.specstory/history/2025-05-12_14-03Z-cart-discount-applied-twice.md")
	os.WriteFile(filepath.Join(dir, "2025-05-12_14-03Z-cart-discount-applied-twice.md"), src, 0o644)
	os.WriteFile(filepath.Join(dir, "2025-05-12_14-03Z-cart-discount-applied-twice.MD"), src, 0o644)
	ss, _, err := ScanSpecStory(dir, time.UTC, nil)
	if err != nil || len(ss) != 2 || ss[0].SourcePath != filepath.Base(dir)+"/2025-05-12_14-03Z-cart-discount-applied-twice.MD" ||
		ss[0].ID != "2025-05-12_14-03Z-cart-discount-applied-twice" || ss[1].ID != "2025-05-12_14-03Z-cart-discount-applied-twice-2" {
		t.Errorf("exported chats: %v", err)
		for _, s := range ss {
			t.Log(s.ID, s.SourcePath)
		}
	}
	var calls []int
	ScanSpecStory(specStoryRepo, time.UTC, func(done, total int) { calls = append(calls, done, total) })
	if len(calls) != 2*10 || calls[len(calls)-2] != 10 || calls[len(calls)-1] != 10 {
		t.Errorf("progress %v", calls)
	}
}

const specStoryMinimal = `<!-- Generated by SpecStory -->

# Tidy the logs (2025-06-01 10:00Z)

_**User (2025-06-01 10:00Z)**_

tidy the log lines

---

_**Agent (model gpt-5, mode Agent)**_

`

// Text cut short anywhere, other speaker-line and time variants, and what is
// no chat at all.
func TestParseSpecStoryVariants(t *testing.T) {
	parse := func(text string) (Session, []Skipped, error) {
		return ParseSpecStory(".specstory/history/x.md", []byte(text), time.UTC)
	}
	// A speaker line cut short; a <think> block never closed.
	s, sk, err := parse(specStoryMinimal + "_**User (2025-06-01 10:0")
	if err != nil || len(sk) != 1 || sk[0].Path != ".specstory/history/x.md:13" || !strings.Contains(sk[0].Reason, "cut short") || len(s.Updates) != 1 {
		t.Errorf("cut-short speaker line: %v %v %+v", err, sk, s)
	}
	_, sk, err = parse(specStoryMinimal + "<think><details><summary>Thought Process</summary>\nTool use: **edit_file**\n")
	if err != nil || len(sk) != 1 || sk[0].Path != ".specstory/history/x.md:13" || !strings.Contains(sk[0].Reason, "<think>") {
		t.Errorf("open <think>: %v %v", err, sk)
	}
	// Times: a zone offset, the writer's local time, a day-first date.
	berlin, _ := time.LoadLocation("Europe/Berlin")
	for text, want := range map[string]time.Time{
		"_**User (2025-11-13 21:12:14-0700)**_\n\nhi\n":                       time.Date(2025, 11, 14, 4, 12, 14, 0, time.UTC),
		"# T (2025-04-05 09:08:24)\n\n_**User**_\n\nhi\n":                     time.Date(2025, 4, 5, 7, 8, 24, 0, time.UTC),
		"## SpecStory\n\n## T (13.2.2025, 09:33)\n\n_**User**_\n\nhi\n":       time.Date(2025, 2, 13, 8, 33, 0, 0, time.UTC),
		"## SpecStory\n\n## T (2/13/2025, 12:05:00 AM)\n\n_**User**_\n\nhi\n": time.Date(2025, 2, 12, 23, 5, 0, 0, time.UTC),
	} {
		s, _, err := ParseSpecStory("x.md", []byte(text), berlin)
		if err != nil || !s.Date.Equal(want) {
			t.Errorf("%q: %v %v, want %v", text, s.Date, err, want)
		}
	}
	// The model may hold a date; emphasis on a line of its own is no speaker.
	s, _, _ = parse("_**User (2025-06-01 10:00Z)**_\n\nhi\n\n---\n\n_**Agent (model gpt-4o-2024-08-06 2025-06-01 10:00:09Z)**_\n\n_**Note**_\n\nok\n")
	if !s.Ended.Equal(time.Date(2025, 6, 1, 10, 0, 9, 0, time.UTC)) || !reflect.DeepEqual(s.Outcomes[1:], []string{"Model: gpt-4o-2024-08-06"}) || s.Outcomes[0] != "1 user request, 1 reply, 0 edits, 0 commands" {
		t.Errorf("model with a date: %v %q", s.Ended, s.Outcomes)
	}
	// A chat without any time, named without one: refused with the reason.
	if _, _, err := ParseSpecStory("notes.md", []byte("_**User**_\n\nhi\n"), time.UTC); err == nil || !strings.Contains(err.Error(), "no time") {
		t.Errorf("no time: %v", err)
	}
	for text, want := range map[string]string{
		"":                        "empty file",
		" \n\n":                   "empty file",
		"# Notes\n\njust notes\n": "not a SpecStory chat",
		"<!-- Generated by SpecStory -->\n\n# Untitled (2025-06-01 10:00Z)\n": "without messages",
		"_**User**_\n\nna\xefve\n": "not UTF-8 text (an invalid byte on line 3)",
		"_**User**_\n\nnul\x00\n":  "NUL byte (on line 3)",
	} {
		if _, _, err := parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	if _, _, err := parse("# Notes\n"); !errors.Is(err, ErrNotSpecStoryChat) {
		t.Errorf("not a chat: %v", err)
	}
	// The request is read for its first MaxLineLen bytes only.
	long := strings.Repeat("word ", 2000)
	s, _, _ = parse("_**User (2025-06-01 10:00Z)**_\n\n" + long + "\n")
	if len(s.Objective) > MaxLineLen || !strings.HasSuffix(s.Objective, "…") {
		t.Errorf("a long request: %d bytes", len(s.Objective))
	}
}

// SpecStory rewrites a chat as it goes on: what was read before reads the
// same. CRLF files read as LF ones.
func TestSpecStoryGrowsAndCRLF(t *testing.T) {
	p := specStoryRepo + "/.specstory/history/2026-03-06_19-16-40Z-fix-the-flaky-retry-test.md"
	data, _ := os.ReadFile(p)
	before, _, err := ParseSpecStory("c.md", data, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	grown := append(append([]byte(nil), data...), "\n---\n\n_**User (2026-03-06 19:25:00Z)**_\n\nnow push it\n"...)
	after, _, err := ParseSpecStory("c.md", grown, time.UTC)
	if err != nil || len(after.Updates) != len(before.Updates)+1 || !reflect.DeepEqual(after.Updates[:len(before.Updates)], before.Updates) ||
		!after.Ended.Equal(time.Date(2026, 3, 6, 19, 25, 0, 0, time.UTC)) || after.Updates[len(before.Updates)] != "Asked: now push it" {
		t.Errorf("grown: %v %q", err, after.Updates)
	}
	crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	c, _, err := ParseSpecStory("c.md", crlf, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	c.Original, before.Original = nil, nil
	if !reflect.DeepEqual(c, before) {
		t.Errorf("CRLF reads differently:\n%+v\n%+v", c, before)
	}
}

// proseLine folds markdown as clean and line do.
func TestSpecStoryProseLine(t *testing.T) {
	for _, s := range []string{
		"plain text",
		"  **bold** and __under__ and ~~gone~~ in  a\n line ",
		"a [link](https://x.test/a) and ![img](i.png) and <https://y.test>",
		"keep `**code**` and mcp__serena__find and snake_case",
		"tags<br>between <details>x</details> <summary>y</summary>",
		"[not a link] (x) and [x](has space)",
		strings.Repeat("é", 400),
	} {
		if got, want := proseLine([]byte(s)), line(s); got != want {
			t.Errorf("%q:\n got %q\nwant %q", s, got, want)
		}
	}
}

// specStory1MB is a chat of at least 1 MB as the specstory CLI writes a
// long Claude Code session, a little denser than a published 292 KB one
// (per 16 KB: one or two requests, about ten tool calls, 15 to 20 speaker
// lines; most bytes are the tools' output in code blocks): turns of a
// request, then the agent's text, a thought, Read calls with numbered file
// excerpts, a Grep, Edit calls with their result, a Write, a Bash call with
// a description, a command and its output, and a closing summary — per
// 16 KB about 1.5 requests, 13 tool calls and 18 speaker lines.
func specStory1MB(tb testing.TB) []byte {
	tb.Helper()
	var b bytes.Buffer
	b.WriteString("<!-- Generated by SpecStory, Markdown v2.1.0 -->\n\n# 2026-03-06 19:16:40Z\n\n" +
		"<!-- Claude Code Session 5c7d5c23-0691-4467-b98e-0fb865b4a639 (2026-03-06 19:16:40Z) -->\n\n")
	t := time.Date(2026, 3, 6, 19, 16, 40, 0, time.UTC)
	stamp := func() string { t = t.Add(7 * time.Second); return t.Format("2006-01-02 15:04:05Z") }
	agent := func() { fmt.Fprintf(&b, "_**Agent (claude-opus-4-5-20251101 %s)**_\n\n", stamp()) }
	excerpt := func(file string, from, n int) { // numbered lines, as Read and Edit show them
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, "%6d→    total = apply_discounts(cart, coupon=%d)  # %s\n", i, i%7, file)
		}
	}
	tool := func(typ, name string, body func()) {
		agent()
		fmt.Fprintf(&b, "<tool-use data-tool-type=\"%s\" data-tool-name=\"%s\"><details>\n<summary>Tool use: **%s**</summary>\n", typ, name, name)
		body()
		b.WriteString("</details></tool-use>\n\n")
	}
	for turn := 0; b.Len() < 1<<20; turn++ {
		fmt.Fprintf(&b, "---\n\n_**User (%s)**_\n\nstep %d of the plan: move the discount rules of cart/rules_%d.py into the pricing service "+
			"and keep the old behaviour for members; run the tests when done\n\n---\n\n", stamp(), turn, turn)
		agent()
		b.WriteString("I'll read the current rules and their tests first, then move them one by one.\n\n")
		agent()
		b.WriteString("<think><details><summary>Thought Process</summary>\nThe rules are applied in order; the member price must win when it is lower. " +
			"I should check where apply_discounts is called before moving anything, and keep the function signature.\n</details></think>\n\n")
		for r := 0; r < 4; r++ {
			file := fmt.Sprintf("./cart/rules_%d_%d.py", turn, r)
			tool("read", "Read", func() {
				fmt.Fprintf(&b, " `%s`\n\n```text\n", file)
				excerpt(file, 1, 22)
				b.WriteString("```\n")
			})
		}
		tool("search", "Grep", func() {
			b.WriteString(" pattern `apply_discounts`\n\n```text\n")
			for i := 0; i < 8; i++ {
				fmt.Fprintf(&b, "cart/checkout_%d.py:%d:    total = apply_discounts(cart, coupon)\n", i, 40+i)
			}
			b.WriteString("```\n")
		})
		for e := 0; e < 2; e++ {
			tool("write", "Edit", func() {
				fmt.Fprintf(&b, "\n```text\nThe file /home/dev/shop/pricing/rules_%d_%d.py has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n", turn, e)
				excerpt("pricing", 10, 8)
				b.WriteString("```\n")
			})
		}
		tool("write", "Write", func() {
			b.WriteString("\n```python\n")
			for i := 0; i < 10; i++ {
				fmt.Fprintf(&b, "def rule_%d(cart):\n    return cart.total * 0.%02d\n", i, i)
			}
			fmt.Fprintf(&b, "```\n\n```text\nFile created successfully at: /home/dev/shop/pricing/generated_%d.py\n```\n", turn)
		})
		tool("shell", "Bash", func() {
			fmt.Fprintf(&b, "Run the pricing tests\n\n`pytest tests/pricing -q -k rules_%d`\n\n```text\n", turn)
			for i := 0; i < 10; i++ {
				fmt.Fprintf(&b, "tests/pricing/test_rules_%d.py::test_case_%d PASSED [%3d%%]\n", turn, i, i*10)
			}
			b.WriteString("```\n")
		})
		agent()
		fmt.Fprintf(&b, "Step %d is done: the rules live in the pricing service, members keep their price, and the tests pass.\n\n", turn)
	}
	return b.Bytes()
}

// specStoryDense1MB is a harder chat of at least 1 MB: the messages of the
// well-formed fixtures, every format generation, in turn, so about ten
// times the requests, tool calls and speaker lines of a real chat per byte.
func specStoryDense1MB(tb testing.TB) []byte {
	tb.Helper()
	var parts [][]byte
	for _, f := range []string{"add-rate-limiting-to-the-api.md", "2025-05-12_14-03Z-cart-discount-applied-twice.md",
		"2025-12-02_12-49Z-remove-the-legacy-exporter.md", "2026-03-06_19-16-40Z-fix-the-flaky-retry-test.md",
		"2025-07-20_00-45-12Z-plan-realtime-editing.md", "2025/09/2025-09-01_08-00Z-notes-on-the-exporter.md"} {
		data, err := os.ReadFile(filepath.Join(specStoryRepo, ".specstory/history", f))
		if err != nil {
			tb.Fatal(err)
		}
		i := bytes.Index(data, []byte("\n_**User"))
		parts = append(parts, append(bytes.TrimRight(data[i+1:], "\n"), "\n\n---\n\n"...))
	}
	head, _ := os.ReadFile(filepath.Join(specStoryRepo, ".specstory/history/2026-03-06_19-16-40Z-fix-the-flaky-retry-test.md"))
	out := append([]byte(nil), head[:bytes.Index(head, []byte("\n_**User"))+1]...)
	for i := 0; len(out) < 1<<20; i++ {
		out = append(out, parts[i%len(parts)]...)
	}
	return out
}

// A 1 MB chat costs about its size: parsing it allocates less than 1.25
// times the chat's own size (the lines it returns included; the two halves
// of a large chat keep their lists until they are joined), however long it
// takes: never a copy of the chat besides its lines.
func TestSpecStoryCostsItsSize(t *testing.T) {
	for name, data := range map[string][]byte{"real": specStory1MB(t), "dense": specStoryDense1MB(t)} {
		s, _, err := ParseSpecStory("big.md", data, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Updates) < 400 || !s.Ended.After(s.Date) {
			t.Fatalf("%s: %d updates, %v to %v", name, len(s.Updates), s.Date, s.Ended)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		const runs = 5
		for i := 0; i < runs; i++ {
			ParseSpecStory("big.md", data, time.UTC)
		}
		runtime.ReadMemStats(&m1)
		if per := (m1.TotalAlloc - m0.TotalAlloc) / runs; per > uint64(len(data))*5/4 {
			t.Errorf("%s: parsing %d bytes allocated %d bytes", name, len(data), per)
		} else {
			t.Logf("%s: parsing %d bytes allocated %d bytes, %d updates", name, len(data), per, len(s.Updates))
		}
	}
}

func writeSpecStory(b *testing.B, data []byte) string {
	p := filepath.Join(b.TempDir(), "2026-03-06_19-16-40Z-big.md")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkRead1MB is the baseline of BenchmarkParseSpecStory1MB: reading
// the 1 MB chat's file.
func BenchmarkRead1MB(b *testing.B) {
	p := writeSpecStory(b, specStory1MB(b))
	fi, _ := os.Stat(p)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadLines1MB is the other baseline: reading the 1 MB chat's file
// and finding each of its lines, as any reader going through it line by
// line does at least.
func BenchmarkReadLines1MB(b *testing.B) {
	p := writeSpecStory(b, specStory1MB(b))
	fi, _ := os.Stat(p)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	lines := 0
	for b.Loop() {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		for off := 0; off < len(data); off = lineEnd(data, off) {
			lines++
		}
	}
	if lines == 0 {
		b.Fatal("no lines")
	}
}

// BenchmarkParseSpecStory1MB reads and parses the 1 MB chat as
// ScanSpecStory does each file: its target is twice BenchmarkRead1MB.
func BenchmarkParseSpecStory1MB(b *testing.B) {
	benchmarkParseSpecStory(b, specStory1MB(b))
}

// BenchmarkParseSpecStoryDense1MB is BenchmarkParseSpecStory1MB on the
// denser chat, for what each request and tool call costs.
func BenchmarkParseSpecStoryDense1MB(b *testing.B) {
	benchmarkParseSpecStory(b, specStoryDense1MB(b))
}

func benchmarkParseSpecStory(b *testing.B, data []byte) {
	p := writeSpecStory(b, data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := readSpecStory(p, ".specstory/history/big.md", time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}

// scanRefs finds what refs.scan finds, without its regular expressions.
func TestSpecStoryScanRefs(t *testing.T) {
	texts := []string{
		"see #57)", "Step #12 and step: #13", "(#34) and Phase (#35)", "a#12 &#39; foo/#12 ##12 #1234567 #1",
		"PR #12, PR# 13, PR  #14, pr123, PR 4927, PR1, PR-194, pr-12, PRs #15", "pull request #7, Pull Request # 8, pull request 9",
		"https://github.com/o/r/pull/45 and github.com/o-x/r.y/issues/7#issuecomment-1 and github.com/o/r/tree/main",
		"#12#34 STEP #5 item#5 my_step #6 Step2 #7 Comment\n#8 commit #9f", "é#12 — «#34»", "PR #12 then #12 again and PR 12",
		"github.com/o/r/pull/99999999999999999999999", "the end: #99",
	}
	for _, f := range []string{"add-rate-limiting-to-the-api.md", "2025-12-02_12-49Z-remove-the-legacy-exporter.md", "2026-03-06_19-16-40Z-fix-the-flaky-retry-test.md"} {
		data, _ := os.ReadFile(filepath.Join(specStoryRepo, ".specstory/history", f))
		texts = append(texts, strings.Split(string(data), "\n")...)
	}
	for _, s := range texts {
		var want, got refs
		want.scan(s)
		scanRefs(&got, []byte(s))
		if !reflect.DeepEqual(got.list(), want.list()) {
			t.Errorf("%q: %q, want %q", s, got.list(), want.list())
		}
	}
}

// Whatever the text, ParseSpecStory does not panic, and every line it
// returns is one line of at most MaxLineLen bytes of UTF-8.
func FuzzParseSpecStory(f *testing.F) {
	ents, _ := filepath.Glob(specStoryRepo + "/.specstory/history/*.md")
	for _, p := range ents {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Add([]byte(specStoryMinimal + "_**User (2025-06-01 10:0"))
	f.Add([]byte("_**User**_\n\n<tool-use data-tool-type=\"\n_****_\n```diff\n+x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, skipped, err := ParseSpecStory("2025-06-01_10-00Z-x.md", data, time.UTC)
		if err != nil {
			return
		}
		lines := append(append([]string{s.Objective}, s.Updates...), s.Outcomes...)
		for _, l := range lines {
			if len(l) > MaxLineLen || strings.ContainsAny(l, "\n\r") || !utf8.ValidString(l) {
				t.Fatalf("line %q", l)
			}
		}
		if s.UpdateTimes != nil && len(s.UpdateTimes) != len(s.Updates) || !bytes.Equal(s.Original, data) || !s.Ended.IsZero() && s.Ended.Before(s.Date) {
			t.Fatalf("session %+v", s)
		}
		for _, k := range skipped {
			if !strings.HasPrefix(k.Path, "2025-06-01_10-00Z-x.md:") {
				t.Fatalf("skipped %+v", k)
			}
		}
	})
}

// splitRead is what ssParser.parseSplit and session make of a chat.
type splitRead struct {
	s       Session
	skipped []Skipped
	why     string
}

// readSplit reads data as a chat named name, in two halves at once from
// split (-1: front to back).
func readSplit(name string, data []byte, split int) splitRead {
	p := &ssParser{src: name, data: data, loc: time.UTC}
	if why := p.parseSplit(split); why != "" {
		return splitRead{why: why}
	}
	s, err := p.session()
	if err != nil {
		return splitRead{skipped: p.skipped, why: err.Error()}
	}
	return splitRead{s, p.skipped, ""}
}

// Whatever the text, reading it in two halves at once from any user's
// speaker line gives what reading it front to back gives.
func FuzzSpecStorySplit(f *testing.F) {
	ents, _ := filepath.Glob(specStoryRepo + "/.specstory/history/*.md")
	for _, p := range ents {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := readSplit("x.md", data, -1)
		for off, tried := 0, 0; off < len(data) && tried < 16; off = lineEnd(data, off) {
			if bytes.HasPrefix(data[off:], []byte("_**User")) {
				tried++
				if got := readSplit("x.md", data, off); !reflect.DeepEqual(got, want) {
					t.Fatalf("split at %d:\n%+v\nwant\n%+v", off, got, want)
				}
			}
		}
	})
}

// A speaker line with an impossible date is reported as such, each one,
// and gives the chat no time: the date of one is not the day the next
// line's time is read in.
func TestSpecStoryImpossibleDates(t *testing.T) {
	chat := "_**User (2025-02-30 10:00Z)**_\n\nfirst\n\n---\n\n_**User (2025-02-30 11:00Z)**_\n\nsecond\n\n---\n\n_**User (2025-03-01 09:00Z)**_\n\nthird\n"
	s, skipped, err := ParseSpecStory("2025-03-01_09-00Z-x.md", []byte(chat), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 2 || !strings.HasSuffix(skipped[0].Path, ":1") || !strings.HasSuffix(skipped[1].Path, ":7") {
		t.Errorf("skipped %+v; want lines 1 and 7, each with an unreadable time", skipped)
	}
	if want := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC); !s.Date.Equal(want) {
		t.Errorf("date %v; want %v (the one readable speaker line)", s.Date, want)
	}
}

// A chat read in two halves at once gives what reading it front to back
// gives, wherever the second half starts: at each user's speaker line (where
// the halves are joined), and at every other line (an assistant's speaker
// line, a line in a code block or a request, where the first half is read
// on to the end instead).
func TestSpecStorySplitReadsAsOne(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(specStoryRepo, ".specstory/history/*.md"))
	more, _ := filepath.Glob(filepath.Join(specStoryRepo, ".specstory/history/*/*/*.md"))
	files = append(files, more...)
	if len(files) < 8 {
		t.Fatalf("%d chats", len(files))
	}
	parse := readSplit
	// An assistant's message going on ("_****_") at the time of the one
	// before it.
	// A session comment in an assistant's message after the split; speaker
	// lines with an impossible date (February 30th).
	made := map[string]string{
		"goes-on.md": "_**User (2025-06-01 10:00Z)**_\n\nrun the tests\n\n---\n\n_**Assistant (2025-06-01 10:01Z)**_\n\nRunning them.\n\n" +
			"_****_\n\nTool use: **run_terminal_cmd** `npm test`\n\n---\n\n_**User (2025-06-01 10:05Z)**_\n\nthanks\n",
		"comment-late.md": "_**User**_\n\nfix it\n\n---\n\n_**Assistant**_\n\nDone.\n\n---\n\n_**User**_\n\nmore\n\n---\n\n_**Assistant**_\n\n" +
			"<!-- Claude Code Session abc (2025-05-01 10:00:00Z) -->\n\nDone again.\n",
		"bad-day.md": "_**User (2025-02-30 10:00Z)**_\n\nfirst\n\n---\n\n_**User (2025-02-30 11:00Z)**_\n\nsecond\n\n---\n\n_**User (2025-03-01 09:00Z)**_\n\nthird\n",
	}
	joined := 0
	for _, f := range append(files, "goes-on.md", "comment-late.md", "bad-day.md") {
		data, err := os.ReadFile(f)
		if text, ok := made[f]; ok {
			data, err = []byte(text), nil
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		// A chat cut short, and one with a broken byte after the split.
		variants := [][]byte{data, data[:len(data)*2/3], append(append([]byte(nil), data...), "\n_**User**_\n\nbad \xff byte\n"...)}
		for _, d := range variants {
			want := parse(name, d, -1)
			for off := 0; off < len(d); off = lineEnd(d, off) {
				if got := parse(name, d, off); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s (%d bytes) split at line %d (%q):\n%+v\nwant\n%+v", name, len(d), bytes.Count(d[:off], nl)+1, d[off:lineEnd(d, off)], got, want)
				}
				if bytes.HasPrefix(d[off:], []byte("_**User")) {
					joined++
				}
			}
		}
	}
	if joined < 20 {
		t.Fatalf("only %d user speaker lines tried", joined)
	}
	// The 1 MB chats are split where parse splits them, and joined there.
	for _, d := range [][]byte{specStory1MB(t), specStoryDense1MB(t)} {
		split := chatSplit(d)
		p := &ssParser{src: "big.md", data: d, loc: time.UTC}
		if off := p.runRange(0, split); off != split {
			t.Fatalf("the first half ends at %d, not at the split %d", off, split)
		}
		if want, got := parse("big.md", d, -1), parse("big.md", d, split); !reflect.DeepEqual(got, want) {
			t.Fatalf("1 MB chat split at %d differs", split)
		}
	}
}
