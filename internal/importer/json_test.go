package importer

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// jsonV1 follows session-log.schema.json (schemaVersion "1.0"): lower-case
// checklist keys, action/result work log with timestamps, outcomes with
// decisions.
const jsonV1 = `{
  "schemaVersion": "1.0",
  "session": {
    "number": 3625, "date": "2026-07-28", "branch": "fix/3625-hygiene",
    "startingCommit": "9b7e10df5",
    "objective": "Close five independent hygiene issues (#3625, #3597)",
    "relatedPRs": [3700]
  },
  "protocolCompliance": {
    "sessionStart": {
      "branchVerified": {"complete": true, "level": "MUST", "evidence": "git status clean"},
      "serenaActivated": {"complete": false, "level": "SHOULD", "evidence": "Not called"}
    },
    "sessionEnd": {
      "handoffPreserved": {"complete": true, "level": "MUST NOT", "evidence": "untouched"}
    }
  },
  "workLog": [
    {"action": "#3625: remove two merge drivers", "result": "Replaced 119 lines", "files": [".gitattributes"], "timestamp": "2026-07-28T09:00:00Z"},
    {"step": 2, "action": "Flush stdout", "outcome": "Reason printed first", "timestamp": "2026-07-28T10:30:00+02:00"},
    {"step": "Verify", "evidence": "pytest green", "timestamp": "2026-07-27T23:00:00Z"}
  ],
  "outcomes": {
    "deliverables": [{"type": "code", "path": "scripts/x.py", "description": "Gate ordering fix"}],
    "decisions": [{"decision": "Remove the drivers", "rationale": "They never ran", "impact": "Simpler merges"}]
  },
  "endingCommit": "dd0719237bdbd323f62f39bbc6",
  "nextSteps": ["Watch CI", {"action": "Close #3625"}]
}`

// jsonLegacy has no schemaVersion, capitalised checklist keys, entry/time
// work log entries and top-level decisions with alternatives.
const jsonLegacy = `{
  "protocolCompliance": {
    "sessionStart": {
      "handoffRead": {"level": "MUST", "Evidence": "", "Complete": true},
      "memoryRetrieval": {"required": true, "completed": false, "evidence": "skipped"}
    },
    "memoryFirst": {"status": "complete", "evidence": "Read 5 memories"},
    "sessionEnd": {"sessionLogCompleted": true, "memoriesLoaded": ["a", "b"], "lint": "PASS"}
  },
  "session": {"branch": "` + "`feat/x`" + ` → main", "date": "2025-12-31", "number": 113,
    "startingCommit": "E289DFD", "objective": "Ship the thing", "status": "in_progress"},
  "workLog": [{"entry": "Started", "time": "T9"}, "plain string entry", {"time": "2025-12-31"}],
  "decisions": [
    {"decision": "Defer Critical Path 4 (Memory System) to v0.3.0", "rationale": "Not blocking",
     "alternatives": ["Complete it first", {"option": "Minimal fixes only"}]},
    "Use batch responses"
  ],
  "endingCommit": "",
  "nextSteps": []
}`

