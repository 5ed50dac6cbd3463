package importer

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSessionID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2025-12-20-session-48-semantic-slug-orchestration.md", "2025-12-20-session-48-semantic-slug-orchestration"},
		{"sessions/2026-01-19-session-17-v0.2.0-release-readiness.json", "2026-01-19-session-17-v0-2-0-release-readiness"},
		{`sessions\handoffs\2026-08-12-4905-handoff.md`, "2026-08-12-4905-handoff"},
		{"séance notes (1).md", "s-ance-notes--1-"},
		{"under_score.json", "under_score"},
	}
	for _, tt := range tests {
		if got := sessionID(tt.in); got != tt.want {
			t.Errorf("sessionID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	got := truncate(long, MaxLineLen)
	if len(got) > MaxLineLen || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("truncate: len %d, suffix %q, valid %v", len(got), got[len(got)-3:], utf8.ValidString(got))
	}
	if got := truncate("short", 10); got != "short" {
		t.Errorf("truncate(short) = %q", got)
	}
}

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"**Bold** and `code`", "Bold and code"},
		{"Initialize Serena: `mcp__serena__activate_project`", "Initialize Serena: mcp__serena__activate_project"},
		{"see [the PR](https://example.com/pull/1) <https://x.y/z>", "see the PR https://x.y/z"},
		{"  many\t spaces\n here ", "many spaces here"},
		{"__underlined__ word", "underlined word"},
		{"`**kept**`", "**kept**"},
	}
	for _, tt := range tests {
		if got := clean(tt.in); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2025-12-22", time.Date(2025, 12, 22, 0, 0, 0, 0, time.UTC), true},
		{"2026-01-16T04:50:00Z", time.Date(2026, 1, 16, 4, 50, 0, 0, time.UTC), true},
		{"2025-12-22 14:30:05 -0800", time.Date(2025, 12, 22, 22, 30, 5, 0, time.UTC), true},
		{"2025-12-22 (Sunday)", time.Date(2025, 12, 22, 0, 0, 0, 0, time.UTC), true},
		{"yesterday", time.Time{}, false},
		{"2025-13-45", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := parseTime(tt.in)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCommitAndBranch(t *testing.T) {
	if got := commitSHA("`ab807ce` (merge base)"); got != "ab807ce" {
		t.Errorf("commitSHA = %q", got)
	}
	if got := commitSHA("pending"); got != "" {
		t.Errorf("commitSHA(pending) = %q", got)
	}
	if got := commitSHA("feedface-not-a-sha-because-word"); got != "feedface" {
		t.Errorf("commitSHA(feedface-…) = %q", got)
	}
	for in, want := range map[string]string{
		"`feat/phase-2-traceability`":            "feat/phase-2-traceability",
		"chore/session-38-infrastructure → main": "chore/session-38-infrastructure",
		"fix/synth-context -> main":              "fix/synth-context",
		"fix/211-security (PR #212)":             "fix/211-security",
		"feat/skill-leverage at commit 8272744":  "feat/skill-leverage",
		"N/A":                                    "",
		"**feat/x**":                             "feat/x",
	} {
		if got := cleanBranch(in); got != want {
			t.Errorf("cleanBranch(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHumanizeAndSlug(t *testing.T) {
	for in, want := range map[string]string{
		"usageMandatoryRead":  "Usage mandatory read",
		"session_log_created": "Session log created",
		"HANDOFFRead":         "Handoff read",
		"qaValidation":        "Qa validation",
	} {
		if got := humanize(in); got != want {
			t.Errorf("humanize(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"2025-12-20-session-48-semantic-slug-orchestration": "Semantic slug orchestration",
		"2026-01-08-session-809":                            "",
		"2026-08-12-4905-handoff":                           "4905 handoff",
		"session-pr-4971-autofix":                           "Pr 4971 autofix",
	} {
		if got := slugObjective(in); got != want {
			t.Errorf("slugObjective(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRefsScan(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Fixes #2222 via PR #2285", []string{"#2222", "PR #2285"}},
		{"see https://github.com/o/r/pull/4927 and https://github.com/o/r/issues/12", []string{"PR #4927", "#12"}},
		{"Issue #804, then PR 4927 opened; #804 again", []string{"#804", "PR #4927"}},
		{"#835 first, later PR #835", []string{"PR #835"}},
		{"Comment #12, Step #3, Session #55, Thread #10", nil},
		{"PR1 wedge and PR2 follow-up; tasks in PR-194/comments.md", []string{"PR #194"}},
		{"color #7 and x#123", nil},
	}
	for _, tt := range tests {
		var r refs
		r.scan(tt.text)
		if got := r.list(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("scan(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestIsPlaceholder(t *testing.T) {
	for _, s := range []string{"None", "N/A", "*To be documented during session*", "TBD", "(To be filled after agent feedback synthesis)", "[Migrated from markdown]", "-"} {
		if !isPlaceholder(s) {
			t.Errorf("isPlaceholder(%q) = false", s)
		}
	}
	for _, s := range []string{"None of the tests failed", "Use Go"} {
		if isPlaceholder(s) {
			t.Errorf("isPlaceholder(%q) = true", s)
		}
	}
}
