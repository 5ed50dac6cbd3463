package importer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func parseBeadsFixture(t *testing.T) ([]BeadsIssue, []Skipped, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "beads", "issues.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	issues, skipped, err := ParseBeadsJSONL("issues.jsonl", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return issues, skipped, data
}

// TestParseBeadsJSONL: the fixture written from beads' format — every
// status, every dependency type, labels, comments, a hierarchical id —
// reads field by field; its malformed lines are left out as FILE:LINE with
// the reason, and the rest is read.
func TestParseBeadsJSONL(t *testing.T) {
	t.Parallel()
	issues, skipped, data := parseBeadsFixture(t)
	var ids []string
	for _, is := range issues {
		ids = append(ids, is.ID+"="+is.Status)
	}
	if got, want := strings.Join(ids, " "), "bd-1=closed bd-2=open bd-2.1=in_progress bd-3=blocked bd-4=open bd-5=deferred bd-6=tombstone"; got != want {
		t.Errorf("issues = %s\nwant     %s", got, want)
	}
	wantSkipped := []Skipped{
		{"issues.jsonl:8", "not a JSON object (every line of a beads issues.jsonl is one issue, a {...} object)"},
		{"issues.jsonl:9", `not a beads issue: created_at "yesterday" is not an RFC 3339 time`},
		{"issues.jsonl:10", `not a beads issue: no "id"`},
		{"issues.jsonl:12", `not a beads issue: "priority" is a JSON string, where beads writes a whole number`},
	}
	if !reflect.DeepEqual(skipped, wantSkipped) {
		t.Errorf("skipped = %q\nwant      %q", skipped, wantSkipped)
	}

	one := issues[0]
	if one.Title != "Set up the storage layer" || one.Priority != 1 || one.IssueType != "task" || one.Assignee != "ana" ||
		!reflect.DeepEqual(one.Labels, []string{"backend", "storage"}) || one.CloseReason != "Done" || one.Line != 1 {
		t.Errorf("bd-1 = %+v", one)
	}
	if want := time.Date(2025, 10, 3, 15, 30, 0, 123456789, time.UTC); !one.ClosedAt.Equal(want) || !one.UpdatedAt.Equal(want) {
		t.Errorf("bd-1 closed %v updated %v, want %v", one.ClosedAt, one.UpdatedAt, want)
	}
	if !one.CreatedAt.Equal(time.Date(2025, 10, 1, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("bd-1 created %v", one.CreatedAt)
	}
	line1 := bytes.SplitN(data, []byte("\n"), 2)[0]
	if sum := sha256.Sum256(line1); one.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("bd-1 sha256 %s is not its line's", one.SHA256)
	}
	if one.Description != "Pick SQLite.\n\nSee the notes below." {
		t.Errorf("bd-1 description %q", one.Description)
	}

	epic := issues[1]
	if epic.Design != "## Flow\n\ncart → pay → receipt" || epic.AcceptanceCriteria != "- [ ] pays\n- [ ] refunds" || epic.Notes != "Ask finance." || epic.Priority != 0 {
		t.Errorf("bd-2 = %+v", epic)
	}
	deps := map[string][]BeadsDependency{}
	for _, is := range issues {
		deps[is.ID] = is.Dependencies
	}
	for id, want := range map[string][]BeadsDependency{
		"bd-2":   {{DependsOnID: "bd-1", Type: BeadsBlocks}},
		"bd-2.1": {{DependsOnID: "bd-2", Type: BeadsParentChild}},
		"bd-3":   {{DependsOnID: "bd-2.1", Type: BeadsRelated}},
		"bd-4":   {{DependsOnID: "bd-3", Type: BeadsDiscoveredFrom}, {DependsOnID: "bd-5", Type: BeadsBlocks}},
		"bd-1":   nil, "bd-5": nil,
	} {
		if !reflect.DeepEqual(deps[id], want) {
			t.Errorf("%s dependencies = %+v, want %+v", id, deps[id], want)
		}
	}
	c := issues[2].Comments
	if len(c) != 1 || c[0].Author != "ben" || c[0].Text != "Webhook secret is in the vault." || !c[0].CreatedAt.Equal(time.Date(2025, 10, 4, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("bd-2.1 comments = %+v", c)
	}
	if issues[3].Labels == nil || len(issues[3].Labels) != 0 {
		t.Errorf("bd-3 labels = %#v, want an empty list", issues[3].Labels)
	}
}

// A description is its JSON string's value, byte for byte: escapes,
// non-ASCII text, CR LF, a trailing newline, Markdown headings.
func TestParseBeadsDescriptionByteForByte(t *testing.T) {
	t.Parallel()
	desc := "# Heading\r\n\tcode\nnaïve “quotes” \u00e9\u0301 ``` fence\n\n"
	line := `{"id":"x-1","title":"t","description":"# Heading\r\n\tcode\nna\u00efve “quotes” é\u0301 ` + "```" + ` fence\n\n"}`
	issues, skipped, err := ParseBeadsJSONL("f.jsonl", strings.NewReader(line))
	if err != nil || len(skipped) != 0 || len(issues) != 1 {
		t.Fatalf("issues %+v skipped %+v err %v", issues, skipped, err)
	}
	if issues[0].Description != desc {
		t.Errorf("description %q\nwant        %q", issues[0].Description, desc)
	}
}

// Defaults and odd lines, as beads reads them: no status is open, no
// priority 0, a dependency without a type blocks; the last of two lines
// with one id wins; a byte order mark, CRLF line endings and a last line
// without one are read; a dependency listed under the wrong issue, or without a target, is
// left out with the reason; a line with two objects is not read.
func TestParseBeadsOddLines(t *testing.T) {
	t.Parallel()
	src := "\ufeff{\"id\":\"a\",\"title\":\"first\"}\r\n" +
		"{\"id\":\"b\",\"title\":\"B\",\"dependencies\":[{\"issue_id\":\"b\",\"depends_on_id\":\"a\"},{\"issue_id\":\"z\",\"depends_on_id\":\"a\",\"type\":\"blocks\"},{\"issue_id\":\"b\",\"type\":\"related\"}]}\r\n" +
		"{\"id\":\"c\",\"title\":\"C\"} {\"id\":\"d\"}\n" +
		"   \n" +
		"{\"id\":\"a\",\"title\":\"second\",\"status\":\"in_progress\"}"
	issues, skipped, err := ParseBeadsJSONL("f.jsonl", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(issues) != 2 || issues[0].ID != "a" || issues[0].Title != "second" || issues[0].Status != BeadsInProgress || issues[0].Line != 5 {
		t.Fatalf("issues = %+v", issues)
	}
	b := issues[1]
	if b.Status != BeadsOpen || b.Priority != 0 || !reflect.DeepEqual(b.Dependencies, []BeadsDependency{{DependsOnID: "a", Type: BeadsBlocks}}) {
		t.Errorf("b = %+v", b)
	}
	if want := []string{"a dependency on a listed under b belongs to z: left out", "a dependency of b has no depends_on_id: left out"}; !reflect.DeepEqual(b.Dropped, want) {
		t.Errorf("b dropped %q, want %q", b.Dropped, want)
	}
	want := []Skipped{
		{"f.jsonl:1", "superseded by a later line with the same id (beads reads the last one)"},
		{"f.jsonl:3", "invalid JSON: more than one value on the line"},
	}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped = %q\nwant      %q", skipped, want)
	}
	if sum := sha256.Sum256([]byte(`{"id":"b","title":"B","dependencies":[{"issue_id":"b","depends_on_id":"a"},{"issue_id":"z","depends_on_id":"a","type":"blocks"},{"issue_id":"b","type":"related"}]}`)); b.SHA256 != hex.EncodeToString(sum[:]) {
		t.Error("the SHA-256 of a CRLF line is not taken without its line ending")
	}
}

// A file that has lines, none of them an issue, is not a beads file; an
// empty file is one with no issues; invalid UTF-8 and broken JSON are
// reasons of their lines.
func TestParseBeadsNotBeads(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"markdown":  "# Notes\n\nnot beads\n",
		"deletions": `{"id":"bd-1","ts":"2025-10-01T00:00:00Z","by":"ana","reason":"dup"}` + "\n",
		"array":     `[{"id":"bd-1","title":"t"}]`,
	} {
		_, _, err := ParseBeadsJSONL("x.jsonl", strings.NewReader(src))
		if !errors.Is(err, ErrNotBeadsJSONL) || !strings.Contains(err.Error(), "line 1: ") {
			t.Errorf("%s: err = %v, want ErrNotBeadsJSONL naming line 1", name, err)
		}
	}
	issues, skipped, err := ParseBeadsJSONL("x.jsonl", strings.NewReader("\n \n"))
	if err != nil || len(issues) != 0 || len(skipped) != 0 {
		t.Errorf("blank file: %v %v %v", issues, skipped, err)
	}
	src := "{\"id\":\"ok\",\"title\":\"t\"}\n{\"id\":\"bad\",\"title\":\"\xff\"}\n{\"id\":\"cut\",\"title\":\"t\"\n{\"id\":\"x\",\"title\":\"t\",,}\n"
	issues, skipped, err = ParseBeadsJSONL("x.jsonl", strings.NewReader(src))
	if err != nil || len(issues) != 1 {
		t.Fatalf("issues %v err %v", issues, err)
	}
	want := []string{
		"x.jsonl:2: not UTF-8 text (JSON text must be)",
		"x.jsonl:3: invalid JSON: the object is not closed on its line",
		"x.jsonl:4: invalid JSON at column 23: invalid character ',' looking for beginning of object key string",
	}
	var got []string
	for _, s := range skipped {
		got = append(got, s.Path+": "+s.Reason)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("skipped = %q\nwant      %q", got, want)
	}
}

