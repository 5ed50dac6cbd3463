package importer

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// mdTemplated is the most common Markdown shape: a "Session Info" list,
// protocol tables with Req/Step/Status/Evidence columns, a work log with
// sub-sections, numbered decisions and next steps.
const mdTemplated = "# Session 58 - 2025-12-22\n" +
	"\n" +
	"## Session Info\n" +
	"\n" +
	"- **Date**: 2025-12-22\n" +
	"- **Branch**: fix/session-41-cleanup\n" +
	"- **Starting Commit**: ab807ce\n" +
	"- **Objective**: PR #206 comment response workflow via pr-comment-responder skill\n" +
	"\n" +
	"## Protocol Compliance\n" +
	"\n" +
	"### Session Start (COMPLETE ALL before work)\n" +
	"\n" +
	"| Req | Step | Status | Evidence |\n" +
	"|-----|------|--------|----------|\n" +
	"| MUST | Initialize Serena: `mcp__serena__activate_project` | [x] | Tool output in transcript |\n" +
	"| MUST | Read PROJECT-CONSTRAINTS.md | [ ] | Skipped - pr-comment-responder workflow |\n" +
	"| SHOULD | Verify git status | [x] | Clean |\n" +
	"\n" +
	"### Git State\n" +
	"\n" +
	"- **Status**: clean\n" +
	"- **Branch**: fix/session-41-cleanup\n" +
	"\n" +
	"## Work Log\n" +
	"\n" +
	"### PR Comment Response Assessment\n" +
	"\n" +
	"**Status**: Complete\n" +
	"\n" +
	"1. **Review Comments**: 0 - No code line comments\n" +
	"2. **Issue Comments**: 4 - All informational\n" +
	"   - nested detail\n" +
	"\n" +
	"```text\n" +
	"## Not a heading\n" +
	"Fixes #999\n" +
	"```\n" +
	"\n" +
	"## Decisions\n" +
	"\n" +
	"### Decision 1: Fail-Closed vs Fail-Open\n" +
	"**Context**: The guard failed open.\n" +
	"\n" +
	"**Options:**\n" +
	"1. Keep fail-open\n" +
	"2. Change to fail-closed\n" +
	"\n" +
	"**Decision**: Fail-closed (Option 2)\n" +
	"\n" +
	"**Rationale**: Branch protection is a security control.\n" +
	"\n" +
	"## Session End (COMPLETE ALL before closing)\n" +
	"\n" +
	"| Req | Step | Status | Evidence |\n" +
	"|-----|------|--------|----------|\n" +
	"| MUST | Commit all changes | [x] | Commits 1449d6d, 5f5f7b6 |\n" +
	"| MUST NOT | Update `.agents/HANDOFF.md` directly | [x] | HANDOFF.md unchanged |\n" +
	"| SHOULD | Invoke retrospective | [ ] | N/A |\n" +
	"\n" +
	"## Next Steps\n" +
	"\n" +
	"- Resolve merge conflicts in PR #206\n" +
	"- [ ] Re-run CI\n"

// mdBoldHeader is the PR-review shape: bold metadata lines under the title,
// a Phase/Tool/Status/Evidence table, an objective section and bold-led
// decisions.
const mdBoldHeader = `# Session Log: PR #194 Review Response

**Date**: 2025-12-21
**Session**: 56
**PR**: #194 - docs: add cost governance
**Branch**: chore/session-38-infrastructure → main

## Protocol Compliance

| Phase | Tool/File | Status | Evidence |
|-------|-----------|--------|----------|
| **Phase 1: Serena Init** | mcp__serena__activate_project | ✅ PASS | Tool output in session transcript |
| | mcp__serena__initial_instructions | ❌ FAIL | Not called |

## Session Objective

Execute pr-comment-responder workflow for PR #194,
addressing all reviewer comments.

## Decisions Made

1. **actionlint recommended for pre-commit** - Zero runtime cost
   - Alternatives considered: yamllint alone
2. Target: 50 PRs

## Outcome

**Status**: [COMPLETE] All comments addressed
`

