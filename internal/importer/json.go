package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// Key aliases used across the JSON schema versions, in order of preference.
var (
	jsonObjectiveKeys = []string{"objective", "task", "goal", "title", "description"}
	jsonDateKeys      = []string{"date", "sessionDate", "session_date"}
	jsonStartKeys     = []string{"start_time", "startTime", "started", "startedAt", "timestamp"}
	jsonEndKeys       = []string{"end_time", "endTime", "ended", "endedAt", "completedAt"}
	jsonBranchKeys    = []string{"branch", "gitBranch"}
	jsonStartSHAKeys  = []string{"startingCommit", "starting_commit", "startCommit", "baseCommit"}
	jsonEndSHAKeys    = []string{"endingCommit", "ending_commit", "endCommit"}
	jsonStatusKeys    = []string{"status", "sessionStatus", "session_status"}
	jsonChecklistKeys = []string{"protocolCompliance", "protocol_compliance", "protocol"}
	jsonNextKeys      = []string{"nextSteps", "next_steps", "nextActions", "next_actions"}
	// Arrays (or objects) of work-log entries.
	jsonWorkKeys = []string{"workLog", "work_log", "actions_taken", "actionsTaken", "actions",
		"tasks", "workItems", "workCompleted", "work_completed", "work", "agentActivities",
		"activities", "events"}
	jsonOutcomeKeys  = []string{"outcomes", "outcome", "summary", "deliverables", "results", "work_summary", "workSummary"}
	jsonDecisionKeys = []string{"decisions", "technicalDecisions", "keyDecisions", "decisionsMade", "decision"}
	// Keys of a work-log entry: the first primary key present is what was
	// done, the first secondary key (a different one) is the result.
	entryPrimaryKeys   = []string{"action", "step", "entry", "task", "activity", "item", "title", "description", "summary", "event", "content", "change", "name", "message", "decision", "phase"}
	entrySecondaryKeys = []string{"result", "outcome", "detail", "details", "finding", "findings", "evidence", "description", "notes", "note", "path", "impact", "rationale", "status"}
	entryListKeys      = []string{"actions", "activities", "steps"}
	// Keys of a checklist item.
	itemDoneKeys     = []string{"Complete", "complete", "completed", "Completed", "done", "passed", "status", "Status"}
	itemEvidenceKeys = []string{"Evidence", "evidence", "notes", "note", "reason", "details", "artifact", "result"}
	// Issue and PR reference keys (values: numbers, "#N" strings or lists).
	jsonIssueKeys = []string{"relatedIssues", "issue", "issueId", "issue_number", "github_issue", "issues", "closedIssues", "issuesAddressed"}
	jsonPRKeys    = []string{"relatedPRs", "pr", "prs", "prNumber", "pr_number", "pullRequest"}
)

// Header keys of the flat format (no "session" object).
var flatHeaderKeys = []string{"session_number", "sessionNumber", "session_id", "sessionId"}

// ParseJSON parses a JSON session log. relPath is used for Session.ID,
// Session.SourcePath and the date fallback. Format is FormatJSONLegacy,
// FormatJSONFlat or FormatJSONVersionPrefix+major version (see the Format*
// constants). The error is a *ParseError: wrapping ErrEmpty for a blank
// file; holding the *json.SyntaxError (with ParseError.Line set from its
// byte offset) for invalid JSON; or wrapping ErrNotSessionLog when the
// value is not an object with a "session" object or top-level session
// header fields (objective plus a date, start time, session number or
// checklist).
func ParseJSON(relPath string, data []byte) (Session, error) {
	s, _, err := parseJSON(relPath, data)
	return s, err
}

