package policy

import (
	"regexp"
	"strings"
)

// Table is the vault's part of the tool policy (config: read_only_tools and
// mode_blocks): the tools that are always allowed, and per mode the tools it
// blocks. Tool names are matched as whole-name regular expressions (Claude
// Code hooks: tool_name, e.g. "Edit", "mcp__serena__find_symbol"); a plain
// name is compared as a string.
type Table struct {
	ReadOnly []string            `yaml:"read_only_tools" json:"read_only_tools"`
	Blocks   map[string][]string `yaml:"mode_blocks" json:"mode_blocks"`
}

// DefaultTable is the table used when the config gives none.
func DefaultTable() Table {
	return Table{
		ReadOnly: []string{"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "NotebookRead", "BashOutput"},
		Blocks: map[string][]string{
			ModeAnalysis: {"Edit", "MultiEdit", "Write", "NotebookEdit", "Bash"},
			ModePlanning: {"Edit", "MultiEdit", "Write", "NotebookEdit"},
			ModeCoding:   {},
			ModeDisabled: {},
		},
	}
}

// TableFrom is the default table with a vault's settings over it:
// readOnly replaces the read-only tools when not empty, and each mode of
// modeBlocks (names as in the config, any case) replaces that mode's list;
// a key that names no mode is ignored.
func TableFrom(readOnly []string, modeBlocks map[string][]string) Table {
	t := DefaultTable()
	if len(readOnly) > 0 {
		t.ReadOnly = readOnly
	}
	for m, tools := range modeBlocks {
		switch mode := strings.ToLower(strings.TrimSpace(m)); mode {
		case ModeAnalysis, ModePlanning, ModeCoding, ModeDisabled:
			t.Blocks[mode] = tools
		}
	}
	return t
}

// IsReadOnly reports whether tool is read-only: always allowed.
func (t Table) IsReadOnly(tool string) bool { return matchAny(t.ReadOnly, tool) }

// BlockedBy reports whether mode blocks tool.
func (t Table) BlockedBy(mode, tool string) bool { return matchAny(t.Blocks[mode], tool) }

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
