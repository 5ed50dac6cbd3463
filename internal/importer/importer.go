// Package importer parses the session logs of an agents repository (the
// ".agents/sessions" tree written by AI coding agents and their operators)
// into a normalised [Session] value. It is a pure parser: it reads files and
// returns values, and never writes to the vault.
//
// # Source formats
//
// Two families of session log exist, and each drifted over time:
//
//   - Markdown logs ("*.md"). Free-form documents with a "# Session …" title,
//     metadata lines ("**Date**: 2025-12-22", "- **Branch**: main"),
//     protocol checklist tables ("| Req | Step | Status | Evidence |" with
//     "[x]"/"[ ]" cells and MUST/SHOULD/MAY levels), and sections such as
//     "## Objective", "## Decisions", "## Work Log", "## Outcomes" and
//     "## Next Steps". Per-issue handoffs ("sessions/handoffs/*-handoff.md")
//     use the same building blocks and are imported as sessions too, with
//     Format "markdown-handoff". See [ParseMarkdown].
//   - JSON logs ("*.json"). An object with a "session" header object,
//     a "protocolCompliance" checklist, a "workLog" array, "endingCommit"
//     and "nextSteps". The format name records the declared schema version;
//     see [ParseJSON] and the Format* constants.
//
// # Which files are session logs
//
// A Markdown file is a session log when its name starts with YYYY-MM-DD and
// contains "session" or "handoff", or when its name has one of the two and
// its content has at least two session markers (a date or objective line,
// a branch, a start commit, a checklist, a work log, decisions, next
// steps). Per-issue handoffs are kept: they record one session's end state
// (status, decisions, next steps, a resume checklist) for one issue. Hence,
// in the reference corpus, "IMPLEMENTATION-SUMMARY-guardrails.md",
// "STEP-0-METRICS.md", "STEP-0.5-METRICS.md", "handoffs/README.md" (no
// date, no "session") and "2026-01-17-orphaned-artifacts-catalog.md" (a
// generated audit with no session content) are skipped.
//
// A JSON file is a session log when it is an object with a "session"
// object, or with a top-level "objective" plus a date, start time, session
// number or checklist. Other JSON (arrays, episode or workflow files) is
// skipped, as is invalid JSON (with the line of the syntax error).
//
// When a Markdown and a JSON file give the same Session.ID (the JSON logs
// migrated from Markdown keep the file name), [Scan] keeps the richer one,
// fills its empty fields from the other and reports the other as skipped.
//
// # Normalisation
//
// Text fields are single lines without Markdown emphasis or backticks.
// Entries of Updates, Outcomes and NextSteps, and the Objective, are at most
// [MaxLineLen] bytes. Invalid UTF-8 is replaced by U+FFFD. Nothing is
// invented: a field the source does not state stays empty, except Objective
// and Date, which fall back to the title or file name.
package importer

import (
	"errors"
	"fmt"
	"time"
)

// Format names stored in [Session.Format].
const (
	// FormatMarkdown is a Markdown session log ("YYYY-MM-DD-session-N-slug.md").
	FormatMarkdown = "markdown"
	// FormatMarkdownHandoff is a Markdown per-issue handoff
	// ("sessions/handoffs/YYYY-MM-DD-ISSUE-handoff.md"): a session-end note
	// with Status, Decisions Made, Next Steps and a "Verification on Resume"
	// checklist.
	FormatMarkdownHandoff = "markdown-handoff"
	// FormatJSONLegacy is a JSON log with a "session" header object but no
	// "schemaVersion" field (the logs written before the schema existed, and
	// the logs migrated from Markdown, whose objective reads
	// "[Migrated from markdown]").
	FormatJSONLegacy = "json-legacy"
	// FormatJSONFlat is a JSON log without a "session" header object: the
	// header fields ("objective", "date", "branch", "session_number",
	// "session_id", "sessionNumber", "startTime") sit at the top level.
	FormatJSONFlat = "json-flat"
	// FormatJSONVersionPrefix prefixes the major schema version of a JSON
	// log that declares "schemaVersion": "1.0", "1.0.0" and "1.1" give
	// "json-v1"; "2.0" gives "json-v2"; "0.2" gives "json-v0". All of them
	// share the shape of session-log.schema.json.
	FormatJSONVersionPrefix = "json-v"
)