// parseJSON is ParseJSON that also reports where the objective came from.
func parseJSON(relPath string, data []byte) (Session, objSource, error) {
	relPath = strings.ReplaceAll(relPath, "\\", "/")
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return Session{}, 0, &ParseError{Path: relPath, Err: ErrEmpty}
	}
	v, err := decodeJSON(data)
	if err != nil {
		return Session{}, 0, &ParseError{Path: relPath, Line: errorLine(data, err), Err: err}
	}
	root, ok := v.(*jobj)
	if !ok {
		return Session{}, 0, &ParseError{Path: relPath, Err: fmt.Errorf("%w: top-level JSON value is %s, not an object", ErrNotSessionLog, jsonKind(v))}
	}
	format, header := jsonFormat(root)
	if format == "" {
		return Session{}, 0, &ParseError{Path: relPath, Err: fmt.Errorf("%w: JSON object has no \"session\" object and no session header fields (keys: %s)", ErrNotSessionLog, keyList(root))}
	}
	j := jsonDoc{root: root, header: header}
	j.s = Session{ID: sessionID(relPath), SourcePath: relPath, Format: format}
	j.readHeader()
	j.readChecklist()
	j.readWork()
	j.readOutcomes()
	j.readDecisions()
	j.readNextSteps()
	j.readIssues()
	j.readTimes()
	return j.s, j.objSource, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

func keyList(o *jobj) string {
	keys := o.keys
	if len(keys) > 8 {
		keys = append(keys[:8:8], "…")
	}
	return strings.Join(keys, ", ")
}

var reMajor = lazyregexp.New(`^\s*v?(\d+)`)

// jsonFormat names the schema variant and returns the object holding the
// session header fields.
func jsonFormat(root *jobj) (string, *jobj) {
	if h := root.obj("session"); h != nil {
		sv := root.str("schemaVersion", "schema_version", "version")
		if m := reMajor().FindStringSubmatch(sv); m != nil {
			return FormatJSONVersionPrefix + m[1], h
		}
		return FormatJSONLegacy, h
	}
	hasObjective := root.str("objective") != ""
	hasHeader := root.get(flatHeaderKeys...) != nil || root.str(jsonDateKeys...) != "" ||
		root.str(jsonStartKeys...) != "" || root.get(jsonChecklistKeys...) != nil
	if hasObjective && hasHeader {
		return FormatJSONFlat, root
	}
	return "", nil
}

// jsonDoc is a JSON document being turned into a Session.
type jsonDoc struct {
	s         Session
	root      *jobj
	header    *jobj     // the "session" object, or root for the flat format
	objSource objSource // where Objective came from
}

// both looks a key up in the header first, then at the top level.
func (j *jsonDoc) both(keys ...string) string {
	if s := j.header.str(keys...); s != "" {
		return s
	}
	return j.root.str(keys...)
}

func (j *jsonDoc) readHeader() {
	s := &j.s
	s.Objective = line(j.both(jsonObjectiveKeys...))
	if isPlaceholder(s.Objective) {
		s.Objective = ""
	}
	if s.Objective == "" {
		j.objSource = objFromName
		s.Objective = slugObjective(s.ID)
	}
	if s.Objective == "" {
		if n := j.both("number", "session_number", "sessionNumber"); n != "" {
			s.Objective = "Session " + n
		} else {
			s.Objective = s.ID
		}
	}
	s.Branch = cleanBranch(j.both(jsonBranchKeys...))
	s.StartCommit = commitSHA(j.both(jsonStartSHAKeys...))
	s.EndCommit = commitSHA(j.root.str(jsonEndSHAKeys...))
	if s.EndCommit == "" {
		s.EndCommit = commitSHA(j.header.str(jsonEndSHAKeys...))
	}
	s.Status = line(j.root.str(jsonStatusKeys...))
	if s.Status == "" {
		s.Status = line(j.header.str(jsonStatusKeys...))
	}
	if s.Status == "" {
		s.Status = line(j.root.obj("outcome").str("status"))
	}
}

// readTimes sets Date and Ended; see Session.Date and Session.Ended.
func (j *jsonDoc) readTimes() {
	s := &j.s
	day := j.both(jsonDateKeys...)
	if t, ok := parseTime(j.both(jsonStartKeys...)); ok {
		s.Date = t
	} else if t, ok := parseTime(day); ok {
		s.Date = t
		if first, ok := j.firstWorkTime(t.Format("2006-01-02")); ok {
			s.Date = first
		}
	} else if t, ok := dateFromName(s.SourcePath); ok {
		s.Date = t
	}
	if t, ok := parseTime(j.both(jsonEndKeys...)); ok && !t.Before(s.Date) {
		s.Ended = t
	} else if t, ok := j.lastWorkTime(); ok && !t.Before(s.Date) {
		s.Ended = t
	}
}