func TestParseJSON(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name, path, doc string
		check           func(t *testing.T, s Session)
	}{
		{"v1", "sessions/2026-07-28-session-3625-hygiene.json", jsonV1, func(t *testing.T, s Session) {
			eqHeader(t, s, Session{
				ID: "2026-07-28-session-3625-hygiene", SourcePath: "sessions/2026-07-28-session-3625-hygiene.json",
				// The earliest work-log time on session.date is 10:30+02:00.
				Format: "json-v1", Date: time.Date(2026, 7, 28, 8, 30, 0, 0, time.UTC),
				Ended:     time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC),
				Objective: "Close five independent hygiene issues (#3625, #3597)",
				Branch:    "fix/3625-hygiene", StartCommit: "9b7e10df5", EndCommit: "dd0719237bdbd323f62f39bbc6",
			})
			eq(t, "Checklist", s.Checklist, []ChecklistItem{
				{PhaseStart, "MUST", "Branch verified", true, "git status clean"},
				{PhaseStart, "SHOULD", "Serena activated", false, "Not called"},
				{PhaseEnd, "MUST NOT", "Handoff preserved", true, "untouched"},
			})
			eq(t, "Updates", s.Updates, []string{
				"#3625: remove two merge drivers — Replaced 119 lines",
				"Flush stdout — Reason printed first",
				"Verify — pytest green",
			})
			eq(t, "Outcomes", s.Outcomes, []string{"Deliverables: Gate ordering fix — scripts/x.py"})
			eq(t, "Decisions", s.Decisions, []Decision{{Title: "Remove the drivers", Choice: "Remove the drivers",
				Rationale: "They never ran; Impact: Simpler merges"}})
			eq(t, "NextSteps", s.NextSteps, []string{"Watch CI", "Close #3625"})
			eq(t, "Issues", s.Issues, []string{"PR #3700", "#3625", "#3597"})
		}},
		{"legacy", "2025-12-31-session-113-phase2-traceability.json", jsonLegacy, func(t *testing.T, s Session) {
			eqHeader(t, s, Session{
				ID: "2025-12-31-session-113-phase2-traceability", SourcePath: "2025-12-31-session-113-phase2-traceability.json",
				Format: FormatJSONLegacy, Date: day(2025, 12, 31), Objective: "Ship the thing",
				Status: "in_progress", Branch: "feat/x", StartCommit: "e289dfd",
			})
			eq(t, "Checklist", s.Checklist, []ChecklistItem{
				{PhaseStart, "MUST", "Handoff read", true, ""},
				{PhaseStart, "MUST", "Memory retrieval", false, "skipped"},
				{"Protocol compliance", "", "Memory first", true, "Read 5 memories"},
				{PhaseEnd, "", "Session log completed", true, ""},
				{PhaseEnd, "", "Memories loaded", true, "a; b"},
				{PhaseEnd, "", "Lint", true, "PASS"},
			})
			eq(t, "Updates", s.Updates, []string{"Started", "plain string entry"})
			eq(t, "Decisions", s.Decisions, []Decision{
				{Title: "Defer Critical Path 4", Choice: "Defer Critical Path 4 (Memory System) to v0.3.0",
					Rationale: "Not blocking", Alternatives: []string{"Complete it first", "Option: Minimal fixes only"}},
				{Title: "Use batch responses", Choice: "Use batch responses"},
			})
			if s.NextSteps != nil || s.Outcomes != nil || s.Issues != nil {
				t.Errorf("want no next steps, outcomes, issues; got %q %q %q", s.NextSteps, s.Outcomes, s.Issues)
			}
		}},
		{"migrated placeholder", "2025-12-20-session-49-semantic-slug-analysis.json",
			`{"session":{"branch":"","objective":"[Migrated from markdown]","date":"2025-12-20","number":49,"startingCommit":""},"protocolCompliance":{"sessionStart":{},"sessionEnd":{}},"workLog":[],"endingCommit":"","nextSteps":[]}`,
			func(t *testing.T, s Session) {
				if s.Objective != "Semantic slug analysis" || s.Format != FormatJSONLegacy || !s.Date.Equal(day(2025, 12, 20)) {
					t.Errorf("Objective, Format, Date = %q, %q, %v", s.Objective, s.Format, s.Date)
				}
			}},
		{"flat snake_case", "2026-01-09-session-389.json",
			`{"session_number":389,"date":"2026-01-09","branch":"cursor/pr-fixer","objective":"Address review comments on PR #827",
			  "protocol_compliance":{"session_start":{"serena_initialized":true},"session_end":{"changes_committed":false}},
			  "work_summary":{"pr_number":827,"all_checks_passing":true},
			  "actions_taken":[{"action":"Update PR title","from":"a","to":"b","status":"complete"}]}`,
			func(t *testing.T, s Session) {
				eqHeader(t, s, Session{ID: "2026-01-09-session-389", SourcePath: "2026-01-09-session-389.json",
					Format: FormatJSONFlat, Date: day(2026, 1, 9), Objective: "Address review comments on PR #827",
					Branch: "cursor/pr-fixer"})
				eq(t, "Checklist", s.Checklist, []ChecklistItem{
					{PhaseStart, "", "Serena initialized", true, ""},
					{PhaseEnd, "", "Changes committed", false, ""},
				})
				eq(t, "Updates", s.Updates, []string{"Update PR title — complete"})
				eq(t, "Outcomes", s.Outcomes, []string{"Pr number: 827", "All checks passing: true"})
				eq(t, "Issues", s.Issues, []string{"PR #827"})
			}},
		{"flat camelCase", "session-pr-4971-autofix.json",
			`{"sessionNumber":"pr-4971-autofix","objective":"Address PR #4971 review comments","startTime":"2026-08-14T07:54:00Z",
			  "endingCommit":"e9cdb3ff09b14ec427fa0fe6d20ef2a3c94b36a6",
			  "protocolCompliance":{"sessionStart":{"notOnMain":{"level":"MUST","Evidence":"fix/x","Complete":true}}}}`,
			func(t *testing.T, s Session) {
				eqHeader(t, s, Session{ID: "session-pr-4971-autofix", SourcePath: "session-pr-4971-autofix.json",
					Format: FormatJSONFlat, Date: time.Date(2026, 8, 14, 7, 54, 0, 0, time.UTC),
					Objective: "Address PR #4971 review comments", EndCommit: "e9cdb3ff09b14ec427fa0fe6d20ef2a3c94b36a6"})
				eq(t, "Issues", s.Issues, []string{"PR #4971"})
			}},
		{"schema 2.0 and grouped decisions", "2026-08-15-session-4964.json",
			`{"schemaVersion":"2.0","session":{"number":4964,"date":"2026-08-15","branch":"fix/4964","startingCommit":"05c0cf4e5b","objective":"Fix discovery",
			  "start_time":"2026-08-15T08:00:00Z","end_time":"2026-08-15T09:30:00Z"},
			  "decisions":{"process":[{"chosen":"Option B","issue":"Retry policy","options":["A","B"],"rationale":"Cheaper"}],"technical":["Use Go"]},
			  "status":"COMPLETE"}`,
			func(t *testing.T, s Session) {
				if s.Format != "json-v2" || s.Status != "COMPLETE" ||
					!s.Date.Equal(time.Date(2026, 8, 15, 8, 0, 0, 0, time.UTC)) || !s.Ended.Equal(time.Date(2026, 8, 15, 9, 30, 0, 0, time.UTC)) {
					t.Errorf("Format, Status, Date, Ended = %q, %q, %v, %v", s.Format, s.Status, s.Date, s.Ended)
				}
				eq(t, "Decisions", s.Decisions, []Decision{
					{Title: "Retry policy", Choice: "Option B", Rationale: "Cheaper", Alternatives: []string{"A", "B"}},
					{Title: "Use Go", Choice: "Use Go"},
				})
			}},
		{"schema 0.2 and 1.0.0", "x.json", `{"schemaVersion":"0.2","session":{"objective":"o","date":"2026-08-15"}}`,
			func(t *testing.T, s Session) {
				if s.Format != "json-v0" {
					t.Errorf("Format = %q", s.Format)
				}
			}},
		{"byte order mark", "2026-01-01-session-1.json", "\xef\xbb\xbf" + `{"schemaVersion":"1.0.0","session":{"objective":"o","date":"2026-01-01"}}`,
			func(t *testing.T, s Session) {
				if s.Format != "json-v1" || s.Objective != "o" {
					t.Errorf("Format, Objective = %q, %q", s.Format, s.Objective)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseJSON(tt.path, []byte(tt.doc))
			if err != nil {
				t.Fatalf("ParseJSON: %v", err)
			}
			tt.check(t, s)
		})
	}
}

func TestParseJSONErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		line      int
		is        error
		reason    string
	}{
		{"syntax error line 3", "{\n  \"session\": {},\n  \"workLog\": [,]\n}", 3, nil, "invalid JSON at line 3: invalid character ','"},
		{"truncated", "{\n  \"session\": {\n", 2, nil, "invalid JSON at line 2: unexpected end of JSON input"},
		{"array", `[1, 2]`, 0, ErrNotSessionLog, "top-level JSON value is an array"},
		{"no session", `{"name": "workflow-context", "steps": []}`, 0, ErrNotSessionLog, `no "session" object`},
		{"empty", "\n\n", 0, ErrEmpty, "empty file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseJSON("sessions/bad.json", []byte(tt.doc))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *ParseError", err)
			}
			if pe.Line != tt.line || pe.Path != "sessions/bad.json" || !strings.HasPrefix(err.Error(), "sessions/bad.json: ") {
				t.Errorf("err = %q, Line = %d; want line %d and the path", err, pe.Line, tt.line)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.is)
			}
			if tt.line > 0 {
				var se *json.SyntaxError
				if !errors.As(err, &se) {
					t.Errorf("err = %v, want a *json.SyntaxError inside", err)
				}
			}
			if !strings.Contains(pe.reason(), tt.reason) {
				t.Errorf("reason = %q, want it to contain %q", pe.reason(), tt.reason)
			}
		})
	}
}
