package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/integrations/linear/lineartest"
)

const testKey = "lin_api_SECRETKEY_must_never_leak_42"

// linkedVault makes a vault with n finished sessions linked to ENG-1..ENG-n,
// and a fake Linear holding those issues.
//
// The sync tests run the CLI in process, which finds Linear through
// LINEAR_API_URL and LINEAR_API_KEY in the process's environment: they set
// them with t.Setenv, so they do not run in parallel with other tests.
func linkedVault(t *testing.T, n int) (string, *lineartest.Server) {
	t.Helper()
	fake := lineartest.New(t, lineartest.WithKey(testKey))
	t.Setenv("LINEAR_API_URL", fake.URL())
	t.Setenv("LINEAR_API_KEY", testKey)
	v := newVault(t)
	for i := 1; i <= n; i++ {
		fake.AddIssue(fmt.Sprintf("ENG-%d", i), fmt.Sprintf("Issue %d", i))
		mustRun(t, v, "start", "--objective", fmt.Sprintf("Work on issue %d", i), "--linear", fmt.Sprintf("ENG-%d", i))
		mustRun(t, v, "update", fmt.Sprintf("progress on %d", i), "--progress", "50")
		mustRun(t, v, "end", "--summary", fmt.Sprintf("done %d", i))
	}
	return v, fake
}

func mutations(f *lineartest.Server) int {
	n := 0
	for _, c := range f.Mutations() {
		n += c
	}
	return n
}

// 100 sessions synced twice: the second run sends no mutation; after 10
// sessions are edited, a run sends exactly 10 commentUpdate calls.
func TestSyncHundredSessionsIdempotent(t *testing.T) {
	v, fake := linkedVault(t, 100)
	out := mustRun(t, v, "sync", "linear")
	if !strings.Contains(out, "created 100, updated 0, unchanged 0, failed 0") {
		t.Fatalf("first run: %s", out)
	}
	before := mutations(fake)
	out = mustRun(t, v, "sync", "linear")
	if !strings.Contains(out, "unchanged 100") || mutations(fake) != before {
		t.Fatalf("second run sent %d mutations: %s", mutations(fake)-before, out)
	}
	ents, _ := os.ReadDir(filepath.Join(v, "demo", "sessions"))
	for i := 0; i < 10; i++ {
		p := filepath.Join(v, "demo", "sessions", ents[i*9].Name())
		data, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(data), "\nobjective: Work on issue", "\nobjective: Edited work on issue", 1)), 0o644)
	}
	fake.ResetCounters()
	out = mustRun(t, v, "sync", "linear")
	if got := fake.Mutations(); got["commentUpdate"] != 10 || len(got) != 1 {
		t.Fatalf("after 10 edits the run sent %v: %s", got, out)
	}
	for i := 1; i <= 100; i++ {
		if c := fake.Comments(fmt.Sprintf("ENG-%d", i)); len(c) != 1 {
			t.Fatalf("ENG-%d has %d comments", i, len(c))
		}
	}
}

// RATELIMITED after 5 requests: the run stops cleanly, the next completes,
// and every issue holds exactly one comment.
func TestSyncRateLimitedResumes(t *testing.T) {
	v, fake := linkedVault(t, 6)
	fake.RateLimitAfter(5)
	out := mustRun(t, v, "sync", "linear")
	if !strings.Contains(out, "stopped: rate limited") {
		t.Fatalf("first run: %s", out)
	}
	fake.ResetRateLimit()
	out = mustRun(t, v, "sync", "linear")
	if strings.Contains(out, "stopped") || strings.Contains(out, "failed 1") {
		t.Fatalf("second run: %s", out)
	}
	for i := 1; i <= 6; i++ {
		if c := fake.Comments(fmt.Sprintf("ENG-%d", i)); len(c) != 1 {
			t.Fatalf("ENG-%d has %d comments after the resumed run", i, len(c))
		}
	}
	if out := mustRun(t, v, "sync", "linear"); !strings.Contains(out, "unchanged 6") {
		t.Fatalf("third run: %s", out)
	}
}

