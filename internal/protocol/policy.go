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

	compiled *compiledPolicy // set by Compile; nil compiles on every match
}

// compiledPolicy holds a Policy's patterns compiled once (a hook decides on
// every tool call).
type compiledPolicy struct {
	readOnly []*regexp.Regexp
	blocks   map[Mode][]*regexp.Regexp
}

// Compile returns p with its patterns compiled, for matching many times.
// A pattern that is not a valid regular expression matches its own text
// exactly.
func (p Policy) Compile() Policy {
	c := &compiledPolicy{readOnly: compileAll(p.ReadOnly), blocks: map[Mode][]*regexp.Regexp{}}
	for m, pats := range p.Blocks {
		c.blocks[m] = compileAll(pats)
	}
	p.compiled = c
	return p
}

func compileAll(patterns []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(patterns))
	for _, pat := range patterns {
		re, err := regexp.Compile("^(?:" + pat + ")$")
		if err != nil {
			re = regexp.MustCompile("^" + regexp.QuoteMeta(pat) + "$")
		}
		out = append(out, re)
	}
	return out
}

func matchCompiled(res []*regexp.Regexp, tool string) bool {
	for _, re := range res {
		if re.MatchString(tool) {
			return true
		}
	}
	return false
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
func (p Policy) IsReadOnly(tool string) bool {
	if p.compiled != nil {
		return matchCompiled(p.compiled.readOnly, tool)
	}
	return matchAny(p.ReadOnly, tool)
}

// BlockedBy reports whether mode blocks tool.
func (p Policy) BlockedBy(mode Mode, tool string) bool {
	if p.compiled != nil {
		return matchCompiled(p.compiled.blocks[mode], tool)
	}
	return matchAny(p.Blocks[mode], tool)
}