// defer_until is read as the RFC 3339 time beads writes (any zone, any
// fraction of a second); a line without one, or with null, has none; one
// that is not RFC 3339 leaves its line out with the reason, as the other
// times do.
func TestParseBeadsDeferUntil(t *testing.T) {
	t.Parallel()
	src := `{"id":"a","title":"A","defer_until":"2025-12-01T09:30:00.25+01:00"}
{"id":"b","title":"B"}
{"id":"c","title":"C","defer_until":null}
{"id":"d","title":"D","defer_until":"next monday"}
`
	issues, skipped, err := ParseBeadsJSONL("f.jsonl", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(issues) != 3 || issues[0].ID != "a" || issues[1].ID != "b" || issues[2].ID != "c" {
		t.Fatalf("issues = %+v", issues)
	}
	if want := time.Date(2025, 12, 1, 8, 30, 0, 250_000_000, time.UTC); !issues[0].DeferUntil.Equal(want) {
		t.Errorf("a defer_until %v, want %v", issues[0].DeferUntil, want)
	}
	if !issues[1].DeferUntil.IsZero() || !issues[2].DeferUntil.IsZero() {
		t.Errorf("b, c defer_until %v, %v", issues[1].DeferUntil, issues[2].DeferUntil)
	}
	want := []Skipped{{"f.jsonl:4", `not a beads issue: defer_until "next monday" is not an RFC 3339 time`}}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped = %q\nwant      %q", skipped, want)
	}
}

