package cli

import (
	"fmt"

	"github.com/sessionvault/sessionvault/internal/imports"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
)

func (a *app) importAgentsCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "agents DIR",
		Short: "Import an .agents/sessions tree of markdown and JSON session logs as archived sessions",
		Long: `Reads every session log under DIR (an .agents/sessions folder, or an .agents
folder holding one): markdown logs with metadata lines, checklist tables and
decisions, and JSON logs of several schema versions. Each becomes an archived
session in sessions/<id>.md with its checklists, work log, decisions (each in
decisions/) and outcomes, listed in session-history.md — one commit. Files that
are not session logs are skipped with the reason. Idempotent: a second run
finds every session unchanged. --dry-run lists what would be written, and
writes nothing; a run that finds files and imports none fails, with the
reasons counted.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			logs, skipped, err := importer.Scan(argv[0], a.progress("session logs read"))
			if err != nil {
				return errs.Wrap(errs.ImportFailed, err, "reading session logs from "+argv[0])
			}
			rep, res, err := imports.New(svc).ImportSessionsWith(a.project, logs, imports.ImportOptions{DryRun: dryRun}, a.progress("sessions written"))
			if err != nil {
				return errs.Wrap(errs.ImportFailed, err, "importing session logs")
			}
			rep.Skipped = append(skipped, rep.Skipped...)
			if err := noneImported("session logs", argv[0], rep.Sessions+rep.Updated+rep.Unchanged, rep.Skipped); err != nil {
				return err
			}
			text := importText(fmt.Sprintf("session logs from %s: %d files, %d sessions imported, %d decisions, %d unchanged, %d skipped",
				argv[0], len(logs)+len(skipped), rep.Sessions, rep.Decisions, rep.Unchanged, len(rep.Skipped)), rep, dryRun)
			return a.emit(map[string]any{"files": len(logs) + len(skipped), "report": rep, "git": res}, text)
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "read the logs and report what would be imported, writing nothing")
	return c
}
