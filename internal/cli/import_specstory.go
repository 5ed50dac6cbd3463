package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
)

// specStoryWant says what import specstory reads, for its errors.
const specStoryWant = "a repository holding .specstory/history, that folder, or one of its chats (YYYY-MM-DD_HH-MMZ-title.md)"

func (a *app) importSpecStoryCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "specstory DIR",
		Short: "Import SpecStory chats (.specstory/history: Cursor, Claude Code, …): one archived session per chat",
		Long: `Reads the chats SpecStory saves as markdown in .specstory/history/, one file per
chat named YYYY-MM-DD_HH-MMZ-title.md (the SpecStory extension for Cursor and VS
Code, and the specstory CLI for Claude Code, Cursor CLI, Codex, Gemini CLI).
DIR is a repository, its .specstory folder, the history folder (sub-folders
too), another folder of such files, or one chat. Each chat becomes one archived
session, sessions/<file name>.md, listed in session-history.md — one commit:

  started        the chat's time: its title's, else its session comment's,
                 else its file name's; the first message's when earlier
  ended          the last message's time (from speaker lines that give one)
  objective      the first user request
  updates        "Asked: …" for each user request, and one line for each change
                 the assistant made: "Edited path (+3 -1): what it said",
                 "Created path", "Ran command (description)", at the time of
                 its message
  summary        counts of requests, replies, edits and commands, the tool and
                 the models, then the files edited, the files read and the
                 commands run, once each
  Original text  the chat's file, byte for byte

Every SpecStory layout is read: "_**User**_" / "_**Assistant**_" chats with
"_****_" parts, and the newer "_**User (time)**_" / "_**Agent (model …)**_"
ones; tool calls as "Tool use: **name**" lines, <details> summaries ("Edit
file: …", "Run command: …") and <tool-use> blocks; diff and bash blocks;
<think> blocks. Times without a zone are read in the vault's time_zone.

Left out, with the reason: files that are not .md, hidden files, markdown that
is no SpecStory chat, chats without messages or without any time, and files
over 9 MB. A malformed line (a speaker line cut short or with an unreadable
time, a block a chat cut short left open) is named as file:line, and the rest of
the chat is imported. DIR is only read. --dry-run lists, for each chat, the note
it would write, rewrite or leave unchanged. Idempotent: a second run imports
nothing; a chat that went on since it was imported rewrites its record when
nobody edited the record.`,
		Example: `  sessionvault import specstory ~/code/shop
  sessionvault import specstory ~/code/shop/.specstory/history --dry-run --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, loc, err := a.serviceWithZone()
			if err != nil {
				return err
			}
			dir := argv[0]
			chats, skipped, err := importer.ScanSpecStory(dir, loc, a.progress("chats read"))
			switch {
			case errors.Is(err, importer.ErrNotSpecStoryChat):
				return &errs.Error{Code: errs.ImportFormatUnknown, Message: fmt.Sprintf("%v; give %s", err, specStoryWant), Err: err, Details: map[string]any{"path": dir}}
			case errors.Is(err, fs.ErrNotExist):
				return errs.New(errs.ImportSourceNotFound, "%s does not exist; give %s", dir, specStoryWant).With("path", dir)
			case errors.Is(err, importer.ErrNoSpecStoryHistory):
				return &errs.Error{Code: errs.ImportSourceNotFound, Message: fmt.Sprintf("no SpecStory chats found: %v; give %s", err, specStoryWant), Err: err, Details: map[string]any{"path": dir}}
			case err != nil:
				return errs.Wrap(errs.ImportFailed, err, "reading "+dir)
			}
			rep, res, err := a.importRecords(svc, "SpecStory chats", dir, chats, skipped, dryRun)
			if err != nil {
				return err
			}
			text := importText(fmt.Sprintf("SpecStory chats from %s: %d chats, %d sessions imported, %d updated, %d unchanged, %d skipped",
				dir, len(chats), rep.Sessions, rep.Updated, rep.Unchanged, len(rep.Skipped)), rep, dryRun)
			return a.emit(map[string]any{"chats": len(chats), "report": rep, "git": res}, text)
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "read the chats and list, for each, what would be written, writing nothing")
	return c
}
