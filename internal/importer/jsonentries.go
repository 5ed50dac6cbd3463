package importer

import (
	"encoding/json"
	"strconv"
	"strings"
)

// This file renders JSON work-log entries and decisions.

// entryLine renders a work-log entry (or any list element) as one line:
// strings as they are; objects as "primary — secondary" (e.g. "action —
// result"), else as "key: value; key: value" of their scalar fields.
func entryLine(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		return joinEntries(v)
	case *jobj:
		return objectLine(v)
	}
	return scalarText(v)
}

// objectLine renders an object entry; see entryLine.
func objectLine(o *jobj) string {
	pk, primary := "", ""
	for _, k := range entryPrimaryKeys {
		if s, ok := o.vals[k].(string); ok && strings.TrimSpace(s) != "" {
			pk, primary = k, s
			break
		}
	}
	for _, k := range entryListKeys {
		if l, ok := o.vals[k].([]any); ok && len(l) > 0 {
			primary = joinNonEmpty(primary, joinEntries(l))
		}
	}
	secondary := ""
	for _, k := range entrySecondaryKeys {
		cand := ""
		switch s := o.vals[k].(type) {
		case string:
			cand = s
		case []any:
			cand = joinEntries(s)
		}
		if k != pk && strings.TrimSpace(cand) != "" {
			secondary = cand
			break
		}
	}
	switch {
	case primary != "" && secondary != "":
		return primary + " — " + secondary
	case primary != "" || secondary != "":
		return primary + secondary
	}
	return compactObject(o)
}

// compactObject renders the scalar fields of an object as "key: value; …",
// skipping times.
func compactObject(o *jobj) string {
	var parts []string
	for _, k := range o.keys {
		if k == "time" || k == "timestamp" {
			continue
		}
		switch v := o.vals[k].(type) {
		case string, json.Number:
			parts = append(parts, humanize(k)+": "+scalarText(v))
		case bool:
			parts = append(parts, humanize(k)+": "+strconv.FormatBool(v))
		}
	}
	return strings.Join(parts, "; ")
}

// joinEntries renders the elements of a list joined with "; ".
func joinEntries(l []any) string {
	var parts []string
	for _, e := range l {
		if s := strings.TrimSpace(entryLine(e)); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// Keys of a decision object.
var (
	decisionTitleKeys  = []string{"title", "topic", "question", "issue", "area", "context"}
	decisionChoiceKeys = []string{"decision", "chosen", "chosenApproach", "decision_made", "choice", "selected", "summary", "description", "outcome"}
	decisionWhyKeys    = []string{"rationale", "reason", "why", "justification"}
	decisionAltKeys    = []string{"alternatives", "alternatives_considered", "alternativesConsidered", "alternative", "options", "rejected", "rejectedAlternatives"}
)

// decisionsFromJSON reads a decision list, a single decision object, a
// string, or an object grouping decision lists ({"process": [...],
// "technical": [...]}).
func decisionsFromJSON(v any) []Decision {
	var out []Decision
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			out = append(out, decisionsFromJSON(e)...)
		}
	case string:
		d := Decision{}
		d.set(partChoice, v)
		if d.finish() {
			out = append(out, d)
		}
	case *jobj:
		if v.get(decisionChoiceKeys...) == nil && v.get(decisionWhyKeys...) == nil {
			// A grouping object: read its lists and objects.
			for _, k := range v.keys {
				switch g := v.vals[k].(type) {
				case []any, *jobj:
					out = append(out, decisionsFromJSON(g)...)
				}
			}
			if len(out) > 0 {
				return out
			}
		}
		if d, ok := decisionFromObject(v); ok {
			out = append(out, d)
		}
	}
	return out
}

// decisionFromObject reads {"decision", "rationale", "impact",
// "alternatives", …} in any of the spellings listed above.
func decisionFromObject(o *jobj) (Decision, bool) {
	var d Decision
	d.set(partTitle, o.str(decisionTitleKeys...))
	d.set(partChoice, o.str(decisionChoiceKeys...))
	d.set(partRationale, o.str(decisionWhyKeys...))
	if impact := o.str("impact", "consequences"); impact != "" {
		d.set(partRationale, "Impact: "+impact)
	}
	switch alt := o.get(decisionAltKeys...).(type) {
	case string:
		d.set(partAlternatives, alt)
	case []any:
		for _, a := range alt {
			d.set(partAlternatives, entryLine(a))
		}
	}
	return d, d.finish()
}