// workTimes returns the full RFC 3339 timestamps ("timestamp"/"time") of
// the work-log entries.
func (j *jsonDoc) workTimes() []time.Time {
	var out []time.Time
	for _, e := range j.workEntries() {
		if o, ok := e.(*jobj); ok {
			if t, ok := isFullTimestamp(o.str("timestamp", "time")); ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// firstWorkTime returns the earliest work-log timestamp written on day
// (YYYY-MM-DD, in the timestamp's own offset).
func (j *jsonDoc) firstWorkTime(day string) (time.Time, bool) {
	var best time.Time
	for _, t := range j.workTimes() {
		if t.Format("2006-01-02") == day && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	return best, !best.IsZero()
}

func (j *jsonDoc) lastWorkTime() (time.Time, bool) {
	var best time.Time
	for _, t := range j.workTimes() {
		if t.After(best) {
			best = t
		}
	}
	return best, !best.IsZero()
}

// readChecklist reads protocolCompliance: groups "sessionStart"/"sessionEnd"
// (any spelling) become PhaseStart/PhaseEnd, other groups keep their
// humanised key; an item written directly in protocolCompliance gets phase
// "Protocol compliance".
func (j *jsonDoc) readChecklist() {
	pc, ok := j.root.get(jsonChecklistKeys...).(*jobj)
	if !ok {
		return
	}
	for _, k := range pc.keys {
		v := pc.vals[k]
		group, isGroup := v.(*jobj)
		if !isGroup || looksLikeItem(group) {
			j.s.Checklist = append(j.s.Checklist, jsonItem("Protocol compliance", k, v))
			continue
		}
		phase := jsonPhase(k)
		for _, ik := range group.keys {
			j.s.Checklist = append(j.s.Checklist, jsonItem(phase, ik, group.vals[ik]))
		}
	}
}

func jsonPhase(key string) string {
	k := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(key))
	switch {
	case strings.Contains(k, "start") || strings.Contains(k, "init"):
		return PhaseStart
	case strings.Contains(k, "end") || strings.Contains(k, "close"):
		return PhaseEnd
	}
	return humanize(key)
}

// looksLikeItem reports whether an object is a checklist item rather than
// a group of items.
func looksLikeItem(o *jobj) bool {
	for _, k := range append(append([]string{"level", "required"}, itemDoneKeys...), itemEvidenceKeys...) {
		switch o.vals[k].(type) {
		case string, bool, json.Number:
			return true
		}
	}
	return false
}

// jsonItem reads one checklist item: an object with complete/level/evidence
// (any spelling), a bool, a status string, a list (e.g. memories loaded) or
// a number.
func jsonItem(phase, key string, v any) ChecklistItem {
	it := ChecklistItem{Phase: phase, Step: humanize(key)}
	switch v := v.(type) {
	case bool:
		it.Done = v
	case string:
		it.Done, it.Evidence = doneFromStatus(v), line(v)
	case json.Number:
		it.Evidence = v.String()
	case []any:
		it.Done = len(v) > 0
		it.Evidence = line(joinEntries(v))
	case *jobj:
		it.Level = normLevel(v.str("level", "Level"))
		if req, ok := v.get("required").(bool); ok && req && it.Level == "" {
			it.Level = "MUST"
		}
		it.Done = itemDone(v)
		it.Evidence = line(v.str(itemEvidenceKeys...))
		if it.Evidence == "" {
			if l, ok := v.get(itemEvidenceKeys...).([]any); ok {
				it.Evidence = line(joinEntries(l))
			}
		}
	}
	return it
}

// itemDone reads the first done-like field of a checklist item object:
// a bool, or a status string read by doneFromStatus.
func itemDone(o *jobj) bool {
	for _, k := range itemDoneKeys {
		switch d := o.vals[k].(type) {
		case bool:
			return d
		case string:
			return doneFromStatus(d)
		}
	}
	return false
}

// workEntries returns the work-log entries from the first work key present
// (workLog, work_log, actions_taken, …). An object is one entry when it
// looks like one, else its values are entries.
func (j *jsonDoc) workEntries() []any {
	for _, k := range jsonWorkKeys {
		switch v := j.root.vals[k].(type) {
		case []any:
			if len(v) > 0 {
				return v
			}
		case *jobj:
			if v.str(entryPrimaryKeys...) != "" {
				return []any{v}
			}
			var out []any
			for _, kk := range v.keys {
				vv := v.vals[kk]
				if l, ok := vv.([]any); ok {
					out = append(out, l...)
				} else if s := scalarText(vv); s != "" {
					out = append(out, humanize(kk)+": "+s)
				}
			}
			if len(out) > 0 {
				return out
			}
		}
	}
	return nil
}

func (j *jsonDoc) readWork() {
	for _, e := range j.workEntries() {
		j.s.Updates = appendLine(j.s.Updates, entryLine(e))
	}
}

// skipInOutcomes are keys of an outcomes object read elsewhere.
var skipInOutcomes = map[string]bool{
	"decisions": true, "decisionsMade": true, "nextSteps": true, "next_steps": true,
	"next_actions": true, "nextActions": true, "learnings": true,
}

// readOutcomes reads outcomes (array or object), outcome, summary,
// deliverables, results and work_summary. Object fields become
// "Key: value" lines; "summary" fields are kept as they are.
func (j *jsonDoc) readOutcomes() {
	for _, k := range jsonOutcomeKeys {
		j.addOutcomes("", j.root.vals[k])
	}
}

func (j *jsonDoc) addOutcomes(label string, v any) {
	prefix := ""
	if label != "" && label != "summary" {
		prefix = humanize(label) + ": "
	}
	switch v := v.(type) {
	case string, json.Number:
		j.s.Outcomes = appendLine(j.s.Outcomes, prefix+scalarText(v))
	case bool:
		j.s.Outcomes = appendLine(j.s.Outcomes, prefix+strconv.FormatBool(v))
	case []any:
		for _, e := range v {
			j.s.Outcomes = appendLine(j.s.Outcomes, prefix+entryLine(e))
		}
	case *jobj:
		if label != "" {
			j.s.Outcomes = appendLine(j.s.Outcomes, prefix+objectLine(v))
			return
		}
		for _, k := range v.keys {
			if !skipInOutcomes[k] {
				j.addOutcomes(k, v.vals[k])
			}
		}
	}
}

func (j *jsonDoc) readNextSteps() {
	add := func(v any) {
		if l, ok := v.([]any); ok {
			for _, e := range l {
				j.s.NextSteps = appendLine(j.s.NextSteps, entryLine(e))
			}
		} else if s := scalarText(v); s != "" {
			j.s.NextSteps = appendLine(j.s.NextSteps, s)
		}
	}
	add(j.root.get(jsonNextKeys...))
	add(j.root.obj("outcomes").get(jsonNextKeys...))
}

// readDecisions reads the decision arrays at the top level and in outcomes.
func (j *jsonDoc) readDecisions() {
	for _, o := range []*jobj{j.root, j.root.obj("outcomes")} {
		for _, k := range jsonDecisionKeys {
			j.s.Decisions = append(j.s.Decisions, decisionsFromJSON(o.get(k))...)
		}
	}
}

var reDigits = lazyregexp.New(`\d+`)

// readIssues collects references from the issue/PR keys of the header and
// top level, then from every string in the document.
func (j *jsonDoc) readIssues() {
	var r refs
	addRef := func(v any, pr bool) {
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case json.Number:
				n, _ := strconv.Atoi(v.String())
				r.add(n, pr)
			case string:
				if strings.Contains(v, "/") {
					r.scan(v)
				} else if m := reDigits().FindString(v); m != "" && len(v) <= 12 {
					n, _ := strconv.Atoi(m)
					r.add(n, pr)
				}
			case []any:
				for _, e := range v {
					walk(e)
				}
			case *jobj:
				walk(v.get("number", "id", "pr", "issue"))
			}
		}
		walk(v)
	}
	for _, o := range []*jobj{j.header, j.root} {
		for _, k := range jsonPRKeys {
			addRef(o.vals[k], true)
		}
		for _, k := range jsonIssueKeys {
			addRef(o.vals[k], false)
		}
	}
	if em := j.root.obj("episodeMetrics").obj("comparison"); em != nil {
		addRef(em.vals["pullRequest"], true)
	}
	walkStrings(j.root, r.scan)
	j.s.Issues = r.list()
}
