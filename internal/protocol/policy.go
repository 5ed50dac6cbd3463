package protocol

import (
	"fmt"
	"strings"

	"github.com/sessionvault/sessionvault/internal/policy"
)

// Mode is what kind of work is allowed now.
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
// (never blocked): the tool policy table of package policy.
type Policy = policy.Table

// DefaultPolicy is the tool policy used when the config gives none.
func DefaultPolicy() Policy { return policy.DefaultTable() }
