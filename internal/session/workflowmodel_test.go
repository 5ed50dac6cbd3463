package session

import (
	"strings"
	"testing"
)

// Every workflow line the engine writes reads back to what it wrote, and
// formats again to the same bytes; a person's edit that keeps the format is
// read as the new value; what breaks it is not read (a Problem).
func TestWorkflowLinesRoundTrip(t *testing.T) {
	lines := []string{
		"- 2026-11-25T10:00:00Z · **analyst** · in_progress ^a-1",
		"- 2026-11-25T10:00:00Z · **analyst** · in_progress · **in:** Study the grammar · **in artifacts:** a.md; b.md ^a-1",
		"- 2026-11-25T10:00:00Z → 2026-11-25T10:20:00Z · **implementer** · completed · **in:** x · **out:** Parser built · **artifacts:** a.go; b.go · **recommendations:** fuzz it; later · **blockers:** CI · **from:** analyst · **to:** qa · **reason:** ready ^a-3-laptop",
		"- 2026-11-25T10:00:00Z → 2026-11-25T10:20:00Z · **devops** · failed · **out:** deploy broke ^a-12",
		"- 2026-11-25T10:20:00Z · **implementer** → **qa** · pending · **reason:** ready for tests · **context:** run it · **artifacts:** a.go ^h-1",
		"- 2026-11-25T10:20:00Z · **implementer** → **qa** · accepted ^h-2",
		"- 2026-11-25T10:30:00Z · **qa** · approve · confidence 0.8 · **reasoning:** tests pass · **conditions:** lint; docs · **blockers:** none ^v-1",
		"- 2026-11-25T10:30:00Z · **critic** · needs_revision · confidence 1 · **reasoning:** no ^v-2",
		"- 2026-11-25T10:40:00Z · coding → analysis ^m-1",
		"- 2026-11-25T10:40:00Z · analysis → disabled · gates off: the person's escape hatch ^m-2",
	}
	for _, l := range lines {
		var got string
		switch id := string(IdTail([]byte(l))); id[0] {
		case 'a':
			a, ok := parseInvocation(l)
			if !ok {
				t.Fatalf("not read: %s", l)
			}
			got = FormatInvocation(a)
		case 'h':
			h, ok := parseHandoff(l)
			if !ok {
				t.Fatalf("not read: %s", l)
			}
			got = FormatHandoff(h)
		case 'v':
			v, ok := parseVerdict(l)
			if !ok {
				t.Fatalf("not read: %s", l)
			}
			got = FormatVerdict(v)
		case 'm':
			m, ok := parseModeChange(l)
			if !ok {
				t.Fatalf("not read: %s", l)
			}
			got = formatModeChange(m)
		}
		if got != l {
			t.Errorf("round trip:\n got %s\nwant %s", got, l)
		}
	}

	a, _ := parseInvocation(lines[2])
	if a.Agent != "implementer" || a.CompletedAt == nil || a.Output.Summary != "Parser built" || strings.Join(a.Output.Recommendations, "|") != "fuzz it|later" ||
		a.HandoffFrom != "analyst" || a.HandoffTo != "qa" || a.HandoffReason != "ready" || a.ID != "a-3-laptop" {
		t.Errorf("parsed %+v", a)
	}
	if a, _ := parseInvocation(lines[0]); a.Output != nil || len(a.Input.Artifacts) != 0 || a.Input.Artifacts == nil {
		t.Errorf("an invocation in progress without output: %+v", a)
	}
	// A person's rewording is read back; a legacy mode line (no id) too.
	if a, ok := parseInvocation(strings.Replace(lines[1], "Study the grammar", "Study the grammar · and the AST", 1)); !ok || a.Input.Prompt != "Study the grammar · and the AST" {
		t.Errorf("a person's prompt with a separator in it: %v %+v", ok, a)
	}
	if m, ok := parseModeChange("- 2026-11-23T10:30:00Z · coding → analysis"); !ok || m.From != "coding" || m.Mode != "analysis" || m.ID != "" {
		t.Errorf("a mode line without id: %v %+v", ok, m)
	}
	for _, bad := range []string{
		"- 2026-11-25T10:30:00Z · **qa** · approve · confidence 1.5 · **reasoning:** x ^v-3",
		"- 2026-11-25T10:30:00Z · **qa** · perhaps · confidence 0.5 ^v-3",
		"- yesterday · **qa** · in_progress ^a-4",
		"- 2026-11-25T10:00:00Z · **analyst** · running ^a-5",
	} {
		_, okV := parseVerdict(bad)
		_, okA := parseInvocation(bad)
		if okV || okA {
			t.Errorf("read a broken line: %s", bad)
		}
	}
	// Lists: a ";" inside an item is written as ",", so it reads back whole.
	if got := joinList([]string{"a; b", "", " c "}); got != "a, b; c" {
		t.Errorf("joinList = %q", got)
	}
}
