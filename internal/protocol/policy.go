package protocol

import (
	"fmt"
	"regexp"
	"strings"
)

// Mode is what kind of work is allowed now (seed 004).
type Mode string

// The modes. Disabled is the person's escape hatch: nothing is blocked.
const (
	Analysis Mode = "analysis"
	Planning Mode = "planning"
	Coding   Mode = "coding"
	Disabled Mode = "disabled"
)

// ParseMode validates a mode name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case Analysis, Planning, Coding, Disabled:
		return m, nil
	}
	return "", fmt.Errorf("%q is not a mode: use analysis, planning, coding or disabled", s)
}

// Policy says which tools each mode blocks and which tools are read-only
// (never blocked). Tool names are matched as whole-name regular expressions
// (Claude Code hooks: tool_name, e.g. "Edit", "mcp__serena__find_symbol").
type Policy struct {
	ReadOnly []string          `yaml:"read_only_tools"`
	Blocks   map[Mode][]string `yaml:"mode_blocks"`
}

// DefaultPolicy is the tool policy used when the config gives none.
func DefaultPolicy() Policy {
	return Policy{
		ReadOnly: []string{"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "NotebookRead", "BashOutput"},
		Blocks: map[Mode][]string{
			Analysis: {"Edit", "MultiEdit", "Write", "NotebookEdit", "Bash"},
			Planning: {"Edit", "MultiEdit", "Write", "NotebookEdit"},
			Coding:   {},
			Disabled: {},
		},
	}
}

func matchAny(patterns []string, tool string) bool {
	for _, p := range patterns {
		if regexp.QuoteMeta(p) == p {
			// A plain tool name (most patterns): no regular expression to
			// compile (a hook process decides once and exits).
			if p == tool {
				return true
			}
			continue
		}
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			if p == tool {
				return true
			}
			continue
		}
		if re.MatchString(tool) {
			return true
		}
	}
	return false
}

// IsReadOnly reports whether tool is read-only: always allowed.
func (p Policy) IsReadOnly(tool string) bool { return matchAny(p.ReadOnly, tool) }

// BlockedBy reports whether mode blocks tool.
func (p Policy) BlockedBy(mode Mode, tool string) bool { return matchAny(p.Blocks[mode], tool) }
