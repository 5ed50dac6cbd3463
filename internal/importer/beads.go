package importer

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// beads (github.com/steveyegge/beads, the `bd` issue tracker) keeps a
// repository's issues in .beads/issues.jsonl (.beads/beads.jsonl in older
// versions): one JSON object per line, one line per issue, sorted by id.
// An issue's line holds its fields and the issue's own dependencies:
//
//	{"id":"bd-a1b2","title":"…","description":"…","design":"…",
//	 "acceptance_criteria":"…","notes":"…","status":"open","priority":1,
//	 "issue_type":"bug","assignee":"…","labels":["backend"],
//	 "created_at":"2025-10-14T15:04:05.123456789-07:00","updated_at":"…",
//	 "closed_at":"…","close_reason":"…","external_ref":"gh-9",
//	 "defer_until":"2025-11-01T09:00:00Z",
//	 "dependencies":[{"issue_id":"bd-a1b2","depends_on_id":"bd-c3d4",
//	   "type":"blocks","created_at":"…","created_by":"…"}],
//	 "comments":[{"id":1,"author":"…","text":"…","created_at":"…"}]}
//
// A dependency {issue_id: X, depends_on_id: Y, type: T} is stored on X:
// with T "blocks", Y blocks X (X waits for Y); "parent-child", Y is X's
// parent (an epic and its task); "related", X and Y are related;
// "discovered-from", X was found while working on Y.
//
// defer_until (set by `bd update --defer`; RFC 3339, as Go writes a time)
// hides an issue from `bd ready` until that time: beads lists an open or
// in-progress issue as ready only when its defer_until is unset or not
// after the current UTC time, and — since beads hides the children of a
// deferred epic too (beads issue 1190) — none of its parents, one
// "parent-child" link up and whatever their status, has one after it. The
// status stays as it is: an open issue deferred until later still blocks
// the issues that wait for it, as any open issue does.

// Names of the file beads keeps its issues in, inside a .beads folder:
// BeadsFile since beads 0.26, BeadsLegacyFile before.
const (
	BeadsFile       = "issues.jsonl"
	BeadsLegacyFile = "beads.jsonl"
)

// Statuses of a beads issue. Open, InProgress, Blocked and Closed are
// beads' first four; Deferred (`bd defer`), Pinned, Hooked and Tombstone (a
// deleted issue) came later. beads also lets a repository define statuses
// of its own.
const (
	BeadsOpen       = "open"
	BeadsInProgress = "in_progress"
	BeadsBlocked    = "blocked"
	BeadsDeferred   = "deferred"
	BeadsClosed     = "closed"
	BeadsTombstone  = "tombstone"
	BeadsPinned     = "pinned"
	BeadsHooked     = "hooked"
)

// Types of a beads dependency.
const (
	BeadsBlocks         = "blocks"
	BeadsParentChild    = "parent-child"
	BeadsRelated        = "related"
	BeadsDiscoveredFrom = "discovered-from"
)

// BeadsIssue is one issue of a beads issues.jsonl, as its line holds it.
// Text fields are the JSON strings' values, unchanged (Description is the
// description byte for byte). A field the line does not have is zero.
type BeadsIssue struct {
	ID                 string `json:"id"`
	Title              string `json:"title"`
	Description        string `json:"description,omitempty"`
	Design             string `json:"design,omitempty"`
	AcceptanceCriteria string `json:"acceptance_criteria,omitempty"`
	Notes              string `json:"notes,omitempty"`
	// Status is as written; a line without one reads "open", as beads
	// reads it.
	Status string `json:"status"`
	// Priority is 0 (critical) to 4 (backlog); a line without one reads 0,
	// as beads reads it.
	Priority     int               `json:"priority"`
	IssueType    string            `json:"issue_type,omitempty"`
	Assignee     string            `json:"assignee,omitempty"`
	Labels       []string          `json:"labels,omitempty"`
	ExternalRef  string            `json:"external_ref,omitempty"`
	CreatedAt    time.Time         `json:"created_at,omitzero"`
	UpdatedAt    time.Time         `json:"updated_at,omitzero"`
	ClosedAt     time.Time         `json:"closed_at,omitzero"`
	CloseReason  string            `json:"close_reason,omitempty"`
	Dependencies []BeadsDependency `json:"dependencies,omitempty"`
	Comments     []BeadsComment    `json:"comments,omitempty"`
	// DeferUntil is the issue's defer_until: until then `bd ready` leaves
	// it out, and its children with it (see above).
	DeferUntil time.Time `json:"defer_until,omitzero"`
	// Dropped says what of the line was left out: a dependency without a
	// depends_on_id, or listed under this issue but naming another as its
	// issue_id.
	Dropped []string `json:"dropped,omitempty"`
	// Line is the issue's 1-based line in the file.
	Line int `json:"line"`
	// SHA256 is the SHA-256 (lower-case hex) of the line's bytes, without
	// its line ending: it changes whenever beads rewrites the issue.
	SHA256 string `json:"sha256"`
}

