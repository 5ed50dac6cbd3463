package protocol

import (
	"fmt"
	"regexp"
	"strings"
)

// Finding is one problem lint found in a protocol.
type Finding struct {
	Line     int    `json:"line"`
	Severity string `json:"severity"` // "error": a MUST that can never be met in order; "warning": likely a mistake
	Message  string `json:"message"`
}

func (f Finding) String() string {
	return fmt.Sprintf("line %d: %s: %s", f.Line, f.Severity, f.Message)
}

// endOnlySections are written only by `sessionvault end`.
var endOnlySections = map[string]bool{"summary": true, "next steps": true}

// Lint checks that every MUST of the protocol can be satisfied in order, from
// the start gate to the end: while the start gate is open the agent has only
// read-only tools and sessionvault's own commands, so a start MUST that
// needs work those cannot do (a new commit, a tool the gate blocks, a section
// only `end` writes, a file an end step creates) is a contradiction. It also
// reports duplicate items and items no gate ever checks (requirement tables
// outside the start and end sections, tool patterns that match nothing).
func Lint(p *Protocol, policy Policy) []Finding {
	var out []Finding
	add := func(line int, sev, format string, args ...any) {
		out = append(out, Finding{Line: line, Severity: sev, Message: fmt.Sprintf(format, args...)})
	}
	for _, l := range p.Unphased {
		add(l, "warning", "requirement outside the session start and end sections: no gate ever checks it (unreachable)")
	}
	for _, phase := range []struct {
		name  Phase
		items []Requirement
	}{{Start, p.Start}, {End, p.End}} {
		seen := map[string]int{}
		for _, r := range phase.items {
			key := strings.ToLower(strings.Join(strings.Fields(r.Step), " "))
			if first, dup := seen[key]; dup {
				add(r.Line, "warning", "duplicate of the %s item on line %d (%q)", phase.name, first, r.Step)
			} else {
				seen[key] = r.Line
			}
			if r.Check.Kind == KindTool {
				if _, err := regexp.Compile(r.Check.Arg); err != nil || r.Check.Arg == "" {
					add(r.Line, "error", "tool pattern %q can never match a tool name (unreachable)", r.Check.Arg)
				}
			}
		}
	}
	for _, r := range p.Start {
		if !Blocking(r.Level) {
			continue
		}
		c := r.Check
		switch {
		case c.Kind == KindSection && endOnlySections[strings.ToLower(c.Arg)]:
			add(r.Line, "error", "the start gate needs the %s section, which only `sessionvault end` writes", c.Arg)
		case c.Kind == KindCommit && (strings.EqualFold(c.Arg, "new") || makesCommit(r.Step)):
			add(r.Line, "error", "the start gate needs a commit made during the session, but editing tools stay blocked until the start gate passes%s", producedBy(p.End, KindCommit, ""))
		case c.Kind == KindTool && c.Arg != "" && !policy.IsReadOnly(c.Arg) && !toolAllowedBeforeGate(c.Arg):
			add(r.Line, "error", "the start gate needs a %s call, but the gate itself blocks that tool until it passes", c.Arg)
		case c.Kind == KindFile && c.Arg != "":
			if by := producedBy(p.End, KindFile, c.Arg); by != "" {
				add(r.Line, "error", "the start gate needs %s%s", c.Arg, by)
			}
		}
	}
	return out
}

// toolAllowedBeforeGate reports whether a tool pattern names something the
// agent can call before the start gate passes: read-only tools are handled
// by the caller; sessionvault's MCP tools are allowed.
func toolAllowedBeforeGate(pattern string) bool {
	return strings.HasPrefix(pattern, "mcp__sessionvault")
}

// makesCommit reports whether a step's text says it makes a commit.
func makesCommit(step string) bool {
	s := strings.ToLower(strings.TrimSpace(step))
	return strings.HasPrefix(s, "commit ") || strings.HasPrefix(s, "push ")
}

// producedBy names the end step that produces what a start item needs, as
// ", which only the end step on line N makes (STEP)", or "".
func producedBy(end []Requirement, kind Kind, arg string) string {
	for _, r := range end {
		step := strings.ToLower(r.Step)
		switch kind {
		case KindCommit:
			if r.Check.Kind == KindCommit && makesCommit(step) {
				return fmt.Sprintf(", which only the end step on line %d makes (%q)", r.Line, r.Step)
			}
		case KindFile:
			if strings.Contains(step, strings.ToLower(arg)) && regexp.MustCompile(`\b(create|write|generate|produce|export)`).MatchString(step) {
				return fmt.Sprintf(", which only the end step on line %d creates (%q)", r.Line, r.Step)
			}
		}
	}
	return ""
}
