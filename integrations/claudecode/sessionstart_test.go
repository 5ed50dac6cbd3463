package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
)

// sessionStartAnswer is SessionStart's stdout JSON.
type sessionStartAnswer struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// sessionStart runs the SessionStart hook for source and returns the
// additional context it gives the agent; anything but exit 0 with one
// hookSpecificOutput object for SessionStart on stdout fails the test.
func (f *fixture) sessionStart(source string) string {
	f.t.Helper()
	r := f.hook("session-start", map[string]any{"source": source, "model": "claude-opus-4-1"})
	if r.Exit != 0 || r.Stderr != "" {
		f.t.Errorf("session-start: %+v; want exit 0 and nothing on stderr", r)
	}
	return decodeSessionStart(f.t, r.Stdout)
}

// decodeSessionStart decodes SessionStart's stdout and returns its
// additional context.
func decodeSessionStart(t *testing.T, stdout string) string {
	t.Helper()
	var a sessionStartAnswer
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil || a.HookSpecificOutput.HookEventName != "SessionStart" || !strings.HasSuffix(stdout, "}\n") {
		t.Errorf("session-start printed %q; want one hookSpecificOutput object for SessionStart (%v)", stdout, err)
	}
	return a.HookSpecificOutput.AdditionalContext
}

// TestSessionStartGivesTheResumePrompt checks the context SessionStart
// injects through a project's life, each row a state: what the prompt must
// say (patterns) and must not. Commands in it carry --vault, so they run as
// written in the code repository.
func TestSessionStartGivesTheResumePrompt(t *testing.T) {
	f := newFixture(t)
	sv := regexp.QuoteMeta("`sessionvault --vault " + f.Vault)
	id := `\d{4}-\d\d-\d\d-session-0`
	// The last row's session starts two hours ago: between 00:00 and 02:00
	// UTC that is the day before, where it is the first session.
	now := time.Now().UTC()
	back := now.Add(-2 * time.Hour)
	backID := back.Format("2006-01-02") + "-session-02"
	if back.Format("2006-01-02") != now.Format("2006-01-02") {
		backID = back.Format("2006-01-02") + "-session-01"
	}
	steps := []struct {
		state  string
		do     func()
		source string
		want   []string
		not    []string
	}{
		{"a new vault", func() {}, "startup",
			[]string{`^# sessionvault: no active session in demo\n\nStart one: ` + sv + ` start --objective "\.\.\."` + "`" + `\.$`},
			[]string{"--continue"}},
		// The state this hook hands over is the evidence of "read the current
		// state": the start checklist has nothing open left to list.
		{"a session just started", func() { f.start("Login page") }, "startup",
			[]string{
				`^# sessionvault: session ` + id + `1 \(active\)\n\n- Objective: Login page\n- Progress: 0%\n- Mode: coding\n`,
				`\n## End checklist: open MUST items\n- e-1 Record the session's progress as updates: ` + sv + ` update "\.\.\."` + "`",
			},
			[]string{"Your context was", "Open blockers", "Latest updates", "Start checklist"}},
		{"working, with updates, a decision and a blocker, after a compaction", func() {
			f.meetStartGate()
			f.sv("update", "wired the form", "--progress", "40")
			f.sv("decide", "--title", "Storage", "--choice", "cookies", "--rationale", "simple")
			f.sv("block", "API key missing", "--severity", "high")
		}, "compact",
			[]string{
				`- Progress: 40%`,
				`\n\nYour context was compacted: this summary is the state to continue from; ` + sv + ` status` + "`" + ` shows more\.\n`,
				`\n## Open blockers\n- b-1 \[high\] API key missing\n`,
				`\n## Latest updates\n- \d{4}-\d\d-\d\dT\S+Z progress: wired the form\n`,
				`\n## Decisions\n- Storage: cookies \(simple\)\n`,
			},
			[]string{"Start checklist"}},
		{"the same, resumed", func() {}, "resume",
			[]string{`Your context was resumed: `}, nil},
		{"the same, cleared", func() {}, "clear",
			[]string{`# sessionvault: session `}, []string{"Your context was"}},
		{"with a memory bank imported", func() {
			f.sv("import", "memory-bank", filepath.Join(testdata, "memory-bank"))
		}, "startup",
			[]string{`\n## Decisions\n- Storage: cookies \(simple\)\n\n## Memory bank\n\nThe start of the project's memory bank notes; read the whole note for the rest\.\n` +
				`\n### Active context: the whole of ` + regexp.QuoteMeta(filepath.Join(f.Vault, project, "memory-bank", "activeContext.md")) + `\n\n` +
				`> # Active context\n>\n> Building the login page: the form posts to /api/session\.\n>\n> - The session cookie is HttpOnly\.\n` +
				`\n### Progress: the whole of \S+/progress\.md\n\n> # Progress\n>\n> - \[x\] Form layout\n> - \[ \] Error messages\n$`},
			nil},
		{"after the session ended", func() {
			f.sv("end", "--summary", "form done", "--next", "hook up the API", "--next", "write the docs")
		}, "startup",
			[]string{
				`^# sessionvault: no active session in demo\n\nStart one: ` + sv + ` start --objective "\.\.\."` + "`" + ` \(add ` + "`--continue " + id + "1`" + ` to carry on from the last session\)\.\n`,
				`\n## The last session: ` + id + `1 \(complete\)\n\n- Objective: Login page\n- Progress: 40%\n- Summary: form done\n`,
				`\n## Next steps it left\n\n- hook up the API\n- write the docs\n`,
				`\n## Blockers it left open\n\n- b-1 \[high\] API key missing\n\n## Memory bank\n`,
			}, nil},
		{"a session that continues the last one, with no sign of life for two hours", func() {
			last := regexp.MustCompile(id + `1`).FindString(f.sessionStart("startup"))
			f.t.Setenv("SESSIONVAULT_NOW", back.Format(time.RFC3339))
			f.sv("start", "--objective", "API", "--continue", last)
			f.t.Setenv("SESSIONVAULT_NOW", "")
		}, "startup",
			[]string{
				`^# sessionvault: session ` + backID + ` \(crashed\)\n`,
				`\n- Continues: ` + id + `1 \(its summary: form done\)\n  - next step it left: hook up the API\n  - next step it left: write the docs\n`,
				`\nThe session shows no recent sign of life: run ` + sv + ` recover` + "`" + ` to resume it\.\n`,
			}, nil},
	}
	for _, s := range steps {
		s.do()
		ctx := f.sessionStart(s.source)
		for _, w := range s.want {
			if !regexp.MustCompile(w).MatchString(ctx) {
				t.Errorf("%s: the prompt lacks %q:\n%s", s.state, w, ctx)
			}
		}
		for _, n := range s.not {
			if strings.Contains(ctx, n) {
				t.Errorf("%s: the prompt says %q:\n%s", s.state, n, ctx)
			}
		}
	}
}

