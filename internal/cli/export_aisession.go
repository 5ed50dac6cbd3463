package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sessionvault/sessionvault/internal/features"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
)

func (a *app) exportAISessionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ai-session DIR",
		Short: "Write the project's features and command history as an .ai-session folder",
		Long: `Writes DIR in the .ai-session layout, version 1.0 (which import
ai-session reads back): active-features.yaml (every feature, its status, started_at and
last_active), and per feature <feature-id>/implementation-plan.yaml (from its
note), <feature-id>/history.jsonl (the commands recorded while it was the
session's active feature, oldest first, with the layout's fields in its
order) and <feature-id>/state.yaml (version "1.0"; derived from the plan and the
history), and README.md. Commands recorded with no active feature have no place
in that layout and are counted, not written.

The output depends only on the notes (sorted, fixed formatting, no clock): a
second export of an unchanged vault is byte-identical. Files of DIR that are not
part of the layout are left alone. Read it back with ` + "`import ai-session DIR`" + `.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			dir := argv[0]
			if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
				return errs.New(errs.ExportFailed, "%s is a file; give a folder to export to", dir).With("path", dir)
			}
			sess, rep, err := features.New(svc).ExportAISession(project)
			if err != nil {
				return err
			}
			files := sess.Files()
			names := make([]string, 0, len(files))
			for name := range files {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return errs.Wrap(errs.ExportFailed, err, "exporting to "+dir)
				}
				if err := os.WriteFile(p, files[name], 0o644); err != nil {
					return errs.Wrap(errs.ExportFailed, err, "exporting to "+dir)
				}
			}
			text := fmt.Sprintf("exported %d feature(s) and %d history entries of project %s to %s (%d files)", rep.Features, rep.Entries, project, dir, len(names))
			if rep.Unassigned > 0 {
				text += fmt.Sprintf("\n%d history entries recorded with no active feature are not in the export (the layout keeps history per feature)", rep.Unassigned)
			}
			if len(rep.Problems) > 0 {
				var lines []string
				for _, p := range rep.Problems {
					lines = append(lines, "  "+p.String())
				}
				text += "\nleft out, as they cannot be read back:\n" + strings.Join(lines, "\n")
			}
			return a.emit(map[string]any{"dir": dir, "files": names, "report": rep}, text)
		},
	}
}
