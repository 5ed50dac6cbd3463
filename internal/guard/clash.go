package guard

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/integrity"
)

// ClashFile is the per-machine state file (under .sessionvault/state)
// holding the notice for an agent whose session is no longer the current
// one (see Facts.Clash): written when the facts find it, removed when the
// agent is handed the current state. Every PreToolUse answer, the reading
// calls decided without the facts included, carries it while it is there.
func ClashFile(project string) string { return "clash-" + project }

// ClashNotice is the notice in project's ClashFile under root (the vault),
// "" when there is none: one stat for the usual case.
func ClashNotice(root, project string) string {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(integrity.StateDir), ClashFile(project)))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