// mdHandoff is a per-issue handoff.
const mdHandoff = `# Session Handoff - 2026-08-12

## Status

- **Issue**: #4905 - Evidence-gated Aspire skill review
- **Branch**: feat/4905-aspire-skill-review
- **Task**: Pin and inventory the Aspire skill catalog, then ship a PR.
- **Phase**: complete (PR 4927 opened: https://github.com/rjmurillo/ai-agents/pull/4927)

## Files Modified

- ` + "`.claude/skills/SkillForge/SKILL.md`" + ` - added Phase 0 guardrail.

## Decisions Made

- **One augmentation to SkillForge, not a new framework**: REQ-020 names SkillForge as the owner.
  - Alternatives considered: augment a QA skill (rejected).
  - Reference: ` + "`.agents/analysis/matrix.md`" + `.

## Next Steps

1. Monitor the PR checks.

## Verification on Resume

- [ ] ` + "`git status`" + ` matches "Files Modified"
- [x] PR checks are green
`

// mdCheckboxes uses "- [x]" lists for the protocol and the work, hard line
// breaks in the header and a labelled design decision.
const mdCheckboxes = "# Session 01: Issue #2222 - CI Gap in agent-drift-detection\n" +
	"\n" +
	"**Date**: 2026-06-02  \n" +
	"**Issue**: #2222  \n" +
	"**Branch**: `fix/2222-drift-detection-build-all`  \n" +
	"**Status**: Complete\n" +
	"\n" +
	"## Objective\n" +
	"\n" +
	"Close the CI gap where generated artifact drift could pass.\n" +
	"The final PR keeps the gate fail-closed.\n" +
	"\n" +
	"## Session Protocol Compliance\n" +
	"\n" +
	"- [x] Read HANDOFF.md.\n" +
	"- [ ] MUST: Run the retrospective\n" +
	"\n" +
	"## Design Decision\n" +
	"\n" +
	"**Final design after merging main**: Reuse the existing manifest parity checker.\n" +
	"\n" +
	"**Rationale**:\n" +
	"\n" +
	"- `build_all.py --check` is the canonical gate.\n" +
	"- Keeping the old validator would duplicate the rule.\n" +
	"\n" +
	"## Work Completed\n" +
	"\n" +
	"### Phase 1: Build-all staleness gate\n" +
	"\n" +
	"- [x] Updated `build/scripts/build_all.py`.\n" +
	"- [ ] Preserved fail-closed behavior.\n" +
	"\n" +
	"<!-- a comment with ## Heading inside -->\n" +
	"## Delivery Summary\n" +
	"\n" +
	"- **PR**: #2285 - <https://github.com/rjmurillo/ai-agents/pull/2285>\n"