// BeadsDependency is one dependency of an issue: the issue waits for, is
// a child of, or relates to DependsOnID (see the Beads* dependency types).
// Type is "blocks" when the line gives none, as beads reads it.
type BeadsDependency struct {
	DependsOnID string `json:"depends_on_id"`
	Type        string `json:"type"`
}

// BeadsComment is one comment of an issue.
type BeadsComment struct {
	Author    string    `json:"author,omitempty"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// ErrNotBeadsJSONL is returned (wrapped, with the first line's reason) by
// [ParseBeadsJSONL] for a file that has lines, none of which is a beads
// issue.
var ErrNotBeadsJSONL = errors.New("not a beads issues.jsonl")

// beadsLine is what one line decodes into: times are read by hand, so a
// bad one is named in the reason, and title must be present (an issue
// always has one; the other JSONL files of .beads — deletions, interactions
// — do not).
type beadsLine struct {
	ID                 *string  `json:"id"`
	Title              *string  `json:"title"`
	Description        string   `json:"description"`
	Design             string   `json:"design"`
	AcceptanceCriteria string   `json:"acceptance_criteria"`
	Notes              string   `json:"notes"`
	Status             string   `json:"status"`
	Priority           int      `json:"priority"`
	IssueType          string   `json:"issue_type"`
	Assignee           string   `json:"assignee"`
	Labels             []string `json:"labels"`
	ExternalRef        string   `json:"external_ref"`
	CreatedAt          string   `json:"created_at"`
	UpdatedAt          string   `json:"updated_at"`
	ClosedAt           string   `json:"closed_at"`
	CloseReason        string   `json:"close_reason"`
	DeferUntil         string   `json:"defer_until"`
	Dependencies       []struct {
		IssueID     string `json:"issue_id"`
		DependsOnID string `json:"depends_on_id"`
		Type        string `json:"type"`
	} `json:"dependencies"`
	Comments []struct {
		Author    string `json:"author"`
		Text      string `json:"text"`
		CreatedAt string `json:"created_at"`
	} `json:"comments"`
}

// ParseBeadsJSONL reads a beads issues.jsonl from r, one line at a time (a
// file costs its size, whatever the length of its lines). name is the
// file's name as the reasons show it ("issues.jsonl"). It returns the
// issues in the order of their lines, and the lines it left out, each as
// Skipped{Path: "name:LINE", Reason: …}: a line that is not a JSON object,
// not UTF-8 text, has no id or title, or a field of the wrong kind (a
// priority that is not a number, a time that is not RFC 3339), and a line
// whose id a later line has again (beads reads the last one, and so does
// this). Blank lines are passed over, and a byte order mark before the
// first. A dependency whose issue_id names another issue than its line's,
// or that has no depends_on_id, is left out, the reason in the issue's
// Dropped. A file with lines none of which is an issue is
// ErrNotBeadsJSONL; a file with no line at all gives no issues and no error
// (a repository where `bd init` ran and nothing was filed yet).
func ParseBeadsJSONL(name string, r io.Reader) ([]BeadsIssue, []Skipped, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		issues  []BeadsIssue
		skipped []Skipped
		first   *Skipped // the first reason, for ErrNotBeadsJSONL
		at      = map[string]int{}
	)
	skip := func(line int, reason string) {
		s := Skipped{Path: name + ":" + strconv.Itoa(line), Reason: reason}
		skipped = append(skipped, s)
		if first == nil {
			first = &s
		}
	}
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("reading %s at line %d: %w", name, n, err)
		}
		if len(raw) == 0 && err != nil {
			break
		}
		line := bytes.TrimSuffix(bytes.TrimSuffix(raw, []byte("\n")), []byte("\r"))
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff")) // a byte order mark an editor added
		}
		if len(bytes.TrimSpace(line)) > 0 {
			is, reason := parseBeadsLine(line)
			if reason != "" {
				skip(n, reason)
			} else {
				is.Line = n
				sum := sha256.Sum256(line)
				is.SHA256 = hex.EncodeToString(sum[:])
				if i, ok := at[is.ID]; ok {
					skipped = append(skipped, Skipped{Path: name + ":" + strconv.Itoa(issues[i].Line), Reason: "superseded by a later line with the same id (beads reads the last one)"})
					issues[i] = is
				} else {
					at[is.ID] = len(issues)
					issues = append(issues, is)
				}
			}
		}
		if err != nil {
			break
		}
	}
	if len(issues) == 0 && first != nil {
		return nil, skipped, fmt.Errorf("%s is %w: no line is a beads issue (line %s: %s)", name, ErrNotBeadsJSONL, strings.TrimPrefix(first.Path, name+":"), first.Reason)
	}
	// An issue a later line supersedes takes that line's values in its
	// first line's place; the reasons are sorted by line.
	sortSkipped(name, skipped)
	return issues, skipped, nil
}

// parseBeadsLine decodes one non-blank line; reason says why it is not an
// issue.
func parseBeadsLine(line []byte) (BeadsIssue, string) {
	if !utf8.Valid(line) {
		return BeadsIssue{}, "not UTF-8 text (JSON text must be)"
	}
	if t := bytes.TrimSpace(line); t[0] != '{' {
		return BeadsIssue{}, "not a JSON object (every line of a beads issues.jsonl is one issue, a {...} object)"
	}
	var l beadsLine
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&l); err != nil {
		return BeadsIssue{}, jsonReason(err)
	}
	if dec.More() {
		return BeadsIssue{}, "invalid JSON: more than one value on the line"
	}
	if l.ID == nil || strings.TrimSpace(*l.ID) == "" {
		return BeadsIssue{}, `not a beads issue: no "id"`
	}
	if l.Title == nil {
		return BeadsIssue{}, `not a beads issue: no "title"`
	}
	is := BeadsIssue{
		ID: *l.ID, Title: *l.Title, Description: l.Description, Design: l.Design, AcceptanceCriteria: l.AcceptanceCriteria,
		Notes: l.Notes, Status: l.Status, Priority: l.Priority, IssueType: l.IssueType, Assignee: l.Assignee,
		Labels: l.Labels, ExternalRef: l.ExternalRef, CloseReason: l.CloseReason,
	}
	if is.Status == "" {
		is.Status = BeadsOpen
	}
	for _, f := range []struct {
		name string
		v    string
		dst  *time.Time
	}{{"created_at", l.CreatedAt, &is.CreatedAt}, {"updated_at", l.UpdatedAt, &is.UpdatedAt}, {"closed_at", l.ClosedAt, &is.ClosedAt}, {"defer_until", l.DeferUntil, &is.DeferUntil}} {
		t, err := beadsTime(f.v)
		if err != nil {
			return BeadsIssue{}, fmt.Sprintf("not a beads issue: %s %q is not an RFC 3339 time", f.name, f.v)
		}
		*f.dst = t
	}
	for _, d := range l.Dependencies {
		switch {
		case strings.TrimSpace(d.DependsOnID) == "":
			is.Dropped = append(is.Dropped, "a dependency of "+is.ID+" has no depends_on_id: left out")
			continue
		case d.IssueID != "" && d.IssueID != is.ID:
			is.Dropped = append(is.Dropped, fmt.Sprintf("a dependency on %s listed under %s belongs to %s: left out", d.DependsOnID, is.ID, d.IssueID))
			continue
		}
		typ := d.Type
		if typ == "" {
			typ = BeadsBlocks
		}
		is.Dependencies = append(is.Dependencies, BeadsDependency{DependsOnID: d.DependsOnID, Type: typ})
	}
	for _, c := range l.Comments {
		t, err := beadsTime(c.CreatedAt)
		if err != nil {
			t = time.Time{} // a comment's time is shown, not used
		}
		is.Comments = append(is.Comments, BeadsComment{Author: c.Author, Text: c.Text, CreatedAt: t})
	}
	return is, ""
}

// beadsTime reads an RFC 3339 time ("" is the zero time).
func beadsTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, v)
}

// jsonReason words a decoding error for Skipped.Reason.
func jsonReason(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at column %d: %v", se.Offset, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "invalid JSON: the object is not closed on its line"
	case errors.As(err, &te):
		return fmt.Sprintf("not a beads issue: %s is a JSON %s, where beads writes %s", fieldName(te.Field), te.Value, kindName(te.Type))
	}
	return "invalid JSON: " + err.Error()
}

// fieldName is a field path of an UnmarshalTypeError ("" is the line).
func fieldName(f string) string {
	if f == "" {
		return "the line"
	}
	return `"` + f + `"`
}

// kindName names a Go type as the JSON it is read from.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Slice:
		return "an array"
	case reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return kindName(t.Elem())
	}
	return "another kind of value"
}

// sortSkipped orders the reasons of name's lines by line number (stable, so
// a line's several reasons keep their order).
func sortSkipped(name string, s []Skipped) {
	line := func(p string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(p, name+":"))
		return n
	}
	slices.SortStableFunc(s, func(a, b Skipped) int { return cmp.Compare(line(a.Path), line(b.Path)) })
}

// ErrNoBeadsJSONL is returned (wrapped) by [FindBeadsJSONL] for a folder
// that holds no beads issues file.
var ErrNoBeadsJSONL = errors.New("no beads issues.jsonl")

// FindBeadsJSONL returns the beads issues file path names: path itself when
// it is a file; in a folder, its issues.jsonl (a .beads folder), else its
// .beads/issues.jsonl (a repository), else the same with the legacy name
// beads.jsonl. A path that does not exist gives the os.Stat error; a
// folder without any of them ErrNoBeadsJSONL.
func FindBeadsJSONL(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return path, nil
	}
	for _, name := range []string{BeadsFile, BeadsLegacyFile} {
		for _, dir := range []string{path, filepath.Join(path, ".beads")} {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%w in %s (looked for %s and .beads/%s)", ErrNoBeadsJSONL, path, BeadsFile, BeadsFile)
}