// TestSessionStartPromptIsBounded checks Handler.PromptLimit: the prompt is
// cut at a line boundary, marked with "…", and never longer than the limit;
// a prompt within the limit is whole. Of many updates, it lists the five
// latest.
func TestSessionStartPromptIsBounded(t *testing.T) {
	f := newFixture(t)
	f.working("Login page")
	for i := range 12 {
		f.sv("update", "step "+strings.Repeat("x", 40)+string(rune('a'+i)))
	}
	in := claudecode.Input{SessionID: "s", Source: "startup", Cwd: f.Code, HookEventName: "SessionStart"}
	whole := decodeSessionStart(t, f.handler().SessionStart(in).Stdout)
	if strings.HasSuffix(whole, "…") || len(whole) > 8<<10 || !strings.Contains(whole, "## Latest updates") {
		t.Fatalf("default limit: %d bytes, %q", len(whole), whole)
	}
	// The five latest updates, oldest first.
	if got := strings.Count(whole, "note: step "); got != 5 || !strings.Contains(whole, "xh\n") || !strings.HasSuffix(whole, "xl\n") || strings.Contains(whole, "xg\n") {
		t.Errorf("the prompt lists %d updates; want the 5 latest (h to l):\n%s", got, whole)
	}
	// Limits around line ends: the cut mark must fit in whatever the limit
	// leaves.
	limits := []int{len(whole), 20}
	for i, n := 100, 0; i < len(whole) && n < 4; i++ {
		if whole[i] == '\n' {
			limits = append(limits, i, i+1, i+2, i+3, i+4, i+5)
			n++
		}
	}
	for _, limit := range limits {
		h := f.handler()
		h.PromptLimit = limit
		got := decodeSessionStart(t, h.SessionStart(in).Stdout)
		if limit == len(whole) {
			if got != whole {
				t.Errorf("limit %d (the prompt's length): %q; want it whole", limit, got)
			}
			continue
		}
		body, cut := strings.CutSuffix(got, "\n…")
		if !cut || len(got) > limit || !strings.HasPrefix(whole, body) {
			t.Errorf("limit %d: %d bytes %q; want a prefix of the prompt marked as cut, at most %d bytes", limit, len(got), got, limit)
		}
		if limit > 100 && whole[len(body)] != '\n' {
			t.Errorf("limit %d: cut inside a line: %q", limit, got)
		}
	}
}

// TestResumePromptMarksStaleDecisions: a decision that cites code is marked
// stale in the resume prompt once the cited code changed since, with how.
func TestResumePromptMarksStaleDecisions(t *testing.T) {
	f := newFixture(t)
	f.working("Sessions")
	if err := os.WriteFile(filepath.Join(f.Code, "auth.go"), []byte("package auth\n\nconst store = \"cookie\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, f.Code, "add", "auth.go")
	git(t, f.Code, "commit", "-q", "-m", "auth")
	f.sv("decide", "--title", "Storage", "--choice", "cookies", "--rationale", "simple", "--cite", "auth.go#L3")
	if ctx := f.sessionStart("resume"); !strings.Contains(ctx, "\n- Storage: cookies (simple)\n") {
		t.Fatalf("the decision before any change: the prompt lacks it, unmarked:\n%s", ctx)
	}
	if err := os.WriteFile(filepath.Join(f.Code, "auth.go"), []byte("package auth\n\nconst store = \"header\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, f.Code, "commit", "-q", "-am", "header")
	want := "\n- Storage: cookies (simple) — stale: 1 commit touched auth.go since; check it still holds\n"
	if ctx := f.sessionStart("resume"); !strings.Contains(ctx, want) {
		t.Errorf("after a commit changed the cited line: the prompt lacks %q:\n%s", want, ctx)
	}
}
