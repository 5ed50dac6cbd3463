package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/tasks"
)

func (a *app) importBeadsCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "beads FILE|DIR",
		Short: "Import a beads issue tracker (.beads/issues.jsonl): one task note per issue, dependencies as the task graph",
		Long: `Reads beads' issues file FILE, or the one in DIR (a .beads folder, or a
repository holding .beads/issues.jsonl; the older .beads/beads.jsonl too), and
writes one task note per issue, tasks/<id>.md, in one commit:

  name, heading      the issue's title
  status             open → pending, in_progress and hooked → in_progress,
                     blocked and deferred → blocked, closed → completed,
                     tombstone and pinned → archived, any other → blocked
                     (beads_status keeps beads' own); an open or in-progress
                     issue whose defer_until (or its parent's) is still to
                     come → blocked until a re-import after that time, as
                     bd ready hides it (defer_until kept as a property)
  priority           higher first, as task priorities are: P0 (critical) → 4,
                     P1 → 3, … P4 (backlog) → 0 (beads_priority keeps beads')
  properties         issue_type, labels, assignee, external_ref, closed_at,
                     close_reason, source: beads, beads_id
  depends_on         what the issue waits for ("blocks" dependencies), and
                     what its parent epics wait for (inherited_blockers)
  parent             its "parent-child" dependency
  related_to         "related" and "discovered-from" dependencies
                     (discovered_from keeps the latter apart)
  sections           Description, Approach, Acceptance criteria, Notes and
                     Comments: the issue's texts, byte for byte

Then ` + "`task graph`" + ` lists as ready the issues ` + "`bd ready`" + ` lists for the same file:
open or in progress, with no open blocker, and no parent that has one. An id
that is not a valid note name is mapped ("bd-a3f8.1" → tasks/bd-a3f8_1.md).
Lines that are not issues are skipped with FILE:LINE and the reason. FILE is
only read. Idempotent: a second run changes nothing; after beads changed
issues, only their notes are rewritten — a note edited in the vault since the
import wrote it is kept, and its issue skipped with the reason.`,
		Example: `  sessionvault import beads ~/code/shop
  sessionvault import beads ~/code/shop/.beads/issues.jsonl --dry-run`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			const want = "beads' issues file (.beads/issues.jsonl), or the repository or .beads folder holding it"
			file, err := importer.FindBeadsJSONL(argv[0])
			if errors.Is(err, importer.ErrNoBeadsJSONL) {
				return &errs.Error{Code: errs.ImportSourceNotFound, Message: fmt.Sprintf("%v; give %s", err, want), Err: err, Details: map[string]any{"path": argv[0]}}
			}
			if err != nil {
				return importSourceError(err, argv[0], "beads issues", want)
			}
			f, err := os.Open(file)
			if err != nil {
				return importSourceError(err, file, "beads issues", want)
			}
			defer f.Close()
			name := filepath.Base(file)
			issues, skipped, err := importer.ParseBeadsJSONL(name, f)
			if errors.Is(err, importer.ErrNotBeadsJSONL) {
				return &errs.Error{Code: errs.ImportFormatUnknown, Message: fmt.Sprintf("%v; give %s", err, want), Err: err, Details: map[string]any{"path": file}}
			}
			if err != nil {
				return errs.Wrap(errs.ImportFailed, err, "reading "+file)
			}
			rep, res, err := tasks.New(svc).ImportBeads(tasks.BeadsImportOptions{Project: a.project, Source: name, DryRun: dryRun}, issues, a.progress("beads issues"))
			if err != nil {
				return errs.Wrap(errs.ImportFailed, err, "importing beads issues from "+file)
			}
			rep.Skipped = append(skipped, rep.Skipped...)
			if err := noneImported("beads issues", file, rep.Created+rep.Updated+rep.Unchanged, rep.Skipped); err != nil {
				return err
			}
			return a.emit(map[string]any{"file": file, "report": rep, "git": res}, beadsText(file, rep))
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "read the file and list what each issue would become, writing nothing")
	return c
}

// beadsText is the report of an import of file's issues.
func beadsText(file string, rep tasks.BeadsReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "beads issues from %s: %d issues, %d tasks created, %d updated, %d unchanged, %d skipped",
		file, rep.Issues, rep.Created, rep.Updated, rep.Unchanged, len(rep.Skipped))
	if rep.DryRun {
		b.WriteString("\nwould be:")
		for _, n := range rep.Notes {
			if n.Action != tasks.BeadsSkip {
				fmt.Fprintf(&b, "\n  %-9s %s (%s)", n.Action, n.Note, n.ID)
			}
		}
	}
	b.WriteString(skippedText(len(rep.Skipped), func(i int) (string, string) { return rep.Skipped[i].Path, rep.Skipped[i].Reason }))
	if len(rep.Warnings) > 0 {
		b.WriteString("\nwarnings:")
		for _, w := range rep.Warnings {
			b.WriteString("\n  " + w)
		}
	}
	if rep.DryRun {
		b.WriteString("\ndry run: nothing was written")
	}
	return b.String()
}
