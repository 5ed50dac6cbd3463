package importer

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeTree creates files (slash paths relative to root) with contents.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScan(t *testing.T) {
	agents := t.TempDir()
	writeTree(t, agents, map[string]string{
		"sessions/2025-12-22-session-58-pr-206.md":                 mdTemplated,
		"sessions/2026-07-28-session-3625-hygiene.json":            jsonV1,
		"sessions/handoffs/2026-08-12-4905-handoff.md":             mdHandoff,
		"sessions/handoffs/README.md":                              "# Per-Issue Session Handoffs\n",
		"sessions/STEP-0-METRICS.md":                               "# Step 0 Metrics\n",
		"sessions/2026-01-01-session-1-broken.json":                "{\n\"session\": {\n\"date\": 2026-01-01}\n}",
		"sessions/2026-01-02-session-2-empty.md":                   "",
		"sessions/notes.txt":                                       "hello",
		"sessions/.obsidian/workspace.json":                        "{}",
		"sessions/2025-12-31-session-113-phase2-traceability.json": `{"session":{"branch":"","objective":"[Migrated from markdown]","date":"2025-12-31","number":113,"startingCommit":""},"protocolCompliance":{"sessionStart":{},"sessionEnd":{}},"workLog":[],"endingCommit":"abc1234","nextSteps":[]}`,
		"sessions/2025-12-31-session-113-phase2-traceability.md":   "# Session 113\n\n**Date**: 2025-12-31\n**Branch**: feat/phase-2\n\n## Objective\n\nImplement Phase 2.\n\n## Work Log\n\n- Built the graph\n",
		"other/ignored.md":                                         "# not under sessions\n",
	})
	var calls [][2]int
	sessions, skipped, err := Scan(agents, func(done, total int) { calls = append(calls, [2]int{done, total}) })
	if err != nil {
		t.Fatal(err)
	}

	// Progress: once per file under sessions/ (hidden folders excluded).
	const files = 10
	if len(calls) != files || calls[0] != [2]int{1, files} || calls[files-1] != [2]int{files, files} {
		t.Errorf("progress calls = %v, want 1..%d of %d", calls, files, files)
	}
	if len(sessions)+len(skipped) != files {
		t.Errorf("sessions %d + skipped %d != files %d", len(sessions), len(skipped), files)
	}

	var ids []string
	for _, s := range sessions {
		ids = append(ids, s.ID)
	}
	wantIDs := []string{ // sorted by (Date, ID)
		"2025-12-22-session-58-pr-206",
		"2025-12-31-session-113-phase2-traceability",
		"2026-07-28-session-3625-hygiene",
		"2026-08-12-4905-handoff",
	}
	if !reflect.DeepEqual(ids, wantIDs) {
		t.Errorf("IDs = %q, want %q", ids, wantIDs)
	}
	if sessions[0].SourcePath != "sessions/2025-12-22-session-58-pr-206.md" {
		t.Errorf("SourcePath = %q, want it relative to the scanned dir", sessions[0].SourcePath)
	}

	// The duplicate: the Markdown file is richer and kept; the JSON file's
	// ending commit fills the gap.
	dup := sessions[1]
	if dup.SourcePath != "sessions/2025-12-31-session-113-phase2-traceability.md" || dup.Objective != "Implement Phase 2." ||
		dup.EndCommit != "abc1234" || dup.Branch != "feat/phase-2" || len(dup.Updates) != 1 {
		t.Errorf("merged duplicate = %+v", dup)
	}

	// Hidden folders (sessions/.obsidian) are not walked at all.
	wantSkipped := map[string]string{
		"sessions/2025-12-31-session-113-phase2-traceability.json": `duplicate of session ID "2025-12-31-session-113-phase2-traceability": kept sessions/2025-12-31-session-113-phase2-traceability.md`,
		"sessions/2026-01-01-session-1-broken.json":                "invalid JSON at line 3: invalid character '-' after object key:value pair",
		"sessions/2026-01-02-session-2-empty.md":                   "empty file",
		"sessions/STEP-0-METRICS.md":                               "not a session log: file name has neither",
		"sessions/handoffs/README.md":                              "not a session log: file name has neither",
		"sessions/notes.txt":                                       "not a .md or .json file",
	}
	if len(skipped) != len(wantSkipped) {
		t.Errorf("skipped = %+v, want %d entries", skipped, len(wantSkipped))
	}
	for i, sk := range skipped {
		want, ok := wantSkipped[sk.Path]
		if !ok || !strings.HasPrefix(sk.Reason, want) {
			t.Errorf("skipped %q: reason %q, want prefix %q", sk.Path, sk.Reason, want)
		}
		if i > 0 && skipped[i-1].Path > sk.Path {
			t.Errorf("skipped not sorted by path: %q before %q", skipped[i-1].Path, sk.Path)
		}
	}

	// Scanning the sessions folder itself gives paths relative to it.
	sessions2, _, err := Scan(filepath.Join(agents, "sessions"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions2) != len(sessions) || sessions2[0].SourcePath != "2025-12-22-session-58-pr-206.md" {
		t.Errorf("Scan(sessions): %d sessions, first path %q", len(sessions2), sessions2[0].SourcePath)
	}
}

func TestScanErrors(t *testing.T) {
	if _, _, err := Scan(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("Scan(missing dir): want an error")
	}
	f := filepath.Join(t.TempDir(), "file.md")
	writeTree(t, filepath.Dir(f), map[string]string{"file.md": "x"})
	if _, _, err := Scan(f, nil); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Scan(file) err = %v, want 'not a directory'", err)
	}
	// An empty folder is not an error.
	ss, sk, err := Scan(t.TempDir(), nil)
	if err != nil || len(ss) != 0 || len(sk) != 0 {
		t.Errorf("Scan(empty) = %v, %v, %v", ss, sk, err)
	}
}

func TestUnionStrings(t *testing.T) {
	got := unionStrings([]string{"#1", "PR #2"}, []string{"PR #1", "#2", "#3"})
	if want := []string{"PR #1", "PR #2", "#3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("unionStrings = %q, want %q", got, want)
	}
}
