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

// TestLargeInputs guards against quadratic behaviour (before the fixes,
// some of these documents took 5-30 s): each document, made of n repeated
// parts, parses in less than 10 times the time of the same document of n/4
// parts (linear is 4 times, quadratic 16). The two are parsed in turn, five
// times each, and the best of each compared, so that a loaded machine (a
// CI runner, other builds) slows both alike: under CI's load, three tries
// and a bound of 8 once measured 10.6 times for a linear parser.
func TestLargeInputs(t *testing.T) {
	docs := map[string]func(n int) string{
		"nested headings": func(n int) string { return strings.Repeat("# a\n## b\n### c\n#### d\n##### e\n###### Phase 1\n", n/5) },
		"checkbox items":  func(n int) string { return strings.Repeat("- [x] item **Status**: done\n  - child\n", n) },
		"checklist table": func(n int) string {
			return "| Req | Step | Status |\n|---|---|---|\n" + strings.Repeat("| MUST | x | [x] |\n", n)
		},
		"status suffixes":   func(n int) string { return "# " + strings.Repeat("(complete) ", n/2) },
		"references":        func(n int) string { return strings.Repeat("PR #12 #13 ", 5*n) },
		"item continuation": func(n int) string { return "## Work Log\n\n- item\n" + strings.Repeat("continued line\n", 10*n) },
		"decision rationale": func(n int) string {
			return "## Decisions\n\nSelected A because:\n\n" + strings.Repeat("- reason\n", 5*n)
		},
		"unbalanced backtick": func(n int) string { return strings.Repeat("`", 5*n) },
	}
	const n = 10000
	parse := func(name, doc string) time.Duration {
		start := time.Now()
		if _, err := ParseMarkdown("2026-01-01-session-1.md", []byte(doc)); err != nil && !errors.Is(err, ErrNotSessionLog) {
			t.Fatalf("%s: %v", name, err)
		}
		return time.Since(start)
	}
	for name, doc := range docs {
		smallDoc, largeDoc := doc(n/4), doc(n)
		small, large := time.Duration(1<<63-1), time.Duration(1<<63-1)
		for range 5 {
			small = min(small, parse(name, smallDoc))
			large = min(large, parse(name, largeDoc))
		}
		t.Logf("%s: %v / %v", name, large, small)
		if large > 10*small+20*time.Millisecond {
			t.Errorf("%s: %d parts parse in %v, %d in %v: more than linear", name, n, large, n/4, small)
		}
	}
}
