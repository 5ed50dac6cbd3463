// Package sessiontest makes vaults for the tests of the session service and
// of the capabilities built on it (tasks, features, workflow, reconcile,
// imports): a real git repository on disk, set up the way `sessionvault
// init` sets one up, and the scenario scripts' shared commands. It imports
// no domain package, so that the session package's own tests can use it too.
package sessiontest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Gitignore is the .gitignore `sessionvault init` writes.
const Gitignore = `# sessionvault: rebuildable state (locks, heartbeats, journal)
.sessionvault/state/
# Obsidian: per-device layout and the trash
.obsidian/workspace*.json
.trash/
`

// MakeVault creates a vault in root the way `sessionvault init --project
// project` does: the git repository, the settings commit (default_project
// project; none when project is ""), then initProject, which makes the
// project's notes (the caller passes the session service's InitProject; nil
// or project "" makes none). Errors are those of git, the file system and
// initProject.
func MakeVault(root, project string, initProject func(v *vault.Vault, project string) error) error {
	if err := os.MkdirAll(filepath.Join(root, config.Dir), 0o755); err != nil {
		return err
	}
	if _, err := history.Init(root); err != nil {
		return err
	}
	v, err := vault.Open(root)
	if err != nil {
		return err
	}
	cfg := config.Render(project)
	if project == "" {
		cfg = []byte(strings.Replace(string(cfg), "default_project: \n", "", 1))
	}
	if _, err := v.Transact(func(tx *vault.Tx) (vault.Change, error) {
		if !tx.Exists(config.File) {
			if err := tx.Write(config.File, cfg); err != nil {
				return vault.Change{}, err
			}
		}
		if !tx.Exists(".gitignore") {
			if err := tx.Write(".gitignore", []byte(Gitignore)); err != nil {
				return vault.Change{}, err
			}
		}
		return vault.Change{Operation: "init", Summary: "vault settings"}, nil
	}); err != nil {
		return err
	}
	if project == "" || initProject == nil {
		return nil
	}
	if v, err = vault.Open(root); err != nil {
		return err
	}
	return initProject(v, project)
}

// Replace is the scenario scripts' `replace FILE OLD NEW` command, a
// person's edit: every match of the regular expression OLD (multi-line
// mode) in FILE becomes NEW, with \n, \t and \r in NEW unescaped; a script
// whose OLD does not occur fails.
func Replace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace FILE OLD-REGEXP NEW")
	}
	p := ts.MkAbs(args[0])
	data, err := os.ReadFile(p)
	ts.Check(err)
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	if !re.Match(data) {
		ts.Fatalf("replace: %q does not occur in %s", args[1], args[0])
	}
	ts.Check(os.WriteFile(p, re.ReplaceAll(data, []byte(Unescape(args[2]))), 0o644))
}

// Unescape turns a script argument's \n, \t and \r into the characters.
func Unescape(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\r`, "\r").Replace(s)
}
