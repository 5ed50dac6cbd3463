package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
)

// aiderHistory is aider's default --chat-history-file.
const aiderHistory = ".aider.chat.history.md"

func (a *app) importAiderCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "aider FILE",
		Short: "Import an aider chat history (.aider.chat.history.md): one archived session per chat",
		Long: `Reads aider's chat history FILE (or the .aider.chat.history.md in the folder
FILE). Every "# aider chat started at YYYY-MM-DD HH:MM:SS" begins a chat; each
chat becomes one archived session, sessions/YYYY-MM-DD-aider-HHMMSS.md, listed in
session-history.md — one commit:

  started        the chat's start (read in the vault's time_zone)
  objective      the first user message ("#### " lines) that is not a /command
  updates        one per user message, commands included
  summary        counts of messages, replies, files edited and commits, the
                 model, and aider's "Applied edit to …" and "Commit …" lines
  Original text  the chat's text, byte for byte

Left out, with the reason: text before the first chat, chats over 9 MB and
chats that are not UTF-8 text. FILE is only read. Idempotent: a second run
imports nothing; after aider appended chats, only the new ones are imported (a
chat that went on since rewrites its record when nobody edited the record, and
is skipped with the reason otherwise).`,
		Example: `  sessionvault import aider ~/code/shop/.aider.chat.history.md
  sessionvault import aider ~/code/shop --dry-run --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, loc, err := a.serviceWithZone()
			if err != nil {
				return err
			}
			file := argv[0]
			if fi, err := os.Stat(file); err == nil && fi.IsDir() {
				file = filepath.Join(file, aiderHistory)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return importSourceError(err, file, "aider chat history", "aider's chat history file ("+aiderHistory+"), or the folder holding it")
			}
			chats, skipped, err := importer.ParseAiderHistory(filepath.Base(file), data, loc)
			if errors.Is(err, importer.ErrNotAiderHistory) {
				return &errs.Error{Code: errs.ImportFormatUnknown, Message: fmt.Sprintf("%v; give aider's chat history file (%s)", err, aiderHistory), Err: err, Details: map[string]any{"path": file}}
			}
			if err != nil {
				return errs.Wrap(errs.ImportFailed, err, "reading "+file)
			}
			rep, res, err := a.importRecords(svc, "aider chats", file, chats, skipped, dryRun)
			if err != nil {
				return err
			}
			text := importText(fmt.Sprintf("aider chats from %s: %d chats, %d sessions imported, %d updated, %d unchanged, %d skipped",
				file, len(chats), rep.Sessions, rep.Updated, rep.Unchanged, len(rep.Skipped)), rep, dryRun)
			return a.emit(map[string]any{"chats": len(chats), "report": rep, "git": res}, text)
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "read the history and report what would be imported, writing nothing")
	return c
}
