package session

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/commandlog"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/note"
)

// Entry line formats. Each entry is one list line ending in its Obsidian
// block id, so a person can edit it in place and the engine reads it back:
//
//	update:    - 2026-11-22T14:31:00Z · progress · 40% · Wrote the handler #auth ^u-1
//	decision:  - 2026-11-22T14:40:00Z · [[demo/decisions/2026-11-22-use-flock|Use flock]] · **choice:** flock · **why:** … · **alternatives:** a; b · **impact:** medium · **category:** infra[ · **decided by:** architect][ · **approved by:** critic, qa][ · **rejected by:** security] ^d-1
//	blocker:   - [ ] 2026-11-22T14:41:00Z · **high** · CI is red ^b-1
//	           - [x] 2026-11-22T14:41:00Z · **high** · CI is red · **resolved:** 2026-11-22T15:02:00Z flaky test fixed ^b-1
//	checklist: - [ ] **MUST** Read the session history ^c-1   (^e-N for the end checklist)
//	           - [x] **MUST** Read the session history · **evidence:** file demo/session-history.md sha256:… ^c-1
const Sep = commandlog.Sep

// Update is one progress entry of a session.
type Update struct {
	ID       string    `json:"id"` // "u-12"
	Time     time.Time `json:"time"`
	Type     string    `json:"type"` // progress, note, blocker, milestone
	Progress *int      `json:"progress,omitempty"`
	Message  string    `json:"message"`
	Tags     []string  `json:"tags,omitempty"`
	Line     int       `json:"line"`
}

// Decision is one decision of a session.
type Decision struct {
	ID           string    `json:"id"` // "d-3"
	Time         time.Time `json:"time"`
	Title        string    `json:"title"`
	Note         string    `json:"note"` // the decision note's path from the vault root, without .md: "demo/decisions/2026-11-22-use-flock"
	Choice       string    `json:"choice"`
	Rationale    string    `json:"rationale"`
	Alternatives []string  `json:"alternatives,omitempty"`
	Impact       string    `json:"impact,omitempty"`
	Category     string    `json:"category,omitempty"`
	// Who decided, approved and rejected it: agent types.
	DecidedBy  string   `json:"decided_by,omitempty"`
	ApprovedBy []string `json:"approved_by,omitempty"`
	RejectedBy []string `json:"rejected_by,omitempty"`
	// Cites are what the decision rests on in the code (decide --cite), as
	// Citation.String writes them.
	Cites []string `json:"cites,omitempty"`
	// Stale says how the cited code changed since (CheckCitations); "" when
	// it did not, or was not checked.
	Stale string `json:"stale,omitempty"`
	Line  int    `json:"line"`
}

