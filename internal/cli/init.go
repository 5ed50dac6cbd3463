package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/serena"
	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/shellquote"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// vaultGitignore keeps the engine's rebuildable state and Obsidian's
// per-device files out of the vault's history.
const vaultGitignore = `# sessionvault: rebuildable state (locks, heartbeats, journal)
.sessionvault/state/
# Obsidian: per-device layout and the trash
.obsidian/workspace*.json
.trash/
`

func (a *app) initCommand() *cobra.Command {
	var serenaRepo string
	c := &cobra.Command{
		Use:   "init [DIR] --project NAME [--serena REPO]",
		Short: "Create a vault (or add a project to one) and commit it",
		Long: `Creates the vault in DIR (default: --vault, else the current folder): a git
repository, .sessionvault/config.yaml, the project folder with the four
canonical notes, and a default SESSION-PROTOCOL.md, all in one commit.

With --serena REPO, REPO/.serena/memories becomes a link to the project folder,
so Serena's read_memory("session-current-state") returns the canonical note.

Re-running it on an existing vault is safe: files that exist are kept, and if
nothing is missing nothing changes and no commit is made.`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			if a.project == "" {
				return errs.New(errs.InvalidCommand, "--project NAME is required: the project folder to create in the vault")
			}
			if err := vault.CheckName("project", a.project); err != nil {
				return err
			}
			dir := a.vaultDir
			if len(argv) == 1 {
				dir = argv[0]
			}
			if dir == "" {
				dir = "."
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(abs, config.Dir), 0o755); err != nil {
				return fmt.Errorf("creating %s: %w", abs, err)
			}
			createdRepo, err := history.Init(abs)
			if err != nil {
				return errs.Wrap(errs.GitWriteFailed, err, "creating the vault's git repository in "+abs)
			}
			v, err := vault.Open(abs)
			if err != nil {
				return err
			}
			adopted, adoptedFiles := "", 0
			if createdRepo {
				if adopted, adoptedFiles, err = adoptExisting(v); err != nil {
					return err
				}
			}
			res, createdHere, err := writeVaultSettings(v, a.project)
			if err != nil {
				return err
			}
			if v, err = vault.Open(abs); err != nil {
				return err
			}
			if createdHere {
				// The vault's first clone: its ids keep the plain shapes.
				if err := v.ClaimPrimary(); err != nil {
					return err
				}
			}
			if _, err := registerMergeDriver(v); err != nil {
				return err
			}
			splitOn, err := splitLargeIndex(abs)
			if err != nil {
				return err
			}
			svc := session.New(v)
			pres, err := svc.InitProject(a.project)
			if err != nil {
				return err
			}
			out := map[string]any{"vault": abs, "project": a.project, "created_repository": createdRepo,
				"commits": nonEmpty(adopted, res.Commit, pres.Commit), "paths": append(res.Paths, pres.Paths...)}
			text := fmt.Sprintf("vault %s: project %s ready", abs, a.project)
			switch n := len(res.Paths) + len(pres.Paths); {
			case n > 0:
				text += fmt.Sprintf(" (%d files committed)", n)
			case adopted == "" && res.PersonCommit == "" && pres.PersonCommit == "":
				text += " (nothing to change)"
			}
			if adopted != "" {
				text += fmt.Sprintf("\nthe %d files already in the folder were committed as yours first (commit %s)", adoptedFiles, adopted[:min(12, len(adopted))])
			}
			if c := firstNonEmpty(res.PersonCommit, pres.PersonCommit); c != "" {
				text += "\nedits made outside sessionvault were committed as yours (commit " + c[:min(12, len(c))] + ")"
			}
			if splitOn > 0 {
				out["split_index"] = true
				text += fmt.Sprintf("\nthe git index holds %d files: git's split index turned on (core.splitIndex = true), so that a commit rewrites a small .git/index instead of the whole index; `git -C %s config core.splitIndex false` turns it off", splitOn, shellquote.Quote(abs))
			}
			if serenaRepo != "" {
				linked, err := serena.Link(serenaRepo, filepath.Join(abs, a.project))
				if err != nil {
					return errs.Wrap(errs.InvalidCommand, err, "--serena")
				}
				out["serena_linked"] = linked
				text += "\n" + filepath.Join(serenaRepo, ".serena", "memories") + " -> " + filepath.Join(abs, a.project)
			}
			return a.emit(out, text)
		},
	}
	c.Flags().StringVar(&serenaRepo, "serena", "", "code repository whose .serena/memories should link to the project folder")
	return c
}

// writeVaultSettings commits the vault's settings that are missing — the
// merge driver's line in .gitattributes, .sessionvault/config.yaml naming
// project as the default, the .gitignore — and reports whether the config
// was made by this call (the vault's first clone).
func writeVaultSettings(v *vault.Vault, project string) (res vault.Result, createdHere bool, err error) {
	res, err = v.Transact(func(tx *vault.Tx) (vault.Change, error) {
		createdHere = !tx.Exists(config.File)
		if attrs, _ := tx.Read(".gitattributes"); !bytes.Contains(attrs, []byte(vault.GitAttributes)) {
			if len(attrs) > 0 && !bytes.HasSuffix(attrs, []byte("\n")) {
				attrs = append(attrs, '\n')
			}
			if err := tx.Write(".gitattributes", append(attrs, vault.GitAttributes...)); err != nil {
				return vault.Change{}, err
			}
		}
		if !tx.Exists(config.File) {
			if err := tx.Write(config.File, config.Render(project)); err != nil {
				return vault.Change{}, err
			}
		}
		if !tx.Exists(".gitignore") {
			if err := tx.Write(".gitignore", []byte(vaultGitignore)); err != nil {
				return vault.Change{}, err
			}
		}
		return vault.Change{Operation: "init", Summary: "vault settings"}, nil
	})
	return res, createdHere, err
}

// adoptExisting commits the files already in a folder that just became a
// vault (a copied vault, an Obsidian vault), as the person's.
func adoptExisting(v *vault.Vault) (string, int, error) {
	var paths []string
	err := filepath.WalkDir(v.Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(v.Root, p)
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel == ".git" || rel == config.StateDir {
				return fs.SkipDir
			}
			return nil
		}
		if e.Type().IsRegular() {
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil || len(paths) == 0 {
		return "", 0, err
	}
	hash, err := v.CommitOutsideEdits(paths)
	return hash, len(paths), err
}

func nonEmpty(v ...string) []string {
	var out []string
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// splitLargeIndex sets core.splitIndex = true in the vault's repository
// when its index holds at least history.SplitIndexFrom entries, is not split, and
// core.splitIndex is not set either way. It returns the number of entries
// when it did, else 0.
func splitLargeIndex(root string) (int, error) {
	r, err := history.Open(root)
	if err != nil {
		return 0, err
	}
	n, split, err := r.IndexEntries()
	if err != nil || split || n < history.SplitIndexFrom || r.SplitIndexSetting() >= 0 {
		return 0, nil // an index this engine cannot read fails the commit that follows, with its reason
	}
	if err := r.EnableSplitIndex(); err != nil {
		return 0, errs.Wrap(errs.GitWriteFailed, err, "turning on git's split index for "+root)
	}
	return n, nil
}
