package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A session with 10,000 updates still takes updates and reads back (10,000
// is the most updates a session must hold).
func TestTenThousandUpdates(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Long session")
	mustRun(t, v, "update", "first")
	note := filepath.Join(v, "demo", "session-current-state.md")
	data, _ := os.ReadFile(note)
	var b strings.Builder
	for i := 2; i <= 10000; i++ {
		fmt.Fprintf(&b, "- 2026-11-22T10:00:00Z · note · bulk update %d ^u-%d\n", i, i)
	}
	first := "· note · first ^u-1\n"
	i := strings.Index(string(data), first) + len(first)
	os.WriteFile(note, []byte(string(data[:i])+b.String()+string(data[i:])), 0o644)
	if out := mustRun(t, v, "update", "after ten thousand", "--progress", "99"); strings.TrimSpace(out) != "u-10001" {
		t.Fatalf("update printed %q, want u-10001", out)
	}
	var res struct {
		Data struct {
			Updates []struct {
				ID string `json:"id"`
			} `json:"updates"`
			Progress int    `json:"progress"`
			Session  string `json:"session"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, v, "status", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if n := len(res.Data.Updates); n != 10001 || res.Data.Updates[n-1].ID != "u-10001" || res.Data.Progress != 99 {
		t.Fatalf("status shows %d updates (last %v), progress %d", n, res.Data.Updates[n-1:], res.Data.Progress)
	}
	// Compaction (on by default) kept the note small; 120 more updates
	// compact again, and every update is read back exactly once.
	for i := 1; i <= 120; i++ {
		mustRun(t, v, "update", fmt.Sprintf("later update %d", i))
	}
	if data, _ := os.ReadFile(note); len(data) >= 64<<10 {
		t.Fatalf("the current-state note is %d bytes after 10,121 updates, want < 64 KB", len(data))
	}
	res.Data.Updates = nil
	if err := json.Unmarshal([]byte(mustRun(t, v, "status", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, u := range res.Data.Updates {
		seen[u.ID]++
	}
	for i := 1; i <= 10121; i++ {
		if id := fmt.Sprintf("u-%d", i); seen[id] != 1 {
			t.Fatalf("%s is read back %d times, want once", id, seen[id])
		}
	}
	archive, _ := os.ReadFile(filepath.Join(v, "demo", "sessions", res.Data.Session, "archive.md"))
	if n := strings.Count(string(archive), " ^u-"); n < 10000 {
		t.Fatalf("the archive note holds %d updates, want the 10,000+ moved", n)
	}
	if cur, _ := os.ReadFile(note); !strings.Contains(string(cur), "## Compactions") || !strings.Contains(string(cur), " ^k-2") {
		t.Fatalf("the current state records no second compaction:\n%s", cur)
	}
	mustRun(t, v, "end", "--summary", "long")
	assertClean(t, v)
}

// A note over 10 MB is refused with a clear error naming it, and nothing changes.
func TestNoteOverTenMegabytesRefused(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Big")
	note := filepath.Join(v, "demo", "session-current-state.md")
	data, _ := os.ReadFile(note)
	big := append(data, []byte("\n## Dump\n\n"+strings.Repeat("x", 10<<20)+"\n")...)
	os.WriteFile(note, big, 0o644)
	head := git(t, v, "rev-parse", "HEAD")
	_, errOut, code := run(t, v, "update", "x")
	if code == 0 || !strings.Contains(errOut, "demo/session-current-state.md") || !strings.Contains(errOut, "NOTE_TOO_LARGE") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if git(t, v, "rev-parse", "HEAD") != head {
		t.Fatal("a refused update made a commit")
	}
	if now, _ := os.ReadFile(note); len(now) != len(big) {
		t.Fatal("the big note was changed")
	}
}

// session-history.md keeps the last 10 sessions in full and older ones as
// links, newest first.
func TestHistoryKeepsTenInFull(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	for i := 1; i <= 12; i++ {
		mustRun(t, v, "start", "--objective", fmt.Sprintf("objective %d", i))
		mustRun(t, v, "end", "--summary", fmt.Sprintf("summary %d", i))
	}
	data, _ := os.ReadFile(filepath.Join(v, "demo", "session-history.md"))
	h := string(data)
	if n := strings.Count(h, "\n### "); n != 10 {
		t.Errorf("%d sessions in full, want 10", n)
	}
	older := h[strings.Index(h, "## Older sessions"):]
	if strings.Count(older, "\n- [[demo/sessions/") != 2 || strings.Index(older, "objective 2") > strings.Index(older, "objective 1") || !strings.Contains(older, "objective 1") {
		t.Errorf("older sessions should list objective 2 then objective 1 as links:\n%s", older)
	}
	if strings.Index(h, "objective 12") > strings.Index(h, "objective 11") {
		t.Error("recent sessions are not newest first")
	}
	if !strings.Contains(h, "\nsessions: 12\n") {
		t.Error("sessions property is not 12")
	}
	assertClean(t, v)
}