// Blocker is one blocker of a session.
type Blocker struct {
	ID         string     `json:"id"` // "b-2"
	Time       time.Time  `json:"time"`
	Severity   string     `json:"severity"` // low, medium, high, critical
	Status     string     `json:"status"`   // active or resolved
	Text       string     `json:"description"`
	Resolution string     `json:"resolution,omitempty"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
	Line       int        `json:"line"`
}

// CheckItem is one checklist item copied from the protocol.
type CheckItem struct {
	ID       string `json:"id"` // "c-1" (start) or "e-1" (end)
	Level    string `json:"level,omitempty"`
	Step     string `json:"step"`
	Done     bool   `json:"done"`
	Evidence string `json:"evidence,omitempty"` // what the engine verified, e.g. "file demo/x.md sha256:…"; empty for a person's tick
	// Unverified: ticked in the note, but the engine holds no evidence for
	// it (a tick made outside `evidence record`); it counts for nothing.
	Unverified bool `json:"unverified,omitempty"`
	// Stale says why evidence once recorded no longer holds (a file that
	// changed, a commit no longer on the branch): the item is open again.
	Stale string `json:"stale,omitempty"`
	Line  int    `json:"line"`
}

// Problem is an entry line the engine could not read back; it is reported
// with its note and line, and left untouched.
type Problem struct {
	Note string `json:"note"`
	Line int    `json:"line"`
	Text string `json:"text"`
	Why  string `json:"why"`
}

// String is the problem as a person reads it: file, line and message.
func (p Problem) String() string {
	s := p.Note
	if p.Line > 0 {
		s += fmt.Sprintf(":%d", p.Line)
	}
	s += ": " + p.Why
	if p.Text != "" {
		s += ": " + p.Text
	}
	return s
}

// MachineSuffix is the optional tail a secondary machine gives the entry
// ids it makes (u-12-laptop; vault.Machine.IDSuffix), as a regexp.
const MachineSuffix = commandlog.MachineSuffix

var (
	idTailRe    = lazyregexp.New(`\^([a-z])-(\d+)` + MachineSuffix + `\s*$`)
	updateRe    = lazyregexp.New(`^- (\S+) · (progress|note|blocker|milestone)(?: · (\d{1,3})%)? · (.*?) \^(u-\d+` + MachineSuffix + `)\s*$`)
	decisionRe  = lazyregexp.New(`^- (\S+) · \[\[([^\]|]+)\|([^\]]*)\]\](.*?) \^(d-\d+` + MachineSuffix + `)\s*$`)
	fieldRe     = lazyregexp.New(` · \*\*(choice|why|alternatives|impact|category|decided by|approved by|rejected by|cites):\*\* `)
	blockerRe   = lazyregexp.New(`^- \[(.)\] (\S+) · \*\*(low|medium|high|critical)\*\* · (.*?)(?: · \*\*resolved:\*\* (.*?))? \^(b-\d+` + MachineSuffix + `)\s*$`)
	blockerIDRe = lazyregexp.New(`^b-\d+` + MachineSuffix + `$`)
	checkRe     = lazyregexp.New(`^- \[(.)\] (?:\*\*(MUST NOT|SHOULD NOT|MUST|SHOULD|MAY)\*\* )?(.*?)(?: · \*\*evidence:\*\* (.*?))? \^([ce]-\d+)\s*$`)
	tagTailRe   = lazyregexp.New(`(?:\s#[\p{L}\p{N}_/-]+)+$`)
)

// OneLine collapses s to one line of single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// FormatUpdate renders an update as its entry line (without the block id).
func FormatUpdate(u Update) string {
	var b strings.Builder
	b.WriteString("- " + note.FormatTime(u.Time) + Sep + u.Type)
	if u.Progress != nil {
		fmt.Fprintf(&b, "%s%d%%", Sep, *u.Progress)
	}
	b.WriteString(Sep + OneLine(u.Message))
	for _, t := range u.Tags {
		b.WriteString(" #" + t)
	}
	b.WriteString(" ^" + u.ID)
	return b.String()
}

func parseUpdate(line string) (Update, bool) {
	m := updateRe().FindStringSubmatch(line)
	if m == nil {
		return Update{}, false
	}
	t, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		return Update{}, false
	}
	u := Update{ID: m[5], Time: t, Type: m[2], Message: m[4]}
	if m[3] != "" {
		p, _ := strconv.Atoi(m[3])
		u.Progress = &p
	}
	if tail := tagTailRe().FindString(u.Message); tail != "" {
		u.Message = strings.TrimSpace(u.Message[:len(u.Message)-len(tail)])
		for _, f := range strings.Fields(tail) {
			u.Tags = append(u.Tags, strings.TrimPrefix(f, "#"))
		}
	}
	return u, true
}

// LinkLabel makes text safe inside a wikilink's label.
func LinkLabel(s string) string {
	return strings.NewReplacer("[", "(", "]", ")", "|", "/", "\n", " ").Replace(OneLine(s))
}

// FormatDecision renders a decision as its entry line in the current state.
func FormatDecision(d Decision) string {
	var b strings.Builder
	b.WriteString("- " + note.FormatTime(d.Time) + Sep + Link(d.Note, d.Title))
	b.WriteString(Sep + "**choice:** " + OneLine(d.Choice))
	b.WriteString(Sep + "**why:** " + OneLine(d.Rationale))
	if len(d.Alternatives) > 0 {
		alts := make([]string, len(d.Alternatives))
		for i, a := range d.Alternatives {
			alts[i] = strings.ReplaceAll(OneLine(a), ";", ",")
		}
		b.WriteString(Sep + "**alternatives:** " + strings.Join(alts, "; "))
	}
	if d.Impact != "" {
		b.WriteString(Sep + "**impact:** " + d.Impact)
	}
	if d.Category != "" {
		b.WriteString(Sep + "**category:** " + OneLine(d.Category))
	}
	if d.DecidedBy != "" {
		b.WriteString(Sep + "**decided by:** " + OneLine(d.DecidedBy))
	}
	if len(d.ApprovedBy) > 0 {
		b.WriteString(Sep + "**approved by:** " + strings.Join(d.ApprovedBy, ", "))
	}
	if len(d.RejectedBy) > 0 {
		b.WriteString(Sep + "**rejected by:** " + strings.Join(d.RejectedBy, ", "))
	}
	if len(d.Cites) > 0 {
		b.WriteString(Sep + "**cites:** " + strings.Join(d.Cites, "; "))
	}
	b.WriteString(" ^" + d.ID)
	return b.String()
}

