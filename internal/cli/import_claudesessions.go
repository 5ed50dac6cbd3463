package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/importer"
)

func (a *app) importClaudeSessionsCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "claude-sessions DIR",
		Short: "Import Claude Code session notes (.claude/sessions, from /session-start … /session-end) as archived sessions",
		Long: `Reads the session notes the /session-start, /session-update and /session-end
slash commands write in .claude/sessions/ (files named YYYY-MM-DD-HHMM-name.md
or YYYY-MM-DD-name.md), in the variants people keep.
DIR is that folder, a .claude folder or a repository holding it, or another
folder of such notes (e.g. ~/.claude/sessions/<project>). Each note becomes one
archived session, sessions/<file name>.md, listed in session-history.md — one
commit:

  started      the first time stated with a clock: the file name, the title, a
               Started/Start/Date line ("**Started**: …", "Started: …",
               "- Started: …"), the front matter's date/started/created; else
               the first date alone (00:00), else the time the note was first
               committed — both marked in the record's "estimated" property
  objective    the session's name and its goals (or its Objective/Goal/Issue line)
  updates      one per "### Update - <time>" block: its summary line, at its
               time; without such blocks, the note's dated lines, else the
               items of its Notes/Progress sections
  checklists   Todo/Tasks sections' "- [ ]" items, kept as checklists
  summary      the session-end summary's key accomplishments (ended sessions);
               what it lists as not completed becomes the next steps
  ended        the summary's end time, the start plus its duration, an Ended
               line or the front matter's ended/completed (a date alone: the
               end of that day, marked estimated)
  Original text  the whole note, byte for byte (also notes started and never
               ended, in other languages, with CRLF line endings)

Left out, with the reason: .current-session (the pointer to the active session,
whose record says it was active), files that are not .md, empty files, files
that neither are named with a date nor state one nor look like a session, and
notes over 9 MB. A run that finds notes and imports none fails, with the
reasons counted. DIR is only read. Idempotent: a second run finds every session
unchanged; a note that grew since (more updates, then the end) rewrites its
record when
nobody edited the record, and is skipped with the reason otherwise.`,
		Example: `  sessionvault import claude-sessions ~/code/shop
  sessionvault import claude-sessions ~/code/shop/.claude/sessions --dry-run`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, loc, err := a.serviceWithZone()
			if err != nil {
				return err
			}
			dir := argv[0]
			logs, skipped, err := importer.ScanClaudeSessions(dir, loc, a.progress("session notes read"))
			if err != nil {
				return importSourceError(err, dir, "Claude Code session notes", "a .claude/sessions folder, or a repository holding one")
			}
			rep, res, err := a.importRecords(svc, "Claude Code session notes", dir, logs, skipped, dryRun)
			if err != nil {
				return err
			}
			files := len(logs) + len(skipped)
			text := importText(fmt.Sprintf("Claude Code sessions from %s: %d files, %d sessions imported, %d updated, %d unchanged, %d skipped",
				dir, files, rep.Sessions, rep.Updated, rep.Unchanged, len(rep.Skipped)), rep, dryRun)
			return a.emit(map[string]any{"files": files, "report": rep, "git": res}, text)
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "read the notes and report what would be imported, writing nothing")
	return c
}
