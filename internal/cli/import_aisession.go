package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/sessionvault/sessionvault/internal/features"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
)

func (a *app) importAISessionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ai-session DIR",
		Short: "Import an .ai-session folder: feature notes and their command history",
		Long: `Reads DIR, an .ai-session folder (active-features.yaml and per
feature implementation-plan.yaml, history.jsonl, state.yaml), without changing
it, and writes in one commit: a feature note for each feature the project lacks
(status, times and plan as the folder has them), the tasks an existing feature's
plan lacks (a task the vault has otherwise is kept and reported), and the
history entries the vault does not hold yet, in a command log per feature,
sessions/import-<feature-id>/commands.md. state.yaml is checked (version 1.0)
and otherwise derived, not imported.

Missing files are fine; a file or line that cannot be read is skipped and named
with its line. Idempotent: importing the same folder again changes nothing, and
an export of this vault's features imported back (into this vault or another)
exports byte-identically.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			dir := argv[0]
			sess, skipped, err := importer.ReadAISession(dir)
			if errors.Is(err, fs.ErrNotExist) {
				return errs.New(errs.AiSessionNotFound, "%s does not exist; give the .ai-session folder (the one holding active-features.yaml)", dir).With("path", dir)
			}
			if err != nil {
				return errs.Wrap(errs.AiSessionNotFound, err, "reading "+dir)
			}
			rep, res, err := features.New(svc).ImportAISession(project, sess)
			if err != nil {
				return errs.Wrap(errs.ImportFailed, err, "importing "+dir)
			}
			var all []features.AISkipped
			for _, s := range skipped {
				all = append(all, features.AISkipped{Path: s.Path, Reason: s.Reason})
			}
			rep.Skipped = append(all, rep.Skipped...)
			if rep.Skipped == nil {
				rep.Skipped = []features.AISkipped{}
			}
			text := fmt.Sprintf(".ai-session from %s: %d feature(s) imported, %d already in the vault (%d task(s) added), %d history entries imported, %d already present, %d skipped",
				dir, rep.Features, rep.Existing, rep.TasksAdded, rep.Entries, rep.Duplicates, len(rep.Skipped))
			text += skippedText(len(rep.Skipped), func(i int) (string, string) { return rep.Skipped[i].Path, rep.Skipped[i].Reason })
			return a.emit(map[string]any{"report": rep, "git": res}, text)
		},
	}
}