func parseDecision(line string) (Decision, bool) {
	m := decisionRe().FindStringSubmatch(line)
	if m == nil {
		return Decision{}, false
	}
	t, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		return Decision{}, false
	}
	d := Decision{ID: m[5], Time: t, Note: m[2], Title: m[3]}
	rest := m[4]
	locs := fieldRe().FindAllStringSubmatchIndex(rest, -1)
	for i, loc := range locs {
		end := len(rest)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		val := strings.TrimSpace(rest[loc[1]:end])
		switch rest[loc[2]:loc[3]] {
		case "choice":
			d.Choice = val
		case "why":
			d.Rationale = val
		case "alternatives":
			for _, a := range strings.Split(val, ";") {
				if a = strings.TrimSpace(a); a != "" {
					d.Alternatives = append(d.Alternatives, a)
				}
			}
		case "impact":
			d.Impact = val
		case "category":
			d.Category = val
		case "decided by":
			d.DecidedBy = val
		case "approved by":
			d.ApprovedBy = agentList(val)
		case "rejected by":
			d.RejectedBy = agentList(val)
		case "cites":
			for _, c := range strings.Split(val, ";") {
				if c = strings.TrimSpace(c); c != "" {
					d.Cites = append(d.Cites, c)
				}
			}
		}
	}
	return d, true
}

func formatBlocker(b Blocker) string {
	box := " "
	if b.Status == "resolved" {
		box = "x"
	}
	s := "- [" + box + "] " + note.FormatTime(b.Time) + Sep + "**" + b.Severity + "**" + Sep + OneLine(b.Text)
	if b.Status == "resolved" {
		r := ""
		if b.ResolvedAt != nil {
			r = note.FormatTime(*b.ResolvedAt)
		}
		if b.Resolution != "" {
			r = strings.TrimSpace(r + " " + OneLine(b.Resolution))
		}
		if r != "" {
			s += Sep + "**resolved:** " + r
		}
	}
	return s + " ^" + b.ID
}

func parseBlocker(line string) (Blocker, bool) {
	m := blockerRe().FindStringSubmatch(line)
	if m == nil {
		return Blocker{}, false
	}
	t, err := time.Parse(time.RFC3339, m[2])
	if err != nil {
		return Blocker{}, false
	}
	b := Blocker{ID: m[6], Time: t, Severity: m[3], Text: m[4], Status: "active"}
	if m[1] != " " {
		b.Status = "resolved"
	}
	if r := m[5]; r != "" {
		first, rest, _ := strings.Cut(r, " ")
		if rt, err := time.Parse(time.RFC3339, first); err == nil {
			b.ResolvedAt = &rt
			r = rest
		}
		b.Resolution = strings.TrimSpace(r)
	}
	return b, true
}

// FormatCheck renders a checklist item as its task-list line with its id.
func FormatCheck(c CheckItem) string {
	box := " "
	if c.Done {
		box = "x"
	}
	s := "- [" + box + "] "
	if c.Level != "" {
		s += "**" + c.Level + "** "
	}
	s += OneLine(c.Step)
	if c.Evidence != "" {
		s += Sep + "**evidence:** " + OneLine(c.Evidence)
	}
	return s + " ^" + c.ID
}

func parseCheck(line string) (CheckItem, bool) {
	m := checkRe().FindStringSubmatch(line)
	if m == nil {
		return CheckItem{}, false
	}
	return CheckItem{ID: m[5], Level: m[2], Step: m[3], Evidence: m[4], Done: m[1] == "x" || m[1] == "X"}, true
}

// agentList reads a list of agent types written "a, b" (a person may have
// used ";" too).
func agentList(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// IdNumber returns N of an id "x-N" or "x-N-machine", or 0.
func IdNumber(id string) int {
	_, n, _ := strings.Cut(id, "-")
	n, _, _ = strings.Cut(n, "-")
	v, _ := strconv.Atoi(n)
	return v
}