// Lines of any length are read (a long description is no reason to stop),
// and a large file is read in one pass.
func TestParseBeadsLongLines(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3<<20)
	var b strings.Builder
	for i := 0; i < 3; i++ {
		b.WriteString(`{"id":"l-` + string(rune('a'+i)) + `","title":"t","description":"` + long + `"}` + "\n")
	}
	issues, skipped, err := ParseBeadsJSONL("big.jsonl", strings.NewReader(b.String()))
	if err != nil || len(skipped) != 0 || len(issues) != 3 || len(issues[2].Description) != len(long) {
		t.Fatalf("%d issues, skipped %v, err %v", len(issues), skipped, err)
	}
}

// FindBeadsJSONL: a file is itself; a .beads folder gives its issues.jsonl;
// a repository its .beads/issues.jsonl; the legacy beads.jsonl is found
// when there is no issues.jsonl; a folder with neither is ErrNoBeadsJSONL.
func TestFindBeadsJSONL(t *testing.T) {
	t.Parallel()
	fix := filepath.Join("testdata", "beads")
	for in, want := range map[string]string{
		filepath.Join(fix, "issues.jsonl"):   filepath.Join(fix, "issues.jsonl"),
		fix:                                  filepath.Join(fix, "issues.jsonl"),
		filepath.Join(fix, "repo"):           filepath.Join(fix, "repo", ".beads", "issues.jsonl"),
		filepath.Join(fix, "repo", ".beads"): filepath.Join(fix, "repo", ".beads", "issues.jsonl"),
	} {
		if got, err := FindBeadsJSONL(in); err != nil || got != want {
			t.Errorf("FindBeadsJSONL(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	legacy := t.TempDir()
	os.MkdirAll(filepath.Join(legacy, ".beads"), 0o755)
	os.WriteFile(filepath.Join(legacy, ".beads", BeadsLegacyFile), nil, 0o644)
	if got, err := FindBeadsJSONL(legacy); err != nil || got != filepath.Join(legacy, ".beads", BeadsLegacyFile) {
		t.Errorf("legacy: %s, %v", got, err)
	}
	if _, err := FindBeadsJSONL(t.TempDir()); !errors.Is(err, ErrNoBeadsJSONL) {
		t.Errorf("empty folder: %v", err)
	}
	if _, err := FindBeadsJSONL(filepath.Join(fix, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
