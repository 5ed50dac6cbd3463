package protocol

import (
	"strings"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// Kind is how a requirement's evidence is verified: the engine checks it
// itself; the agent's word alone never satisfies a MUST.
type Kind string

// Evidence kinds. A protocol names one in its Evidence column as a code span:
// `file: NAME`, `commit`, `run: COMMAND`, `tool: PATTERN`, `section: NAME`,
// `blockers` or `person`. A cell without one is free text: only a person's tick
// satisfies it.
const (
	KindFile    Kind = "file"    // a file exists; its SHA-256 is recorded when the evidence is recorded
	KindCommit  Kind = "commit"  // a commit SHA that exists in the code repository; `commit: new` = made during the session
	KindRun     Kind = "run"     // a command from the protocol that exits 0
	KindTool    Kind = "tool"    // a tool call seen by the PostToolUse hook, by tool-name pattern
	KindSection Kind = "section" // a section of the current-state note is non-empty
	// KindBlockers: the session has no open blocker (each one resolved).
	KindBlockers Kind = "blockers"
	KindPerson   Kind = "person" // a person ticked it in Obsidian
	KindText     Kind = ""       // free text: a person's tick only
)

// Check is a requirement's parsed evidence rule.
type Check struct {
	Kind Kind   `json:"kind"`
	Arg  string `json:"arg,omitempty"` // file name, command, tool pattern or section name
}

var directiveRe = lazyregexp.New("`\\s*(file|commit|run|tool|section|blockers|person)\\s*(?::\\s*([^`]*))?`")

// ParseCheck reads the evidence rule from an Evidence cell.
func ParseCheck(cell string) Check {
	m := directiveRe().FindStringSubmatch(cell)
	if m == nil {
		return Check{}
	}
	return Check{Kind: Kind(m[1]), Arg: strings.TrimSpace(m[2])}
}

// Verifiable reports whether the engine can verify the check itself (as
// opposed to needing a person's tick).
func (c Check) Verifiable() bool {
	switch c.Kind {
	case KindFile, KindCommit, KindRun, KindTool, KindSection, KindBlockers:
		return true
	}
	return false
}

// Blocking reports whether a requirement level must hold for a gate to pass.
func Blocking(level string) bool { return level == "MUST" || level == "MUST NOT" }