func TestParseMarkdown(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		name, path, doc string
		check           func(t *testing.T, s Session)
	}{
		{"templated", "sessions/2025-12-22-session-58-pr-206.md", mdTemplated, func(t *testing.T, s Session) {
			want := Session{
				ID: "2025-12-22-session-58-pr-206", SourcePath: "sessions/2025-12-22-session-58-pr-206.md",
				Format: FormatMarkdown, Date: day(2025, 12, 22),
				Objective: "PR #206 comment response workflow via pr-comment-responder skill",
				Branch:    "fix/session-41-cleanup", StartCommit: "ab807ce",
			}
			eqHeader(t, s, want)
			eq(t, "Checklist", s.Checklist, []ChecklistItem{
				{PhaseStart, "MUST", "Initialize Serena: mcp__serena__activate_project", true, "Tool output in transcript"},
				{PhaseStart, "MUST", "Read PROJECT-CONSTRAINTS.md", false, "Skipped - pr-comment-responder workflow"},
				{PhaseStart, "SHOULD", "Verify git status", true, "Clean"},
				{PhaseEnd, "MUST", "Commit all changes", true, "Commits 1449d6d, 5f5f7b6"},
				{PhaseEnd, "MUST NOT", "Update .agents/HANDOFF.md directly", true, "HANDOFF.md unchanged"},
				{PhaseEnd, "SHOULD", "Invoke retrospective", false, "N/A"},
			})
			eq(t, "Decisions", s.Decisions, []Decision{{
				Title: "Fail-Closed vs Fail-Open", Choice: "Fail-closed (Option 2)",
				Rationale:    "Branch protection is a security control. Context: The guard failed open.",
				Alternatives: []string{"Keep fail-open", "Change to fail-closed"},
			}})
			eq(t, "Updates", s.Updates, []string{
				"PR Comment Response Assessment: Status: Complete",
				"Review Comments: 0 - No code line comments",
				"Issue Comments: 4 - All informational; nested detail",
			})
			eq(t, "NextSteps", s.NextSteps, []string{"Resolve merge conflicts in PR #206", "Re-run CI"})
			eq(t, "Issues", s.Issues, []string{"PR #206"})
		}},
		{"bold header", "2025-12-21-session-56-pr-194-review.md", mdBoldHeader, func(t *testing.T, s Session) {
			eqHeader(t, s, Session{
				ID: "2025-12-21-session-56-pr-194-review", SourcePath: "2025-12-21-session-56-pr-194-review.md",
				Format: FormatMarkdown, Date: day(2025, 12, 21),
				Objective: "Execute pr-comment-responder workflow for PR #194, addressing all reviewer comments.",
				Status:    "[COMPLETE] All comments addressed",
				Branch:    "chore/session-38-infrastructure",
			})
			eq(t, "Checklist", s.Checklist, []ChecklistItem{
				{"Protocol Compliance", "", "mcp__serena__activate_project", true, "Tool output in session transcript"},
				{"Protocol Compliance", "", "mcp__serena__initial_instructions", false, "Not called"},
			})
			eq(t, "Decisions", s.Decisions, []Decision{
				{Title: "actionlint recommended for pre-commit", Choice: "actionlint recommended for pre-commit",
					Rationale: "Zero runtime cost", Alternatives: []string{"yamllint alone"}},
				{Title: "Target", Choice: "50 PRs"},
			})
			eq(t, "Outcomes", s.Outcomes, []string{"Status: [COMPLETE] All comments addressed"})
			eq(t, "Issues", s.Issues, []string{"PR #194"})
		}},
		{"handoff", "sessions/handoffs/2026-08-12-4905-handoff.md", mdHandoff, func(t *testing.T, s Session) {
			eqHeader(t, s, Session{
				ID: "2026-08-12-4905-handoff", SourcePath: "sessions/handoffs/2026-08-12-4905-handoff.md",
				Format: FormatMarkdownHandoff, Date: day(2026, 8, 12),
				Objective: "Pin and inventory the Aspire skill catalog, then ship a PR.",
				Status:    "complete (PR 4927 opened: https://github.com/rjmurillo/ai-agents/pull/4927)",
				Branch:    "feat/4905-aspire-skill-review",
			})
			eq(t, "Decisions", s.Decisions, []Decision{{
				Title: "One augmentation to SkillForge, not a new framework", Choice: "One augmentation to SkillForge, not a new framework",
				Rationale:    "REQ-020 names SkillForge as the owner. Reference: .agents/analysis/matrix.md.",
				Alternatives: []string{"augment a QA skill (rejected)."},
			}})
			eq(t, "Updates", s.Updates, []string{".claude/skills/SkillForge/SKILL.md - added Phase 0 guardrail."})
			eq(t, "NextSteps", s.NextSteps, []string{"Monitor the PR checks."})
			eq(t, "Checklist", s.Checklist, []ChecklistItem{
				{"Verification on Resume", "", `git status matches "Files Modified"`, false, ""},
				{"Verification on Resume", "", "PR checks are green", true, ""},
			})
			eq(t, "Issues", s.Issues, []string{"#4905", "PR #4927"})
		}},
		{"checkboxes", "2026-06-02-session-01-issue-2222-ci-gap.md", mdCheckboxes, func(t *testing.T, s Session) {
			eqHeader(t, s, Session{
				ID: "2026-06-02-session-01-issue-2222-ci-gap", SourcePath: "2026-06-02-session-01-issue-2222-ci-gap.md",
				Format: FormatMarkdown, Date: day(2026, 6, 2),
				Objective: "Close the CI gap where generated artifact drift could pass. The final PR keeps the gate fail-closed.",
				Status:    "Complete", Branch: "fix/2222-drift-detection-build-all",
			})
			eq(t, "Checklist", s.Checklist, []ChecklistItem{
				{"Session Protocol Compliance", "", "Read HANDOFF.md.", true, ""},
				{"Session Protocol Compliance", "MUST", "MUST: Run the retrospective", false, ""},
			})
			eq(t, "Decisions", s.Decisions, []Decision{{
				Title:     "Reuse the existing manifest parity checker",
				Choice:    "Reuse the existing manifest parity checker.",
				Rationale: "build_all.py --check is the canonical gate. Keeping the old validator would duplicate the rule.",
			}})
			eq(t, "Updates", s.Updates, []string{
				"Phase 1: Build-all staleness gate: Updated build/scripts/build_all.py.",
				"[ ] Preserved fail-closed behavior.",
			})
			eq(t, "Outcomes", s.Outcomes, []string{"PR: #2285 - https://github.com/rjmurillo/ai-agents/pull/2285"})
			eq(t, "Issues", s.Issues, []string{"#2222", "PR #2285"})
		}},
		{"title fallback", "2026-01-09-session-317-fix-hook-critical-issues.md",
			"# Session 317: Fix Critical Issues in Claude Code Hooks\n\n**Date**: 2026-01-09 10:15:00 -0800\n**Ended**: 2026-01-09 12:00:00 -0800\n",
			func(t *testing.T, s Session) {
				if s.Objective != "Fix Critical Issues in Claude Code Hooks" {
					t.Errorf("Objective = %q", s.Objective)
				}
				if want := time.Date(2026, 1, 9, 18, 15, 0, 0, time.UTC); !s.Date.Equal(want) {
					t.Errorf("Date = %v, want %v", s.Date, want)
				}
				if want := time.Date(2026, 1, 9, 20, 0, 0, 0, time.UTC); !s.Ended.Equal(want) {
					t.Errorf("Ended = %v, want %v", s.Ended, want)
				}
			}},
		{"file-name fallback", "2026-01-03-session-372-memory-cleanup.md",
			"# Session 372 - 2026-01-03\n\nSome notes.\n",
			func(t *testing.T, s Session) {
				if s.Objective != "Memory cleanup" || !s.Date.Equal(day(2026, 1, 3)) {
					t.Errorf("Objective, Date = %q, %v", s.Objective, s.Date)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseMarkdown(tt.path, []byte(tt.doc))
			if err != nil {
				t.Fatalf("ParseMarkdown: %v", err)
			}
			tt.check(t, s)
		})
	}
}

