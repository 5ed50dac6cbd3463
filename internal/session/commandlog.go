package session

import (
	"os"
	"path"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/commandlog"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// The command logs' place and how they reach git: the lifecycle commits a
// session's log at its end (and an abandoned one's at the next start);
// package features records the entries.

// CommandsNote is a command log's name in its session's folder; the
// fields of an entry are bounded by MaxCommandField, and HistoryCommitEvery
// says how stale the committed logs may get while a session runs.
const (
	CommandsNote = "commands.md"

	// MaxCommandField bounds the command, arguments and error of an entry,
	// in bytes (history record and import refuse longer; the hook cuts).
	MaxCommandField = 8 << 10
	// HookFieldCut is where the hook cuts a command or its arguments.
	HookFieldCut = commandlog.HookCut
	// HistoryCommitEvery is how stale the committed logs may get while a
	// session runs: a tool call recorded later than this after the last
	// commit of the logs commits them.
	HistoryCommitEvery = commandlog.CommitEvery

	CommandSuccess = commandlog.Success
	CommandFailure = commandlog.Failure

	// CommandHistoryTool names, in the agent-edit commit of the command
	// logs ("… changed by the agent's command-history call"), what made
	// the edit: every commit of the logs as the agent's says it, whoever
	// makes it (CommitCommandLogs, or `remote sync` committing entries not
	// yet committed before the person's edits).
	CommandHistoryTool = "command-history"
)

// CommandLogPath is a session's command log, from the vault root.
func CommandLogPath(project, session string) string {
	return project + "/" + SessionsDir + "/" + session + "/" + CommandsNote
}

// IsCommandLog reports whether rel (a vault-relative path) is a command log
// note, <project>/sessions/<session>/commands.md.
func IsCommandLog(rel string) bool {
	parts := strings.Split(rel, "/")
	return len(parts) == 4 && parts[1] == SessionsDir && parts[3] == CommandsNote
}

// NoteExists reports whether rel (vault-relative, checked) is a file on disk.
func (s *Service) NoteExists(rel string) bool {
	if vault.CheckPath(rel) != nil {
		return false
	}
	_, err := os.Stat(path.Join(s.V.Root, rel))
	return err == nil
}

// CommitCommandLogs commits the command logs rels (vault-relative) as the
// agent's edit when they differ from HEAD (one commit, "agent-edit: …
// changed by the agent's command-history call"), and returns the commit, ""
// when none differed.
func (s *Service) CommitCommandLogs(project string, rels ...string) (string, error) {
	var logs []string
	for _, r := range rels {
		if r != "" && IsCommandLog(r) {
			logs = append(logs, r)
		}
	}
	if len(logs) == 0 {
		return "", nil
	}
	c, err := s.V.CommitAgentEdits(logs, CommandHistoryTool)
	if err == nil {
		s.noteLogsCommitted(project)
	}
	return c, err
}

func (s *Service) noteLogsCommitted(project string) {
	_ = s.V.WriteState(commandlog.CommittedFile(project), commandlog.CommittedRecord(time.Now())) // a hint: without it the next entry commits
}

// LogsCommitDue reports whether the logs were last committed longer than
// HistoryCommitEvery ago (or never, as far as this machine knows).
func (s *Service) LogsCommitDue(project string) bool {
	data, _ := s.V.ReadState(commandlog.CommittedFile(project))
	return commandlog.CommitDue(data, time.Now())
}

// commitSessionLog commits session's command log when it differs from HEAD
// (end, for the session it ended; start, for a session it abandoned): what
// fails is a warning of res, the operation having taken effect.
func (s *Service) commitSessionLog(project, session string, res *vault.Result) {
	if session == "" || vault.CheckName("session id", session) != nil {
		return
	}
	rel := CommandLogPath(project, session)
	if !s.NoteExists(rel) {
		return
	}
	changed, err := s.V.ChangedSinceHead([]string{rel})
	if err == nil && len(changed) > 0 {
		_, err = s.CommitCommandLogs(project, changed...)
	}
	if err != nil {
		res.Warnings = append(res.Warnings, "the command log "+rel+" was not committed ("+err.Error()+"); `"+s.GitCommand("status")+"` shows it")
	}
	guard.PruneCallStarts(s.V.Root, time.Hour)
	guard.PruneToolCalls(s.V.Root, 24*time.Hour) // (a call of another project may run long)
}
