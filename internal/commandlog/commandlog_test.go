package commandlog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Every value reads back from its code span exactly, whatever backticks,
// spaces, backslashes and control characters it holds.
func TestCodeSpanReadsBack(t *testing.T) {
	for _, v := range []string{"go test ./...", "`", "``a``", " a ", "  ", "a\\nb", "line\nbreak\r\ttab", `C:\new\table`, "ends with \\", "é · ünïcode `x`"} {
		span := CodeSpan(v)
		got, rest, ok := ReadCodeSpan(span + " · more")
		if !ok || got != v || rest != " · more" {
			t.Errorf("%q: span %s reads back as %q, rest %q, ok %v", v, span, got, rest, ok)
		}
		if strings.ContainsAny(span, "\n\r") {
			t.Errorf("%q: span %q holds a line break", v, span)
		}
	}
}

// A line renders its fields in the documented order, and Last finds its id
// and time at the end of a log, past lines that are not entries.
func TestLineAndLast(t *testing.T) {
	d := int64(1234)
	l := Line{Time: time.Date(2025, 1, 9, 10, 0, 0, 0, time.UTC), Status: Success, Command: "go test ./...", Arguments: `{"timeout":120000}`,
		Model: "sonnet", Agent: "Explore", Task: "[[demo/tasks/x|x]]", DurationMs: &d, ID: "h-7-laptop"}
	want := "- 2025-01-09T10:00:00Z · success · `go test ./...` · **args:** `{\"timeout\":120000}` · **model:** sonnet · **agent:** Explore · **task:** [[demo/tasks/x|x]] · **duration:** 1234 ms ^h-7-laptop"
	if got := l.String(); got != want {
		t.Errorf("line\n%s\nwant\n%s", got, want)
	}
	tail := "---\ntype: command-log\n---\n\n" + want + "\n- not an entry\n\n"
	n, at, ok := Last([]byte(tail))
	if !ok || n != 7 || !at.Equal(l.Time) {
		t.Errorf("Last: %d %v %v; want 7 at %v", n, at, ok, l.Time)
	}
	if _, _, ok := Last([]byte("---\ntype: command-log\n---\n")); ok {
		t.Error("Last found an entry in a log without one")
	}
}

// ToolCommand takes Bash's command line out of its input and writes the
// rest as JSON with sorted keys; an MCP tool's command is its name.
func TestToolCommand(t *testing.T) {
	c, a := ToolCommand("Bash", json.RawMessage(`{"description":"Run <tests>","command":"go test ./...","timeout":120000}`))
	if c != "go test ./..." || a != `{"description":"Run <tests>","timeout":120000}` {
		t.Errorf("Bash: %q %q", c, a)
	}
	c, a = ToolCommand("mcp__serena__find_symbol", json.RawMessage(`{}`))
	if c != "mcp__serena__find_symbol" || a != "" {
		t.Errorf("MCP: %q %q", c, a)
	}
	c, _ = ToolCommand("Bash", json.RawMessage(`{"command":"`+strings.Repeat("é", HookCut)+`"}`))
	if len(c) > HookCut+30 || !strings.HasSuffix(c, " bytes cut]") {
		t.Errorf("a long command is not cut: %d bytes, ends %q", len(c), c[len(c)-20:])
	}
}

// The state files the hooks share: the model of a Claude Code session, and
// when the logs were last committed.
func TestStateFiles(t *testing.T) {
	rec := ModelRecord("s-1", "claude-opus-4-1")
	if RecordedModel(rec, "s-1") != "claude-opus-4-1" || RecordedModel(rec, "s-2") != "" {
		t.Errorf("model record %q", rec)
	}
	now := time.Now()
	if CommitDue(CommittedRecord(now.Add(-time.Minute)), now) || !CommitDue(CommittedRecord(now.Add(-CommitEvery-time.Second)), now) || !CommitDue(nil, now) {
		t.Error("CommitDue: a commit a minute ago is not due; one past CommitEvery, or none, is")
	}
	if Identifier("claude opus/4") != "claude-opus/4" || Identifier("--x") != "x" {
		t.Errorf("Identifier: %q %q", Identifier("claude opus/4"), Identifier("--x"))
	}
}