func TestParseMarkdownNotSession(t *testing.T) {
	tests := []struct {
		name, path, doc string
		want            error
		reason          string
	}{
		{"summary", "IMPLEMENTATION-SUMMARY-guardrails.md",
			"# Implementation Summary\n\n**Date**: 2025-12-22\n**Status**: ✅ Complete\n**Branch**: `copilot/x`\n",
			ErrNotSessionLog, "neither a YYYY-MM-DD prefix"},
		{"metrics", "STEP-0-METRICS.md", "# Step 0 Metrics\n2026-05-09T00:00:00Z | pass | none | none\n", ErrNotSessionLog, "neither"},
		{"readme", "handoffs/README.md", "# Per-Issue Session Handoffs\n\n## Scope\n\nText.\n", ErrNotSessionLog, "neither"},
		{"dated catalog", "2026-01-17-orphaned-artifacts-catalog.md",
			"# Orphaned Session Artifact Catalog\n\n## Resolution\n\n**Status**: Resolved\n\n### chore/x\n\n- file.md\n",
			ErrNotSessionLog, "no session content"},
		{"empty", "2026-01-01-session-1.md", " \n\t\n", ErrEmpty, "empty file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseMarkdown(tt.path, []byte(tt.doc))
			var pe *ParseError
			if !errors.Is(err, tt.want) || !errors.As(err, &pe) {
				t.Fatalf("err = %v, want %v as *ParseError", err, tt.want)
			}
			if pe.Path != tt.path || !strings.Contains(err.Error(), tt.path) || !strings.Contains(pe.reason(), tt.reason) {
				t.Errorf("err = %q (path %q), want path %q and reason containing %q", err, pe.Path, tt.path, tt.reason)
			}
		})
	}
}

