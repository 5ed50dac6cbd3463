package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
)

// importClaudeCodeCommand is `import claude-code DIR|FILE`: Claude Code's
// own transcripts (~/.claude/projects/<project>/<session>.jsonl), one
// archived session each.
func (a *app) importClaudeCodeCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "claude-code DIR|FILE",
		Short: "Import Claude Code transcripts (~/.claude/projects/<project>/*.jsonl): one archived session per transcript",
		Long: `Reads the transcripts Claude Code keeps of its sessions: DIR is a project folder
of ~/.claude/projects (one <session-id>.jsonl per session), FILE one transcript.
Each transcript becomes one archived session,
sessions/YYYY-MM-DD-claude-code-<first 8 characters of the session ID>.md,
listed in session-history.md — one commit:

  started, ended  the first and last event's time (the date in the vault's
                  time_zone names the record)
  objective       the first prompt typed that is not a slash command (else the
                  first command, else the first summary line)
  branch          the first git branch the events name
  end commit      the last commit a "git commit" run made, as its output shows
  Todo list       every TodoWrite item, with its last status ([x] completed)
  updates         each prompt and slash command, each compaction (and its
                  summary) and summary line, at their times
  summary         counts (prompts, replies, tool calls and failures, files
                  edited, commits, compactions, interruptions), the models, the
                  Claude Code version and folder, calls per tool, the files
                  edited, the commits, the branches, and what was not read
  Original text   a digest: one line per prompt, reply, tool call, failed
                  tool result, commit and compaction, with the transcript's
                  line number (not the JSON itself: mostly tool output)

Not read, only counted: a subagent's events ("isSidechain"), event types
other than user, assistant, system and summary, thinking. A line that is not
JSON (a transcript cut short mid-write) is named as <file>:<line> and the rest
is read. Left out, with the reason: files that are not .jsonl, folders (a
session's own folder of subagent transcripts is part of that session), empty
files, a subagent's transcript, files without a user or assistant message. A
run that finds transcripts and imports none fails, with the reasons counted.
DIR and FILE are only read. Idempotent: a second run finds every session
unchanged, also after people edited the records. A transcript that changed
since it was imported (the session was still running, or was resumed)
rewrites its record while nobody edited the record (its record_sha256 says
so); otherwise it is skipped with the reason and the record kept.`,
		Example: `  sessionvault import claude-code ~/.claude/projects/-home-me-code-shop --dry-run
  sessionvault import claude-code ~/.claude/projects/-home-me-code-shop
  sessionvault import claude-code ~/.claude/projects/-home-me-code-shop/4f35e220-c435-4cf7-b9b9-f40426042847.jsonl --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, loc, err := a.serviceWithZone()
			if err != nil {
				return err
			}
			from := argv[0]
			const want = "a project folder of ~/.claude/projects, or one of its .jsonl transcripts"
			logs, skipped, err := importer.ScanClaudeCode(from, loc, a.progress("transcripts read"))
			if errors.Is(err, importer.ErrNoTranscripts) {
				e := &errs.Error{Code: errs.ImportFormatUnknown, Message: fmt.Sprintf("%v; give %s", err, want), Err: err, Details: map[string]any{"path": from}}
				if len(skipped) > 0 {
					e = e.With("skipped", skipped)
				}
				return e
			}
			if err != nil {
				return importSourceError(err, from, "Claude Code transcripts", want)
			}
			rep, res, err := a.importRecords(svc, "Claude Code transcripts", from, logs, skipped, dryRun)
			if err != nil {
				return err
			}
			text := importText(fmt.Sprintf("Claude Code transcripts from %s: %d sessions read, %d imported, %d updated, %d unchanged, %d skipped",
				from, len(logs), rep.Sessions, rep.Updated, rep.Unchanged, len(rep.Skipped)), rep, dryRun)
			return a.emit(map[string]any{"transcripts": len(logs), "report": rep, "git": res}, text)
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "read the transcripts and report what would be imported, writing nothing")
	return c
}
