package importer

import (
	"strings"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// Column roles of a Markdown checklist table, keyed by the lower-cased,
// cleaned header text.
type colRole int

const (
	colNone colRole = iota
	colLevel
	colStep
	colStatus
	colEvidence
	colPhase
)

var headerRoles = map[string]colRole{
	"req": colLevel, "level": colLevel, "req level": colLevel, "requirement level": colLevel,
	"rfc 2119": colLevel, "must/should": colLevel,

	"step": colStep, "requirement": colStep, "criterion": colStep,
	"criteria": colStep, "task": colStep, "item": colStep, "check": colStep, "action": colStep,
	"required action": colStep, "activity": colStep, "tool/file": colStep, "deliverable": colStep,
	"gate": colStep, "checklist item": colStep, "requirement/step": colStep, "tasks": colStep,
	"verification": colStep, "rule": colStep,

	"status": colStatus, "pass?": colStatus, "done": colStatus, "complete": colStatus,
	"completed": colStatus, "result": colStatus, "state": colStatus, "passed": colStatus,
	"met": colStatus, "met?": colStatus, "checked": colStatus, "done?": colStatus, "✓": colStatus,

	"evidence": colEvidence, "notes": colEvidence, "note": colEvidence, "proof": colEvidence,
	"details": colEvidence, "comment": colEvidence, "comments": colEvidence,
	"actual evidence": colEvidence, "evidence/notes": colEvidence,

	"phase": colPhase,
}

var reCellCheckbox = lazyregexp.New(`\[([ xX✓✔])\]`)

// checklistFromTable turns the rows of a table into checklist items when
// the table is a checklist: it has a step (or phase) column and a status
// column, or a "[x]"/"[ ]" cell. phase is given to every item. A "MUST
// Requirement" header gives every row level MUST.
func checklistFromTable(rows [][]string, phase string) ([]ChecklistItem, bool) {
	if len(rows) < 2 {
		return nil, false
	}
	roles := make([]colRole, len(rows[0]))
	has := map[colRole]int{}
	headerLevel := ""
	for i, h := range rows[0] {
		key := strings.ToLower(clean(h))
		roles[i] = headerRoles[key]
		if roles[i] == colNone && strings.HasSuffix(key, " requirement") {
			roles[i], headerLevel = colStep, normLevel(key)
		}
		if _, seen := has[roles[i]]; !seen && roles[i] != colNone {
			has[roles[i]] = i
		}
	}
	_, hasStep := has[colStep]
	_, hasPhase := has[colPhase]
	_, hasStatus := has[colStatus]
	if !hasStep && hasPhase {
		has[colStep], hasStep = has[colPhase], true
	}
	boxes := tableHasCheckbox(rows[1:])
	if !(hasStep && (hasStatus || boxes)) && !boxes {
		return nil, false
	}
	var items []ChecklistItem
	for _, row := range rows[1:] {
		if it, ok := itemFromRow(row, has, boxes, phase, headerLevel); ok {
			items = append(items, it)
		}
	}
	return items, len(items) > 0
}

func tableHasCheckbox(rows [][]string) bool {
	for _, row := range rows {
		for _, c := range row {
			if reCellCheckbox().MatchString(c) {
				return true
			}
		}
	}
	return false
}

// itemFromRow reads one checklist row using the column indexes in has.
func itemFromRow(row []string, has map[colRole]int, boxes bool, phase, level string) (ChecklistItem, bool) {
	cell := func(r colRole) string {
		if i, ok := has[r]; ok && i < len(row) {
			return row[i]
		}
		return ""
	}
	it := ChecklistItem{Phase: phase, Level: level}
	if l := normLevel(cell(colLevel)); l != "" {
		it.Level = l
	}
	step := cell(colStep)
	if _, ok := has[colStep]; !ok {
		step = firstNonEmpty(row)
	}
	status := cell(colStatus)
	if _, ok := has[colStatus]; !ok && boxes {
		status = findCheckbox(row)
	}
	step = reCellCheckbox().ReplaceAllString(step, "")
	it.Step = line(step)
	if it.Level == "" {
		it.Level = leadingLevel(it.Step)
	}
	it.Done = doneFromStatus(status)
	it.Evidence = line(cell(colEvidence))
	if it.Step == "" {
		return it, false
	}
	return it, true
}

func firstNonEmpty(row []string) string {
	for _, c := range row {
		if strings.TrimSpace(reCellCheckbox().ReplaceAllString(c, "")) != "" {
			return c
		}
	}
	return ""
}

func findCheckbox(row []string) string {
	for _, c := range row {
		if m := reCellCheckbox().FindString(c); m != "" {
			return m
		}
	}
	return ""
}

// checklistFromItem turns a "- [x] step" item into a checklist item; its
// nested items become the evidence.
func checklistFromItem(g blockGroup, phase string) ChecklistItem {
	it := ChecklistItem{Phase: phase, Step: line(g.head.text), Done: g.head.check == 'x'}
	it.Level = leadingLevel(it.Step)
	var ev []string
	for _, c := range g.children {
		ev = append(ev, c.text)
	}
	it.Evidence = line(strings.Join(ev, "; "))
	return it
}

var reLevel = lazyregexp.New(`^\W*(MUST[ _]NOT|MUST|SHOULD[ _]NOT|SHOULD|MAY)\b`)

// normLevel maps a level cell ("MUST", "**SHOULD**", "must not",
// "MUST_NOT") to "MUST", "MUST NOT", "SHOULD", "SHOULD NOT" or "MAY";
// anything else gives "".
func normLevel(s string) string {
	m := reLevel().FindStringSubmatch(strings.ToUpper(clean(s)))
	if m == nil {
		return ""
	}
	return strings.ReplaceAll(m[1], "_", " ")
}

// leadingLevel finds a level written at the start of a step in upper case
// ("MUST: Read HANDOFF.md").
func leadingLevel(step string) string {
	if m := reLevel().FindStringSubmatch(step); m != nil {
		return normLevel(m[1])
	}
	return ""
}

var (
	reDoneMark    = lazyregexp.New(`\[[xX✓✔]\]|✅|✔|☑|✓|🟢`)
	reNotDoneMark = lazyregexp.New(`\[ \]|❌|✗|✘|⬜|☐|🔴|⚠|⏳|⏭`)
	reNotDoneWord = lazyregexp.New(`(?i)\b(not|no|fail(ed|s|ure)?|incomplete|skip(ped)?|pending|blocked|partial(ly)?|n/?a|todo|wip|deferred|missing|in[ _-]progress|open|false|waived|violation|never)\b`)
	reDoneWord    = lazyregexp.New(`(?i)\b(pass(ed)?|done|complete[d]?|yes|y|ok|verified|true|success(ful)?|finished|met|resolved|present|created|read|confirmed|clean)\b`)
)

// doneFromStatus reads a status cell: a done mark ("[x]", "✅") wins, then
// a not-done mark ("[ ]", "❌"), then negative words ("FAIL", "N/A",
// "Skipped", "not run"), then positive words ("PASS", "COMPLETE", "Done").
func doneFromStatus(s string) bool {
	switch {
	case reDoneMark().MatchString(s):
		return true
	case reNotDoneMark().MatchString(s), reNotDoneWord().MatchString(s):
		return false
	}
	return reDoneWord().MatchString(s)
}