// Checklist phases stored in [ChecklistItem.Phase] for the two protocol
// checklists. Items from other sections carry the section's title instead.
const (
	// PhaseStart marks items of the session-start checklist (Markdown
	// "Session Start" sections, JSON protocolCompliance.sessionStart).
	PhaseStart = "start"
	// PhaseEnd marks items of the session-end checklist (Markdown "Session
	// End" sections, JSON protocolCompliance.sessionEnd).
	PhaseEnd = "end"
)

// MaxLineLen is the maximum length, in bytes, of one entry of
// [Session.Updates], [Session.Outcomes] and [Session.NextSteps] and of
// [Session.Objective]. Longer text is cut at a rune boundary and ends in "…".
const MaxLineLen = 500

// Session is one imported session log, normalised. Zero values mean "not in
// the source" (Objective and Date have fallbacks, see below). All strings
// are single-line (newlines folded to spaces) and stripped of Markdown
// emphasis and code backticks (text inside code spans is kept).
type Session struct {
	// ID is the file name without its extension, with every rune outside
	// [A-Za-z0-9_-] replaced by '-', e.g.
	// "2025-12-20-session-48-semantic-slug-orchestration". It is unique in
	// the result of [Scan].
	ID string
	// SourcePath is the file's path relative to the directory given to
	// [Scan] (slash-separated), or the relPath given to the Parse functions.
	SourcePath string
	// Format names the source format: one of the Format* constants, or
	// FormatJSONVersionPrefix followed by the major schema version.
	Format string
	// Date is the session date or start time. Markdown: the "Date" (or
	// "Start"/"Started") metadata line. JSON: session.start_time,
	// session.timestamp or startTime when present, else the earliest
	// work-log timestamp on session.date, else session.date. A date without
	// a time is midnight UTC; a time keeps the UTC offset written in the
	// source (compare with Equal). When the source has no date, the
	// YYYY-MM-DD prefix of the file name is used; zero only when neither
	// exists.
	Date time.Time
	// Ended is the session end time if known, never before Date. Markdown:
	// an "End"/"Ended"/"End Time"/"Completed" metadata line holding a date.
	// JSON: session.end_time/endTime, else the latest full timestamp
	// (RFC 3339, "timestamp" or "time") in the work log.
	Ended time.Time
	// Objective is one line (<= MaxLineLen bytes) saying what the session
	// was for; never empty. Markdown: "Objective"/"Goal" metadata, else the
	// first paragraph (or the items, joined with "; ") of an "Objective"/
	// "Goal"/"Task" section, else "Task"/"Focus" metadata (handoffs:
	// "**Task**"). JSON: session.objective (or task/goal/title/description,
	// or a top-level objective). When absent or a placeholder ("[Migrated
	// from markdown]", "TBD"), it falls back to the title without its
	// "Session N:" prefix ("Session 374: Codex MCP Support" → "Codex MCP
	// Support"), then to the file name's slug
	// ("2025-12-20-session-48-semantic-slug" → "Semantic slug"), then to
	// "Session N" or the ID.
	Objective string
	// Status is the session status as written in the source, e.g.
	// "Complete", "in_progress", "[COMPLETE] All comments addressed",
	// "✅ COMPLETE - PR ready to merge". Markdown: a "Status"/"Session
	// Status" metadata line in the header, a session-info, outcome or
	// session-end section, or a handoff's "**Phase**" line; git-state values
	// ("clean", "working tree …") are ignored. JSON: top-level status,
	// session.status or outcome.status.
	Status string
	// Branch is the git branch name, without backticks and without a
	// trailing "→ target" part.
	Branch string
	// StartCommit and EndCommit are git commit SHAs (7-40 lowercase hex
	// digits, as abbreviated in the source): "Starting Commit"/"Ending
	// Commit" metadata in Markdown (Markdown logs rarely state an ending
	// commit), session.startingCommit and endingCommit in JSON. A value
	// that holds no SHA ("pending", "") leaves the field empty.
	StartCommit, EndCommit string
	// Checklist holds the protocol checklist items in source order. Markdown:
	// rows of tables with a step column (Step, Requirement, Criterion,
	// Task, Item, …) and a status column (Status, Pass?, Done, …) or a
	// "[x]"/"[ ]" cell, anywhere in the document; and "- [x]"/"- [ ]" items
	// outside work-log, outcome, next-step and decision sections (nested
	// items become the evidence). JSON: the entries of
	// protocolCompliance.sessionStart / sessionEnd (any spelling) and of any
	// other protocolCompliance group.
	Checklist []ChecklistItem
	// Decisions holds the decisions recorded in the session, in source
	// order. Markdown: in a "Decisions", "Decisions Made", "Key Decisions",
	// "Design Decision", "Triage Decision"… section, one decision per
	// sub-heading, per top-level list item, per labelled paragraph
	// ("**Error Handling**: …") or per row of a table with a Decision
	// column, or the whole body as one decision when it uses
	// "**Decision**:"/"**Rationale**:" labels; also any "Decision: X"
	// heading. Placeholders ("TBD", "*To be documented*") give none. JSON:
	// decisions, technicalDecisions, keyDecisions, decisionsMade, decision,
	// outcomes.decisions and outcomes.decisionsMade (objects, strings, or
	// objects grouping lists).
	Decisions []Decision
	// Updates are the work-log entries / notable actions, in source order,
	// each one line of at most MaxLineLen bytes. Markdown: the top-level
	// items (nested items appended after "; "), table rows and paragraphs of
	// "Work Log", "Work Completed", "Actions Taken", "Changes Made",
	// "Progress", "Commits", "Files Modified", "Artifacts Created" and
	// top-level "Phase N: …" sections; the first entry of a sub-section is
	// prefixed with its heading ("Phase 1: Context Gathering: Fetched PR");
	// unchecked task items keep a "[ ] " prefix. JSON: workLog entries (or
	// work_log, actions_taken, actions, tasks, workItems, workCompleted,
	// work, agentActivities, events) rendered as "action — result"
	// (step/entry/task/description — outcome/detail/evidence/…).
	Updates []string
	// Outcomes are results and deliverables, one line each (<= MaxLineLen
	// bytes). Markdown: "Outcome(s)", "Results", "Summary", "Deliverables",
	// "Delivery Summary", "Findings", "Conclusion", "Verdict"… sections.
	// JSON: outcomes (a list, or an object whose fields become "Key: value"
	// lines), outcome, summary, deliverables, results, work_summary.
	Outcomes []string
	// NextSteps are follow-up actions, one line each (<= MaxLineLen bytes).
	// Markdown: "Next Steps", "Next Actions", "Notes for Next Session",
	// "Context for Next Session", "Recommendations", "Follow-up"…
	// sections. JSON: nextSteps (also next_steps, nextActions and
	// outcomes.nextSteps / outcomes.next_actions).
	NextSteps []string
	// Issues are the linked issue and pull-request references in order of
	// first appearance, as "#123" (issue or unknown kind) or "PR #4971"
	// (pull request). A number appears once; "PR #N" wins over "#N".
	// Sources: JSON issue/PR fields (relatedIssues, relatedPRs, pr, issue,
	// …), then the text outside code blocks: GitHub pull/issue URLs, "PR #N",
	// "PR N" (two or more digits), "PR-N"/"prN" (three or more), and "#N"
	// with two or more digits unless preceded by a word such as "Comment",
	// "Step" or "Session" ("PR1"/"PR2" plan labels are not references).
	Issues []string
	// UpdateTimes, when not nil, has one entry per entry of Updates: the time
	// the source gives that update, or the zero time when it gives none (the
	// record then shows Date). Claude Code session notes: the time in each
	// "### Update - …" heading.
	UpdateTimes []time.Time
	// Original is the text the session was read from, byte for byte: a whole
	// Claude Code session note, or one chat of an aider history (without the
	// blank lines that separate it from the next). nil for the .agents logs,
	// whose records do not keep it. The archived record keeps it in its
	// "Original text" section (see [Reparse] for reading it back).
	Original []byte
	// Estimated says which times were only estimated, one line each, e.g.
	// "started: a date without a time (00:00 assumed)" or "started: the
	// time of the file's first commit"; the record shows them.
	Estimated []string
}