func TestChecklistTables(t *testing.T) {
	tests := []struct {
		name string
		rows [][]string
		want []ChecklistItem
		ok   bool
	}{
		{"requirement status", [][]string{{"Requirement", "Status", "Evidence"}, {"Serena initialized", "✅ COMPLETE", "done"}, {"Lint", "SKIPPED", ""}},
			[]ChecklistItem{{"p", "", "Serena initialized", true, "done"}, {"p", "", "Lint", false, ""}}, true},
		{"must requirement header", [][]string{{"MUST Requirement", "Status"}, {"Read HANDOFF", "PASS"}},
			[]ChecklistItem{{"p", "MUST", "Read HANDOFF", true, ""}}, true},
		{"criterion pass?", [][]string{{"Criterion", "Pass?", "Evidence"}, {"Tests green", "Yes", "CI run 12"}, {"Docs", "No", ""}},
			[]ChecklistItem{{"p", "", "Tests green", true, "CI run 12"}, {"p", "", "Docs", false, ""}}, true},
		{"checkbox without status column", [][]string{{"Req", "Step", "Evidence"}, {"SHOULD", "[x] Verify git status", "clean"}},
			[]ChecklistItem{{"p", "SHOULD", "Verify git status", true, "clean"}}, true},
		{"not a checklist", [][]string{{"PR", "Title", "Status"}, {"#1", "x", "open"}}, nil, false},
		{"metrics", [][]string{{"Metric", "Value"}, {"Tests", "31"}}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := checklistFromTable(tt.rows, "p")
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			eq(t, "items", got, tt.want)
		})
	}
}

func TestDoneFromStatus(t *testing.T) {
	for s, want := range map[string]bool{
		"[x]": true, "[X]": true, "✅": true, "✅ PASS": true, "COMPLETE": true, "[COMPLETE]": true, "Done": true, "yes": true,
		"[ ]": false, "❌": false, "FAIL": false, "N/A": false, "Skipped": false, "Not complete": false, "": false,
		"pending": false, "⚠️ PARTIAL": false, "In progress": false,
	} {
		if got := doneFromStatus(s); got != want {
			t.Errorf("doneFromStatus(%q) = %v, want %v", s, got, want)
		}
	}
}

// eqHeader compares the scalar fields of two sessions.
func eqHeader(t *testing.T, got, want Session) {
	t.Helper()
	g := Session{ID: got.ID, SourcePath: got.SourcePath, Format: got.Format, Date: want.Date, Ended: want.Ended,
		Objective: got.Objective, Status: got.Status, Branch: got.Branch, StartCommit: got.StartCommit, EndCommit: got.EndCommit}
	if !reflect.DeepEqual(g, want) || !got.Date.Equal(want.Date) || !got.Ended.Equal(want.Ended) {
		g.Date, g.Ended = got.Date, got.Ended
		t.Errorf("header:\n got  %+v\n want %+v", g, want)
	}
}

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %#v\n want %#v", what, got, want)
	}
}
