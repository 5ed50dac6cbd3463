package importer

import (
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/testcorpus"
)

// corpusAgents is the corpus tier's ai-agents/.agents folder (testcorpus),
// which must hold sessions/.
func corpusAgents(t *testing.T) string {
	t.Helper()
	agents := filepath.Join(testcorpus.Dir(t, "ai-agents"), ".agents")
	if st, err := os.Stat(filepath.Join(agents, "sessions")); err != nil || !st.IsDir() {
		t.Fatalf("the corpus has no ai-agents/.agents/sessions (%v)", err)
	}
	return agents
}

// countFiles counts the regular files under dir, skipping hidden folders as
// Scan does.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if !d.IsDir() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func pct(n, of int) float64 {
	if of == 0 {
		return 100
	}
	return 100 * float64(n) / float64(of)
}

var (
	reCheckboxRow   = regexp.MustCompile(`(?m)^\|.*\|\s*\[[xX ]\]\s*\|`)
	reDecisionsHead = regexp.MustCompile(`(?mi)^#{2,4}\s+((key|design|technical) )?decisions?( made)?\s*$`)
)

// hasDecisionContent reports whether a Markdown file has a Decisions
// heading followed by real content (not "TBD", "None", an empty section).
func hasDecisionContent(doc string) bool {
	for _, loc := range reDecisionsHead.FindAllStringIndex(doc, -1) {
		body := doc[loc[1]:]
		if i := regexp.MustCompile(`(?m)^#{1,4}\s`).FindStringIndex(body); i != nil && i[0] > 0 {
			body = body[:i[0]]
		}
		for _, ln := range strings.Split(body, "\n") {
			ln = strings.TrimSpace(strings.Trim(strings.TrimSpace(ln), "-"))
			if ln != "" && !isPlaceholder(clean(ln)) {
				return true
			}
		}
	}
	return false
}

// jsonHasDecisions reports whether a JSON log has a non-empty decision list.
func jsonHasDecisions(data []byte) bool {
	var v map[string]any
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	nonEmpty := func(x any) bool {
		switch x := x.(type) {
		case []any:
			return len(x) > 0
		case map[string]any:
			return len(x) > 0
		}
		return false
	}
	for _, k := range jsonDecisionKeys {
		if nonEmpty(v[k]) {
			return true
		}
	}
	if o, ok := v["outcomes"].(map[string]any); ok {
		return nonEmpty(o["decisions"]) || nonEmpty(o["decisionsMade"])
	}
	return false
}

func TestCorpusSessions(t *testing.T) {
	agents := corpusAgents(t)
	dir := filepath.Join(agents, "sessions")
	total := countFiles(t, dir)
	lastDone := 0
	sessions, skipped, err := Scan(agents, func(done, n int) {
		if n != total || done != lastDone+1 {
			t.Errorf("progress(%d, %d) after %d, want total %d", done, n, lastDone, total)
		}
		lastDone = done
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions)+len(skipped) != total {
		t.Fatalf("parsed %d + skipped %d != %d files", len(sessions), len(skipped), total)
	}

	// Skipped: only the known non-session files, each with a reason.
	wantSkipped := []string{
		"sessions/2026-01-17-orphaned-artifacts-catalog.md",
		"sessions/IMPLEMENTATION-SUMMARY-guardrails.md",
		"sessions/STEP-0-METRICS.md",
		"sessions/STEP-0.5-METRICS.md",
		"sessions/handoffs/README.md",
	}
	var gotSkipped []string
	for _, sk := range skipped {
		gotSkipped = append(gotSkipped, sk.Path)
		if !strings.HasPrefix(sk.Reason, "not a session log: ") {
			t.Errorf("skipped %s: reason %q", sk.Path, sk.Reason)
		}
		t.Logf("skipped %s: %s", sk.Path, sk.Reason)
	}
	if strings.Join(gotSkipped, "\n") != strings.Join(wantSkipped, "\n") {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(gotSkipped, "\n"), strings.Join(wantSkipped, "\n"))
	}

	checkCoverage(t, dir, "sessions/", sessions, 95)

	// Sorted by (Date, ID), unique IDs with only [A-Za-z0-9_-].
	reID := regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	seen := map[string]bool{}
	for i, s := range sessions {
		if !reID.MatchString(s.ID) || seen[s.ID] {
			t.Errorf("bad or duplicate ID %q", s.ID)
		}
		seen[s.ID] = true
		if i > 0 {
			p := sessions[i-1]
			if s.Date.Before(p.Date) || (s.Date.Equal(p.Date) && s.ID < p.ID) {
				t.Errorf("not sorted: %s (%v) after %s (%v)", s.ID, s.Date, p.ID, p.Date)
			}
		}
	}
}