// ChecklistItem is one step of a protocol checklist.
type ChecklistItem struct {
	// Phase is PhaseStart or PhaseEnd for the session start/end checklists,
	// otherwise the title of the Markdown section holding the item as
	// written (e.g. "Protocol Compliance", "Verification on Resume"), or the
	// humanised key of another JSON group ("Memory first"; "Protocol
	// compliance" for an item written directly in protocolCompliance).
	Phase string
	// Level is the requirement level: "MUST", "SHOULD", "MAY", or the
	// negative forms "MUST NOT" (used by the JSON schema and some Markdown
	// tables) and "SHOULD NOT"; "" when the source gives none. Markdown: the
	// Req/Level column, a "MUST Requirement" header, or a leading upper-case
	// keyword in the step; JSON: "level", or "required": true → "MUST".
	Level string
	// Step is what had to be done: the Step/Requirement cell of a Markdown
	// table, the text of a "- [x]" item, or the humanised key of a JSON item
	// ("usageMandatoryRead" → "Usage mandatory read").
	Step string
	// Done reports whether the step was marked done: "[x]", "✅", "PASS",
	// "COMPLETE", "done", "yes" and JSON true count as done; "[ ]", "❌",
	// "N/A", "skipped", "pending", "fail" and anything else do not.
	Done bool
	// Evidence is the evidence or notes given for the step, if any.
	Evidence string
}

