package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sessionvault/sessionvault/internal/imports"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/session"
)

func (a *app) importMemoryBankCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "memory-bank DIR",
		Short: "Import a Cline, Roo Code or Kilo Code memory bank as notes of the project, byte for byte",
		Long: `Copies the memory bank in DIR into the project's memory-bank/ folder, each note
byte for byte under its own name (sub-folders too), in one commit. DIR is a
memory bank folder (memory-bank/, cline_docs/, or any folder holding one of the
core notes), or a repository holding memory-bank/ (Cline, Roo Code),
.kilocode/rules/memory-bank/ or .kilo/rules/memory-bank/ (Kilo Code); every one
found is imported. Core notes: projectbrief.md, productContext.md,
activeContext.md, systemPatterns.md, techContext.md, progress.md (Kilo: brief.md,
product.md, context.md, architecture.md, tech.md), tasks.md, and any other .md.

Left out, with the reason: files that are not .md, hidden files, notes that are
not UTF-8 text or whose front matter does not parse, names a vault path cannot
hold, and notes the vault already has with other bytes (the vault's copy is
kept: nothing is overwritten). DIR is only read. Idempotent: a second run finds
every note unchanged.

The resume prompt (the SessionStart hook, the MCP context, recovery) then shows
the first lines of the active context (activeContext.md or context.md) and of
progress.md, with their paths in the vault.`,
		Example: `  sessionvault import memory-bank ~/code/shop
  sessionvault import memory-bank ~/code/shop/.kilocode/rules/memory-bank --dry-run --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			dir := argv[0]
			mb, err := importer.ScanMemoryBank(dir)
			if err != nil {
				return importSourceError(err, dir, "memory bank", "a memory-bank folder, or a repository holding memory-bank/ or .kilocode/rules/memory-bank/")
			}
			rep, res, err := imports.New(svc).ImportMemoryBank(project, mb, dryRun, a.progress("memory bank notes"))
			if err != nil {
				return errs.Wrap(errs.ImportFailed, err, "importing the memory bank from "+dir)
			}
			text := fmt.Sprintf("memory bank from %s (%s): %d found, %d imported, %d unchanged, %d skipped",
				dir, strings.Join(rep.Roots, ", "), rep.Found, rep.Imported, rep.Unchanged, len(rep.Skipped))
			if rep.Imported+rep.Unchanged > 0 {
				text += "\nnotes in " + project + "/" + session.MemoryBankDir + "/"
			}
			text += skippedText(len(rep.Skipped), func(i int) (string, string) { return rep.Skipped[i].Path, rep.Skipped[i].Reason })
			if dryRun {
				text += "\ndry run: nothing was written"
			}
			return a.emit(map[string]any{"report": rep, "git": res}, text)
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "read the memory bank and report what would be imported, writing nothing")
	return c
}

// importSourceError maps a source an import cannot read to E1655 (missing,
// or holding nothing of the kind) naming what DIR must be; other errors to
// E1653.
func importSourceError(err error, dir, what, want string) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errs.New(errs.ImportSourceNotFound, "%s does not exist; give %s", dir, want).With("path", dir)
	case errors.Is(err, importer.ErrNoMemoryBank), errors.Is(err, importer.ErrNoSessionsFolder):
		return &errs.Error{Code: errs.ImportSourceNotFound, Message: fmt.Sprintf("no %s found: %v; give %s", what, err, want), Err: err, Details: map[string]any{"path": dir}}
	}
	return errs.Wrap(errs.ImportFailed, err, "reading "+dir)
}
