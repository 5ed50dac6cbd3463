package cli

import (
	"fmt"
	"strings"

	"github.com/sessionvault/sessionvault/internal/features"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
)

// historyCommand is `history`: the command history on the CLI.
func (a *app) historyCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "history",
		Short: "The command history: every command an agent ran, per session",
		Long: `Each session has a command log, <project>/sessions/<session-id>/commands.md: one
line per command — time, status, command, arguments, model, agent, task,
feature, duration, error — appended, never rewritten, with monotonic times (an
entry older than the log's last gets the last one's time). Claude Code's
PostToolUse hook records every Bash and MCP tool call there; other agents record
their commands with ` + "`history record`" + `.`,
	}
	c.AddCommand(a.historyRecordCommand(), a.historyShowCommand())
	return c
}

func (a *app) historyRecordCommand() *cobra.Command {
	var o features.RecordOptions
	var at string
	var duration int64
	var noCommit bool
	c := &cobra.Command{
		Use:   "record [flags] [--] COMMAND...",
		Short: "Append a command an agent ran to the active session's command log, and commit it",
		Long: `Appends one entry to the command log of the active session (--session: another
active or archived session), then commits the log (--no-commit leaves the commit
to the next one). The task and feature default to the session's active ones
("-" for none). A time older than the log's last entry is clamped to it.

  sessionvault history record --model gemini --agent agent-1 --duration-ms 5234 -- make test
  sessionvault history record --status failure --error 'exit status 2' -- make lint`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.Command, o.Commit = a.project, strings.Join(argv, " "), !noCommit
			if c.Flags().Changed("duration-ms") {
				o.DurationMs = &duration
			}
			if at != "" {
				t, err := svc.ParseTime(at)
				if err != nil {
					return errs.New(errs.HistoryEntryInvalid, "--at: %v", err).With("flag", "at")
				}
				o.At = &t
			}
			out, err := features.New(svc).RecordCommand(o)
			if err != nil {
				return err
			}
			text := fmt.Sprintf("%s recorded in %s", out.Entry.ID, out.Entry.Log)
			if out.Clamped {
				text += fmt.Sprintf(" (at %s: the log's last entry is later)", note.FormatTime(out.Entry.Timestamp))
			}
			return a.emit(out, text)
		},
	}
	c.Flags().StringVar(&o.Arguments, "arguments", "", "the command's arguments")
	c.Flags().StringVar(&o.Model, "model", "", "the model that ran it, e.g. opus, sonnet or gemini")
	c.Flags().StringVar(&o.Agent, "agent", "", "the agent that ran it, e.g. agent-1")
	c.Flags().StringVar(&o.TaskID, "task", "", "the task it was for (default: the session's active task; - for none)")
	c.Flags().StringVar(&o.FeatureID, "feature", "", "the feature it was for (default: the session's active feature; - for none)")
	c.Flags().StringVar(&o.Status, "status", "success", "success or failure")
	c.Flags().Int64Var(&duration, "duration-ms", 0, "how long it ran, in milliseconds")
	c.Flags().StringVar(&o.Error, "error", "", "why it failed")
	c.Flags().StringVar(&at, "at", "", "when it ran (RFC 3339, or 2026-11-25T09:30 in the vault's time_zone; default now)")
	c.Flags().StringVar(&o.Session, "session", "", "the session whose log gets it (default: the active session)")
	c.Flags().BoolVar(&noCommit, "no-commit", false, "append only; the log is committed later (at the session's end at the latest)")
	return c
}

func (a *app) historyShowCommand() *cobra.Command {
	var o features.HistoryOptions
	c := &cobra.Command{
		Use:   "show",
		Short: "Show a session's command log (default: the active session, else the last one)",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project = a.project
			h, err := features.New(svc).CommandHistory(o)
			if err != nil {
				return err
			}
			return a.emit(h, formatHistory(h))
		},
	}
	c.Flags().StringVar(&o.Session, "session", "", "the session (default: the active one, else the last one; all: every session)")
	c.Flags().StringVar(&o.Feature, "feature", "", "only the commands recorded for this feature")
	c.Flags().IntVar(&o.Limit, "limit", 0, "only the newest N entries")
	return c
}

func formatHistory(h features.History) string {
	var b strings.Builder
	if h.Session != "" {
		fmt.Fprintf(&b, "session %s: %d command(s)\n", h.Session, len(h.Entries))
	} else {
		fmt.Fprintf(&b, "%d command(s)\n", len(h.Entries))
	}
	for _, e := range h.Entries {
		dur := "-"
		if e.DurationMs != nil {
			dur = fmt.Sprintf("%d ms", *e.DurationMs)
		}
		fmt.Fprintf(&b, "%-6s %s %-7s %8s  %s", e.ID, note.FormatTime(e.Timestamp), e.Status, dur, oneLineText(e.Command))
		var tags []string
		for _, kv := range [][2]string{{"args", e.Arguments}, {"model", e.Model}, {"agent", e.Agent}, {"task", e.TaskID}, {"feature", e.FeatureID}, {"error", e.Error}} {
			if kv[1] != "" {
				tags = append(tags, kv[0]+" "+oneLineText(kv[1]))
			}
		}
		if h.Session == "" {
			tags = append(tags, "session "+e.Session)
		}
		if len(tags) > 0 {
			fmt.Fprintf(&b, "  [%s]", strings.Join(tags, " · "))
		}
		b.WriteString("\n")
	}
	for _, p := range h.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLineText shows v on one line, cut at 120 characters.
func oneLineText(v string) string {
	v = strings.Join(strings.Fields(v), " ")
	if r := []rune(v); len(r) > 120 {
		v = string(r[:119]) + "…"
	}
	return v
}