// Decision is one decision recorded in a session log.
type Decision struct {
	// Title is a short name for the decision: a Markdown sub-heading
	// (without "Decision N:"), bold lead-in or "Key:" label, a JSON
	// title/topic/issue, else the choice's first clause (<= ~100 bytes).
	// Never empty.
	Title string
	// Choice is what was decided: "**Decision**:"/"**Choice**:"… in
	// Markdown, else the first paragraph or the bold lead-in itself; JSON
	// decision/chosen/choice/summary/description. Never empty (it repeats
	// Title when the source states only one text).
	Choice string
	// Rationale is why: "**Rationale**:"/"Why:" (and the items after it),
	// other labelled lines ("Context: …", "Trade-offs: …") and the text after
	// a bold lead-in; JSON rationale/reason, with "impact" appended as
	// "Impact: …". At most MaxLineLen bytes.
	Rationale string
	// Alternatives are the options listed as considered ("**Options**:",
	// "Alternatives considered: …"; JSON alternatives/options/…). In
	// Markdown they may include the chosen option.
	Alternatives []string
}

// Skipped is a file that [Scan] did not import, and why.
type Skipped struct {
	// Path is the file's path relative to the directory given to Scan,
	// slash-separated.
	Path string `json:"path"`
	// Reason says why the file was skipped: "not a session log: …" (with
	// the rule that failed), "empty file", "invalid JSON at line 12: …"
	// (the encoding/json message), "not a .md or .json file",
	// "unreadable: …", or `duplicate of session ID "X": kept
	// sessions/X.md (its empty fields filled from this file)`.
	Reason string `json:"reason"`
}

// ErrNotSessionLog is returned (wrapped, with the reason) by the Parse
// functions for a file that is readable but is not a session log.
var ErrNotSessionLog = errors.New("not a session log")

// ErrEmpty is returned (wrapped) by the Parse functions for a file that is
// empty or holds only white space.
var ErrEmpty = errors.New("empty file")

// ParseError is the error type returned by [ParseMarkdown] and [ParseJSON].
// It names the file and, for JSON syntax errors, the 1-based line.
type ParseError struct {
	// Path is the relPath given to the Parse function.
	Path string
	// Line is the 1-based line of a JSON syntax error, or 0.
	Line int
	// Err is the cause: wraps ErrNotSessionLog or ErrEmpty, or is the
	// *json.SyntaxError (or other decoding error) of a JSON file.
	Err error
}

// Error returns "path: cause"; for JSON syntax errors the cause reads
// "invalid JSON at line N: …".
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: %s", e.Path, e.reason())
}

// Unwrap returns the cause, so errors.Is(err, ErrNotSessionLog) works.
func (e *ParseError) Unwrap() error { return e.Err }

// reason renders the error for Skipped.Reason (without the path, which
// Skipped already carries).
func (e *ParseError) reason() string {
	if e.Line > 0 {
		return fmt.Sprintf("invalid JSON at line %d: %v", e.Line, e.Err)
	}
	return e.Err.Error()
}

// objSource says where a session's objective came from, best first; it
// lets Scan prefer the better objective when merging duplicates.
type objSource int

const (
	objFromContent objSource = iota // an objective field, label or section
	objFromTitle                    // the document's title
	objFromName                     // the file name, session number or ID
)