// checkCoverage checks and reports field coverage of parsed sessions whose
// SourcePath is prefix + a path inside dir. minPct is the minimum share of
// sessions with an objective from the content and with a date.
func checkCoverage(t *testing.T, dir, prefix string, sessions []Session, minPct float64) {
	t.Helper()
	formats := map[string]int{}
	var objective, objectiveContent, objectiveTitle, date, dateContent int
	var clFiles, clParsed, decFiles, decParsed int
	var upd, out, next, issues, branch int
	for _, s := range sessions {
		formats[s.Format]++
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(s.SourcePath, prefix))))
		if err != nil {
			t.Fatal(err)
		}
		var src objSource
		if path.Ext(s.SourcePath) == ".md" {
			_, src, _ = parseMarkdown(s.SourcePath, data)
		} else {
			_, src, _ = parseJSON(s.SourcePath, data)
		}
		if s.Objective != "" && !strings.Contains(s.Objective, "\n") && len(s.Objective) <= MaxLineLen {
			objective++
		}
		switch src {
		case objFromContent:
			objectiveContent++
		case objFromTitle:
			objectiveTitle++
		}
		if !s.Date.IsZero() {
			date++
		}
		if d, ok := dateFromName(s.SourcePath); !ok || !d.Equal(s.Date) || s.Date.Hour() != 0 {
			dateContent++ // the date carries a time or differs from the file name
		} else if strings.Contains(string(data), s.Date.Format("2006-01-02")) {
			dateContent++ // the file itself states that date
		}

		// Checklists: Markdown files with "| [x] |" rows, JSON files with
		// protocol checklist entries.
		wantCL := false
		if path.Ext(s.SourcePath) == ".md" {
			wantCL = reCheckboxRow.Match(data)
		} else {
			wantCL = regexp.MustCompile(`"(protocolCompliance|protocol_compliance)"\s*:\s*\{\s*"`).Match(data) &&
				regexp.MustCompile(`"(session_?[Ss]tart|session_?[Ee]nd)"\s*:\s*\{\s*"`).Match(data)
		}
		if wantCL {
			clFiles++
			if len(s.Checklist) > 0 {
				clParsed++
			} else {
				t.Errorf("%s: has a checklist but none was parsed", s.SourcePath)
			}
		}

		// Decisions: a Markdown "Decisions" section with content, or a
		// JSON decision list.
		wantDec := false
		if path.Ext(s.SourcePath) == ".md" {
			wantDec = hasDecisionContent(string(data))
		} else {
			wantDec = jsonHasDecisions(data)
		}
		if wantDec {
			decFiles++
			if len(s.Decisions) > 0 {
				decParsed++
			} else {
				t.Errorf("%s: has a Decisions section but none was parsed", s.SourcePath)
			}
		}
		for _, d := range s.Decisions {
			if d.Title == "" || d.Choice == "" {
				t.Errorf("%s: decision without title or choice: %+v", s.SourcePath, d)
			}
		}
		for _, list := range [][]string{s.Updates, s.Outcomes, s.NextSteps} {
			for _, e := range list {
				if e == "" || strings.Contains(e, "\n") || len(e) > MaxLineLen {
					t.Errorf("%s: bad entry %q", s.SourcePath, e)
				}
			}
		}
		count := func(n *int, ok bool) {
			if ok {
				*n++
			}
		}
		count(&upd, len(s.Updates) > 0)
		count(&out, len(s.Outcomes) > 0)
		count(&next, len(s.NextSteps) > 0)
		count(&issues, len(s.Issues) > 0)
		count(&branch, s.Branch != "")
	}
	n := len(sessions)
	var names []string
	for f, c := range formats {
		names = append(names, f+"="+itoa(c))
	}
	sort.Strings(names)
	t.Logf("%d sessions by format: %s", n, strings.Join(names, ", "))
	t.Logf("objective: %d/%d (%.1f%%) non-empty: %d (%.1f%%) from the content, %d (%.1f%%) from the title, the rest from the file name",
		objective, n, pct(objective, n), objectiveContent, pct(objectiveContent, n), objectiveTitle, pct(objectiveTitle, n))
	t.Logf("date: %d/%d (%.1f%%), %d (%.1f%%) stated in the file", date, n, pct(date, n), dateContent, pct(dateContent, n))
	t.Logf("checklist: %d/%d files with checklists parsed (%.1f%%)", clParsed, clFiles, pct(clParsed, clFiles))
	t.Logf("decisions: %d/%d files with decision sections parsed (%.1f%%)", decParsed, decFiles, pct(decParsed, decFiles))
	t.Logf("branch %.1f%%, updates %.1f%%, outcomes %.1f%%, next steps %.1f%%, issue refs %.1f%%",
		pct(branch, n), pct(upd, n), pct(out, n), pct(next, n), pct(issues, n))
	if objective != n {
		t.Errorf("objective present in %d of %d sessions, want all (with fallbacks)", objective, n)
	}
	if pct(objectiveContent, n) < minPct-20 {
		t.Errorf("objective from content in %.1f%% of sessions, want >= %.0f%%", pct(objectiveContent, n), minPct-20)
	}
	if pct(date, n) < minPct || pct(dateContent, n) < minPct {
		t.Errorf("date in %.1f%% (stated in file %.1f%%) of sessions, want >= %.0f%%", pct(date, n), pct(dateContent, n), minPct)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestCorpusArchive(t *testing.T) {
	agents := corpusAgents(t)
	dir := filepath.Join(agents, "archive", "sessions")
	total := countFiles(t, dir)
	sessions, skipped, err := Scan(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sk := range skipped {
		t.Logf("skipped %s: %s", sk.Path, sk.Reason)
	}
	if len(sessions)+len(skipped) != total {
		t.Fatalf("parsed %d + skipped %d != %d files", len(sessions), len(skipped), total)
	}
	for _, sk := range skipped {
		if !strings.HasPrefix(sk.Reason, "not a session log") {
			t.Errorf("archive file %s skipped: %s", sk.Path, sk.Reason)
		}
	}
	checkCoverage(t, dir, "", sessions, 95)
}

// TestCorpusDuplicates scans the archived Markdown logs together with the
// JSON logs migrated from them: each pair must give one session.
func TestCorpusDuplicates(t *testing.T) {
	agents := corpusAgents(t)
	tmp := t.TempDir()
	archive := filepath.Join(agents, "archive", "sessions")
	entries, err := os.ReadDir(archive)
	if err != nil {
		t.Fatal(err)
	}
	pairs := 0
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".md")
		jsonPath := filepath.Join(agents, "sessions", name+".json")
		if _, err := os.Stat(jsonPath); err != nil {
			continue
		}
		pairs++
		for _, src := range []string{filepath.Join(archive, e.Name()), jsonPath} {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tmp, filepath.Base(src)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if pairs < 100 {
		t.Fatalf("only %d archived Markdown logs have a JSON twin; the corpus looks incomplete", pairs)
	}
	sessions, skipped, err := Scan(tmp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != pairs || len(skipped) != pairs {
		t.Fatalf("%d pairs gave %d sessions and %d skipped, want %d and %d", pairs, len(sessions), len(skipped), pairs, pairs)
	}
	kept := map[string]int{}
	for _, sk := range skipped {
		if !strings.HasPrefix(sk.Reason, "duplicate of session ID ") {
			t.Errorf("skipped %s: %s", sk.Path, sk.Reason)
		}
	}
	fallback := 0
	for _, s := range sessions {
		kept[s.Format]++
		if strings.HasPrefix(s.Format, "json") && s.Objective == slugObjective(s.ID) {
			fallback++
		}
	}
	t.Logf("%d md/json pairs: kept %v; %d kept JSON logs still have a file-name objective", pairs, kept, fallback)
}
