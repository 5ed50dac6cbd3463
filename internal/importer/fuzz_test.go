package importer

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// checkInvariants checks what every parsed session guarantees.
func checkInvariants(t *testing.T, s Session) {
	t.Helper()
	if s.ID == "" || s.Objective == "" {
		t.Errorf("empty ID %q or objective %q", s.ID, s.Objective)
	}
	for _, list := range [][]string{s.Updates, s.Outcomes, s.NextSteps, {s.Objective}} {
		for _, e := range list {
			if len(e) > MaxLineLen || strings.ContainsAny(e, "\n\r") || !utf8.ValidString(e) {
				t.Errorf("bad line %q", e)
			}
		}
	}
}

func FuzzParseMarkdown(f *testing.F) {
	for _, doc := range []string{mdTemplated, mdBoldHeader, mdHandoff, mdCheckboxes, "", "# x\n|a|\n|-|\n"} {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		s, err := ParseMarkdown("2026-01-01-session-1-fuzz.md", []byte(doc))
		if err == nil {
			checkInvariants(t, s)
		}
	})
}

func FuzzParseJSON(f *testing.F) {
	for _, doc := range []string{jsonV1, jsonLegacy, "{}", "[", `{"session":{"objective":1}}`} {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		s, err := ParseJSON("2026-01-01-session-1-fuzz.json", []byte(doc))
		if err == nil {
			checkInvariants(t, s)
		}
	})
}

// TestLargeInputs guards against quadratic behaviour: each document parses
// in well under the limit (before the fixes, some took 5-30 s).
func TestLargeInputs(t *testing.T) {
	docs := map[string]string{
		"nested headings":     strings.Repeat("# a\n## b\n### c\n#### d\n##### e\n###### Phase 1\n", 2000),
		"checkbox items":      strings.Repeat("- [x] item **Status**: done\n  - child\n", 10000),
		"checklist table":     "| Req | Step | Status |\n|---|---|---|\n" + strings.Repeat("| MUST | x | [x] |\n", 10000),
		"status suffixes":     "# " + strings.Repeat("(complete) ", 5000),
		"references":          strings.Repeat("PR #12 #13 ", 50000),
		"item continuation":   "## Work Log\n\n- item\n" + strings.Repeat("continued line\n", 100000),
		"decision rationale":  "## Decisions\n\nSelected A because:\n\n" + strings.Repeat("- reason\n", 50000),
		"unbalanced backtick": strings.Repeat("`", 50000),
	}
	for name, doc := range docs {
		start := time.Now()
		if _, err := ParseMarkdown("2026-01-01-session-1.md", []byte(doc)); err != nil && !errors.Is(err, ErrNotSessionLog) {
			t.Errorf("%s: %v", name, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: parsing took %v", name, d)
		}
	}
}
