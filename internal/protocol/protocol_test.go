package protocol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/testcorpus"
	"github.com/sessionvault/sessionvault/templates"
)

// corpus is the corpus tier's ai-agents folder (testcorpus).
func corpus(t *testing.T) string { return testcorpus.Dir(t, "ai-agents") }

// Both real protocol versions and the default one give start and end
// checklists with their levels.
func TestParseRealProtocols(t *testing.T) {
	type protocolCase struct {
		name       string
		src        []byte
		start, end int
		firstLevel string
	}
	def, _ := templates.FS.ReadFile("SESSION-PROTOCOL.md")
	cases := []protocolCase{{"default", def, 5, 4, "MUST"}}
	if c := testcorpus.Find(); c != "" || os.Getenv(testcorpus.EnvRequired) != "" {
		c := corpus(t)
		old, _ := os.ReadFile(filepath.Join(c, "history", "SESSION-PROTOCOL@bdacb6b19dcb.md"))
		cur, _ := os.ReadFile(filepath.Join(c, ".agents", "SESSION-PROTOCOL.md"))
		cases = append(cases, protocolCase{"ai-agents 2026-01 (tables)", old, 13, 11, "MUST"}, protocolCase{"ai-agents v3.0 (task lists)", cur, 5, 7, ""})
	}
	p := markdown.New()
	for _, tc := range cases {
		got := Parse(p, tc.name, tc.src)
		if len(got.Start) != tc.start || len(got.End) != tc.end {
			t.Errorf("%s: %d start and %d end items, want %d and %d", tc.name, len(got.Start), len(got.End), tc.start, tc.end)
			continue
		}
		if got.Start[0].Level != tc.firstLevel || got.Start[0].Step == "" || got.Start[0].Line == 0 {
			t.Errorf("%s: first start item = %+v", tc.name, got.Start[0])
		}
	}
}

func TestDefaultProtocolChecks(t *testing.T) {
	def, _ := templates.FS.ReadFile("SESSION-PROTOCOL.md")
	got := Parse(markdown.New(), "default", def)
	want := []Check{{KindFile, "session-current-state.md"}, {KindSection, "Objective"}, {KindRun, `test "$(git rev-parse --abbrev-ref HEAD)" != main`}, {KindCommit, ""}, {KindFile, "session-history.md"}}
	for i, w := range want {
		if got.Start[i].Check != w {
			t.Errorf("start %d: check %+v, want %+v", i, got.Start[i].Check, w)
		}
	}
	if ParseCheck("Tool output present").Verifiable() {
		t.Error("free text must not be verifiable by the engine")
	}
	// A first session on GitHub's default branch is not blocked: the branch
	// item is a SHOULD, and says how to fix it; the end's blockers item is
	// one the engine checks.
	if r := got.Start[2]; r.Level != "SHOULD" || !strings.Contains(r.Fix, "git switch -c") {
		t.Errorf("the branch item = %+v, want a SHOULD with its fix", r)
	}
	for _, r := range got.Start {
		if r.Level == "MUST" && r.Check.Kind == KindRun {
			t.Errorf("start MUST %q runs a command: a first session could not pass it", r.Step)
		}
	}
	if c := got.End[2].Check; c.Kind != KindBlockers || !c.Verifiable() {
		t.Errorf("end item 3 check = %+v, want blockers", c)
	}
}

// A Fix column (or "If it fails", "Remedy") is read with each row.
func TestParseFixColumn(t *testing.T) {
	src := []byte("## Session start\n\n| Req | Step | Evidence | If it fails |\n|---|---|---|---|\n| MUST | Be ready | `run: test -f READY` | `touch READY` |\n| SHOULD | Read | `file: a.md` | |\n")
	got := Parse(markdown.New(), "p", src)
	if len(got.Start) != 2 || got.Start[0].Fix != "`touch READY`" || got.Start[1].Fix != "" || got.Start[0].Check != (Check{KindRun, "test -f READY"}) {
		t.Fatalf("parsed %+v", got.Start)
	}
}

func TestPolicy(t *testing.T) {
	p := DefaultPolicy()
	cases := []struct {
		mode    Mode
		tool    string
		blocked bool
	}{
		{Analysis, "Edit", true}, {Analysis, "Bash", true}, {Analysis, "Read", false},
		{Planning, "Write", true}, {Planning, "Bash", false},
		{Coding, "Edit", false}, {Disabled, "Bash", false},
		{Analysis, "Editor", false}, // whole-name match only
	}
	for _, c := range cases {
		if got := p.BlockedBy(string(c.mode), c.tool); got != c.blocked {
			t.Errorf("%s blocks %s = %v, want %v", c.mode, c.tool, got, c.blocked)
		}
	}
	for _, tool := range []string{"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch"} {
		if !p.IsReadOnly(tool) {
			t.Errorf("%s is not read-only", tool)
		}
	}
	if p.IsReadOnly("Bash") || p.IsReadOnly("Edit") {
		t.Error("Bash/Edit must not be read-only")
	}
	if _, err := ParseMode("typing"); err == nil {
		t.Error("bad mode accepted")
	}
}

func TestLint(t *testing.T) {
	p := markdown.New()
	def, _ := templates.FS.ReadFile("SESSION-PROTOCOL.md")
	if f := Lint(Parse(p, "default", def), DefaultPolicy()); len(f) != 0 {
		t.Errorf("the default protocol has findings: %v", f)
	}
	bad := []byte("# P\n\n| Req | Step | Evidence |\n|---|---|---|\n| MUST | Orphan rule | `person` |\n\n" +
		"## Session start\n\n| Req | Step | Evidence |\n|---|---|---|\n" +
		"| MUST | Commit the session's changes | `commit` |\n" +
		"| MUST | Summarise the session | `section: Summary` |\n" +
		"| MUST | Edit the changelog | `tool: Edit` |\n" +
		"| MUST | Read the handoff | `file: handoff.md` |\n" +
		"| SHOULD | Read the handoff | `file: handoff.md` |\n" +
		"| MUST | Note the starting commit | `commit` |\n\n" +
		"## Session end\n\n| Req | Step | Evidence |\n|---|---|---|\n" +
		"| MUST | Commit all changes | `commit` |\n" +
		"| MUST | Write handoff.md for the next session | `file: handoff.md` |\n" +
		"| MUST | Call the linter | `tool: [unclosed` |\n")
	findings := Lint(Parse(p, "bad", bad), DefaultPolicy())
	want := map[int]string{
		5:  "unreachable",
		11: "a commit made during the session",
		12: "only `sessionvault end` writes",
		13: "the gate itself blocks that tool",
		14: "which only the end step on line 23 creates",
		15: "duplicate of the start item on line 14",
		24: "can never match",
	}
	got := map[int]string{}
	for _, f := range findings {
		got[f.Line] += f.Message
	}
	for line, frag := range want {
		if !strings.Contains(got[line], frag) {
			t.Errorf("line %d: want a finding containing %q, got %q", line, frag, got[line])
		}
	}
	if len(findings) != len(want) {
		t.Errorf("findings = %v", findings)
	}
	t.Run("corpus", func(t *testing.T) {
		c := corpus(t)
		for _, f := range []string{filepath.Join(c, "history", "SESSION-PROTOCOL@bdacb6b19dcb.md"), filepath.Join(c, ".agents", "SESSION-PROTOCOL.md")} {
			src, _ := os.ReadFile(f)
			for _, fd := range Lint(Parse(p, f, src), DefaultPolicy()) {
				t.Logf("%s: %s", filepath.Base(f), fd)
			}
		}
	})
}
