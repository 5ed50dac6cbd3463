// Package protocol reads a session protocol document: markdown checklist
// tables of requirements under "session start" and "session end" headings,
// each row a level (MUST, SHOULD, MAY, MUST NOT), a step, and how its
// evidence is checked. Task-list checklists under such headings are read too,
// as requirements with no level.
package protocol

import (
	"strings"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/markdown"
)

// Phase names which checklist a requirement belongs to.
type Phase string

// The two checklists a protocol defines.
const (
	Start Phase = "start"
	End   Phase = "end"
)

// Requirement is one checklist row.
type Requirement struct {
	Phase    Phase  `json:"phase"`
	Level    string `json:"level"` // MUST, MUST NOT, SHOULD, SHOULD NOT, MAY, or "" when the source gives none
	Step     string `json:"step"`
	Evidence string `json:"evidence,omitempty"` // how the source says evidence is checked
	Check    Check  `json:"check"`              // the evidence rule read from Evidence
	// Fix is what to do when the evidence does not hold (a Fix column,
	// e.g. "`git switch -c TOPIC`"); "" when the protocol says nothing.
	Fix  string `json:"fix,omitempty"`
	Line int    `json:"line"` // 1-based line in the protocol document
}

// Protocol is a parsed protocol document.
type Protocol struct {
	Path  string
	Start []Requirement
	End   []Requirement
	// Unphased holds the lines of requirement rows outside the start and end
	// sections: no gate checks them.
	Unphased []int
}

var levelRe = lazyregexp.New(`(?i)^\**\s*(MUST NOT|SHOULD NOT|MUST|SHOULD|MAY|REQUIRED|RECOMMENDED|OPTIONAL|SHALL NOT|SHALL)\s*\**$`)

// Parse reads a protocol document. path is only recorded. A requirement
// belongs to the start or end checklist by the nearest heading above it whose
// title mentions "start" or "end" (case-insensitive); tables need a column
// headed Req, Level or Requirement and one headed Step. Checklists given as a
// template inside a ```markdown fence are read too.
func Parse(p *markdown.Parser, path string, src []byte) *Protocol {
	out := &Protocol{Path: path}
	parseInto(p, out, src, 0, "")
	return out
}

// parseInto adds the requirements of src to out; lineBase is the number of
// lines before src in the document, outer the phase of the enclosing section.
func parseInto(p *markdown.Parser, out *Protocol, src []byte, lineBase int, outer Phase) {
	doc := p.Parse(src)
	phaseAt := func(off int) Phase {
		ph := outer
		for _, s := range doc.Sections {
			if s.Start > off {
				break
			}
			t := strings.ToLower(s.Title)
			switch {
			case strings.Contains(t, "start"):
				ph = Start
			case strings.Contains(t, "end"):
				ph = End
			default:
				if s.Level <= 2 {
					ph = ""
				}
			}
		}
		return ph
	}
	add := func(r Requirement) {
		switch r.Phase {
		case Start:
			out.Start = append(out.Start, r)
		case End:
			out.End = append(out.End, r)
		}
	}
	for _, t := range doc.Tables {
		ph := phaseAt(t.Start)
		rows := markdown.TableRows(src, t)
		if len(rows) < 2 {
			continue
		}
		reqCol, stepCol, evCol, fixCol := -1, -1, -1, -1
		for i, h := range rows[0] {
			switch strings.ToLower(strings.Trim(h, "* ")) {
			case "req", "level", "requirement", "req.":
				reqCol = i
			case "step", "item", "action":
				stepCol = i
			case "evidence", "verification", "how verified", "check":
				evCol = i
			case "fix", "if it fails", "remedy":
				fixCol = i
			}
		}
		if reqCol < 0 || stepCol < 0 {
			continue
		}
		for i, row := range rows[1:] {
			r := Requirement{Phase: ph, Line: lineBase + t.Line + 2 + i}
			if reqCol < len(row) {
				if m := levelRe().FindStringSubmatch(strings.TrimSpace(row[reqCol])); m != nil {
					r.Level = normaliseLevel(m[1])
				}
			}
			if stepCol < len(row) {
				r.Step = row[stepCol]
			}
			if evCol >= 0 && evCol < len(row) {
				r.Evidence = row[evCol]
				r.Check = ParseCheck(r.Evidence)
			}
			if fixCol >= 0 && fixCol < len(row) {
				r.Fix = row[fixCol]
			}
			if r.Step == "" {
				continue
			}
			if ph == "" {
				if r.Level != "" {
					out.Unphased = append(out.Unphased, r.Line)
				}
				continue
			}
			add(r)
		}
	}
	for _, f := range doc.Fences {
		if info := strings.ToLower(f.Info); info == "markdown" || info == "md" {
			parseInto(p, out, src[f.Start:f.End], lineBase+f.Line-1, phaseAt(f.Start))
		}
	}
	if len(out.Start) == 0 && len(out.End) == 0 && outer == "" {
		for _, s := range doc.Sections {
			ph := phaseAt(s.Start)
			if ph == "" || !strings.Contains(strings.ToLower(s.Title), "checklist") {
				continue
			}
			for _, l := range markdown.Lines(src, s.BodyStart, s.End) {
				if m := taskRe().FindSubmatch(l.Content()); m != nil {
					add(Requirement{Phase: ph, Step: strings.TrimSpace(string(m[1])), Line: lineBase + 1 + strings.Count(string(src[:l.Offset]), "\n")})
				}
			}
		}
	}
}

var taskRe = lazyregexp.New(`^\s*[-*+] \[[ xX]\] (.+)$`)

func normaliseLevel(l string) string {
	switch u := strings.ToUpper(l); u {
	case "REQUIRED", "SHALL":
		return "MUST"
	case "SHALL NOT":
		return "MUST NOT"
	case "RECOMMENDED":
		return "SHOULD"
	case "OPTIONAL":
		return "MAY"
	default:
		return u
	}
}