// Linear down: nothing is lost, the next run pushes. A bad key: a clear
// error naming LINEAR_API_KEY. The key appears in no output and no vault file.
func TestSyncDownBadKeyAndNoLeak(t *testing.T) {
	v, fake := linkedVault(t, 2)
	var seen strings.Builder
	fake.Fail5xx(1000)
	out, errOut, code := run(t, v, "sync", "linear")
	seen.WriteString(out + errOut)
	if code != 0 || !strings.Contains(out, "failed 2") {
		t.Fatalf("down: exit %d %s %s", code, out, errOut)
	}
	fake.Fail5xx(0)
	out, errOut, _ = run(t, v, "sync", "linear", "--json")
	seen.WriteString(out + errOut)
	if !strings.Contains(out, `"created": 2`) {
		t.Fatalf("after Linear came back: %s", out)
	}
	fake.BadKey()
	v2 := v
	mustRun(t, v2, "start", "--objective", "more", "--linear", "ENG-1")
	out, errOut, code = run(t, v, "sync", "linear")
	seen.WriteString(out + errOut)
	if code == 0 || !strings.Contains(errOut, "LINEAR_API_KEY") {
		t.Fatalf("bad key: exit %d, stderr %q", code, errOut)
	}
	out, errOut, _ = run(t, v, "linear", "check")
	seen.WriteString(out + errOut)
	fake.RestoreKey()
	out, errOut, _ = run(t, v, "linear", "check")
	seen.WriteString(out + errOut)
	if !strings.Contains(out, "LINEAR_API_KEY works: Sync Bot") {
		t.Fatalf("linear check: %s %s", out, errOut)
	}
	out, errOut, _ = run(t, v, "sync", "linear", "--dry-run")
	seen.WriteString(out + errOut)
	if strings.Contains(seen.String(), testKey) || strings.Contains(seen.String(), "SECRETKEY") {
		t.Fatal("the API key appeared in the output")
	}
	filepath.WalkDir(v, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), "SECRETKEY") {
				t.Errorf("the API key is in %s", p)
			}
		}
		return nil
	})
	assertClean(t, v)
}

// The config's mappings: the issue's state on start and on end, a label for
// decisions, and an attachment linking back to the note (upserted by URL).
func TestSyncConfigMappings(t *testing.T) {
	fake := lineartest.New(t, lineartest.WithKey(testKey))
	t.Setenv("LINEAR_API_URL", fake.URL())
	t.Setenv("LINEAR_API_KEY", testKey)
	fake.AddIssue("ENG-42", "Mapped")
	v := newVault(t)
	cfg := filepath.Join(v, ".sessionvault", "config.yaml")
	data, _ := os.ReadFile(cfg)
	data = []byte(strings.NewReplacer(`state_on_start: ""`, `state_on_start: "In Progress"`, `state_on_end: ""`, `state_on_end: "Done"`,
		`decision_label: ""`, `decision_label: "decision"`, `note_url: ""`, `note_url: "https://vault.example.invalid/"`).Replace(string(data)))
	os.WriteFile(cfg, data, 0o644)
	mustRun(t, v, "start", "--objective", "Mapped work", "--branch", "eng-42-mapped")
	mustRun(t, v, "sync", "linear")
	is := fake.Issue("ENG-42")
	if is.State != "In Progress" || len(fake.Comments("ENG-42")) != 1 {
		t.Fatalf("after start: state %q, %d comments", is.State, len(fake.Comments("ENG-42")))
	}
	mustRun(t, v, "decide", "--title", "T", "--choice", "C", "--rationale", "R")
	mustRun(t, v, "end", "--summary", "done")
	mustRun(t, v, "sync", "linear")
	mustRun(t, v, "sync", "linear")
	is = fake.Issue("ENG-42")
	if is.State != "Done" || len(is.Labels) != 1 || is.Labels[0] != "decision" || len(is.Attachments) != 1 || len(fake.Comments("ENG-42")) != 1 {
		t.Fatalf("after end: %+v, %d comments", is, len(fake.Comments("ENG-42")))
	}
}
