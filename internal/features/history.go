package features

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/commandlog"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Command history (an append-only log with monotonic timestamps, the
// records of the .ai-session format's history.jsonl): every command an agent
// runs, one line each in a log note per session,
// <project>/sessions/<session-id>/commands.md (front matter type:
// command-log, project, session, started), readable in Obsidian:
//
//   - 2025-01-09T10:00:00Z · success · `go test ./...` · **args:** `{"timeout":120000}` · **model:** sonnet · **agent:** Explore · **task:** [[demo/tasks/x|x]] · **feature:** [[demo/features/f-2025-01-09|f-2025-01-09]] · **duration:** 1234 ms ^h-1
//   - 2025-01-09T10:00:05Z · failure · `make lint` · **duration:** 810 ms · **error:** `exit status 2` ^h-2
//
// The time, the status (success or failure) and the command (a code span)
// come first; then, each left out when empty and in this order: args and
// error as code spans, model and agent as words, task and feature as
// wikilinks when their notes exist (else their ids), duration in
// milliseconds. In code spans, a line break is written \n, a carriage return
// \r, a tab \t, and a backslash before one of n, r, t, \ or those three is
// doubled, so that every value reads back exactly; the fence is one backtick
// longer than the longest run in the value.
//
// The log is append-only: lines are added with one write to the file opened
// O_APPEND under a lock on the file, and fsynced (vault.AppendNote); nothing
// ever rewrites a line. Timestamps are monotonic: an entry older than the
// log's last entry gets the last entry's time (a clock that went backwards,
// or an explicit --at). The log reaches git as the agent's edit, in a commit
// of its own: by the hook for a log's first entry, for an entry of a session
// no longer active (the call that ended it), and when the logs were last
// committed longer than HistoryCommitEvery ago; at once for `history record`
// and record_command; by `end` (its session's log) and `start` (an abandoned
// session's); and by `serve`'s watcher.

// CommandEntry is one entry of a command log (the fields of a history.jsonl
// line in the .ai-session format, plus the session and feature it belongs
// to, and its id and line).
type CommandEntry struct {
	ID         string    `json:"id"` // h-N
	Timestamp  time.Time `json:"timestamp"`
	Command    string    `json:"command"`
	Arguments  string    `json:"arguments"`
	Model      string    `json:"model,omitempty"`
	Agent      string    `json:"agent,omitempty"`
	TaskID     string    `json:"task_id,omitempty"`
	FeatureID  string    `json:"feature_id,omitempty"`
	Status     string    `json:"status"`
	DurationMs *int64    `json:"duration_ms,omitempty"`
	Error      string    `json:"error,omitempty"`
	Session    string    `json:"session"`
	Log        string    `json:"log"`            // the log note, from the vault root
	Line       int       `json:"line,omitempty"` // its line in the log (0: not known)

	taskLinked, featureLinked bool // written as wikilinks
}

// ---- the line format ----

// formatCommand renders an entry's line (see the history format above).
func formatCommand(project string, e CommandEntry) string {
	l := commandlog.Line{Time: e.Timestamp, Status: e.Status, Command: e.Command, Arguments: e.Arguments, Model: e.Model, Agent: e.Agent,
		Task: e.TaskID, Feature: e.FeatureID, DurationMs: e.DurationMs, Error: e.Error, ID: e.ID}
	if e.taskLinked {
		l.Task = session.TaskLink(project, e.TaskID)
	}
	if e.featureLinked {
		l.Feature = session.FeatureLink(project, e.FeatureID)
	}
	return l.String()
}

var (
	historyLabelRe = lazyregexp.New(`^ · \*\*(args|model|agent|task|feature|duration|error):\*\* `)
)

// parseCommand reads an entry line; why says what is wrong when it cannot.
func parseCommand(line string) (CommandEntry, string) {
	line = strings.TrimRight(line, " \t\r\n")
	m := commandlog.IDRe().FindStringSubmatchIndex(line)
	if m == nil {
		return CommandEntry{}, "no ^h-N block id at its end"
	}
	e := CommandEntry{ID: line[m[2]:m[3]]}
	s, ok := strings.CutPrefix(line[:m[0]], "- ")
	if !ok {
		return e, "not a list line"
	}
	ts, s, ok := strings.Cut(s, session.Sep)
	if !ok {
		return e, "no time"
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return e, "cannot read the time " + strconv.Quote(ts)
	}
	e.Timestamp = t.UTC()
	if e.Status, s, ok = strings.Cut(s, session.Sep); !ok || (e.Status != session.CommandSuccess && e.Status != session.CommandFailure) {
		return e, "the status is not success or failure"
	}
	if e.Command, s, ok = commandlog.ReadCodeSpan(s); !ok {
		return e, "the command is not a code span"
	}
	for s != "" {
		lm := historyLabelRe().FindStringSubmatch(s)
		if lm == nil {
			return e, "cannot read " + strconv.Quote(s)
		}
		s = s[len(lm[0]):]
		var v string
		switch lm[1] {
		case "args", "error":
			if v, s, ok = commandlog.ReadCodeSpan(s); !ok {
				return e, lm[1] + " is not a code span"
			}
			if lm[1] == "args" {
				e.Arguments = v
			} else {
				e.Error = v
			}
			continue
		case "task", "feature":
			if strings.HasPrefix(s, "[[") {
				end := strings.Index(s, "]]")
				if end < 0 {
					return e, lm[1] + ": a wikilink without ]]"
				}
				v, s = path.Base(session.Unlink(s[:end+2])), s[end+2:]
				if lm[1] == "task" {
					e.taskLinked = true
				} else {
					e.featureLinked = true
				}
			} else {
				v, s = cutWord(s)
			}
			if lm[1] == "task" {
				e.TaskID = v
			} else {
				e.FeatureID = v
			}
		case "model":
			e.Model, s = cutWord(s)
		case "agent":
			e.Agent, s = cutWord(s)
		case "duration":
			var w string
			w, s = cutWord(s)
			n, err := strconv.ParseInt(w, 10, 64)
			if err != nil || n < 0 {
				return e, "cannot read the duration " + strconv.Quote(w)
			}
			e.DurationMs = &n
			s = strings.TrimPrefix(s, " ms")
		}
	}
	return e, ""
}

// cutWord returns s up to its first space, and the rest.
func cutWord(s string) (string, string) {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// ---- appending ----

// appendCommands appends entries to project's log of session (made from
// the template when missing) in one write: each gets the next id, and a time
// no earlier than the log's last entry's (timestamps are
// monotonic). It returns the entries as written and whether the log was new.
func (s *Service) appendCommands(project, sessionID, intro string, entries []CommandEntry) ([]CommandEntry, bool, error) {
	rel := session.CommandLogPath(project, sessionID)
	var out []CommandEntry
	var created bool
	err := s.V.AppendNote(rel, 64<<10, func(tail []byte, size int64) ([]byte, error) {
		var b bytes.Buffer
		n, last, ok := commandlog.Last(tail)
		if size == 0 {
			created = true
			started := ""
			if len(entries) > 0 {
				started = note.FormatTime(entries[0].Timestamp)
			}
			h, err := s.Render(session.CommandsNote, map[string]string{"Project": note.Scalar(project), "Session": note.Scalar(sessionID), "Started": started, "Intro": intro})
			if err != nil {
				return nil, err
			}
			b.Write(h)
		} else if len(tail) > 0 && tail[len(tail)-1] != '\n' {
			b.WriteByte('\n') // a write cut short (a full disk) left half a line: start a new one
		}
		lineNo := 0
		if size == 0 {
			lineNo = bytes.Count(b.Bytes(), []byte("\n"))
		}
		out = out[:0]
		for _, e := range entries {
			n++
			e.ID = "h-" + strconv.Itoa(n) + s.IdSuffix()
			if ok && e.Timestamp.Before(last) {
				e.Timestamp = last
			}
			last, ok = e.Timestamp, true
			e.Session, e.Log = sessionID, rel
			if size == 0 {
				lineNo++
				e.Line = lineNo
			}
			b.WriteString(formatCommand(project, e) + "\n")
			out = append(out, e)
		}
		return b.Bytes(), nil
	})
	return out, created, err
}

// RecordOptions are the inputs of RecordCommand: one command an agent ran
// (a line of the .ai-session format's history.jsonl).
type RecordOptions struct {
	Project string
	// Session is the session whose log gets the entry: "" is the active
	// session (errs.NoActiveSession when none is active); else an active
	// or archived session.
	Session    string
	At         *time.Time // the command's time; nil: now
	Command    string     // required
	Arguments  string
	Model      string
	Agent      string
	TaskID     string // "" = the session's active task; "-" = none
	FeatureID  string // "" = the session's active feature; "-" = none
	Status     string // success (default) or failure
	DurationMs *int64
	Error      string
	// Commit commits the log at once (the CLI and MCP); else it is committed
	// as HistoryCommitEvery says.
	Commit bool
}

// RecordOutcome is what RecordCommand did: the entry as written (its time
// clamped, Clamped set, when it was older than the log's last entry), and
// the commit.
type RecordOutcome struct {
	Entry   CommandEntry `json:"entry"`
	Clamped bool         `json:"clamped,omitempty"`
	Commit  string       `json:"commit,omitempty"`
}

func (o RecordOptions) validate() error {
	field := func(flag, v string, required bool) error {
		if err := session.CheckFields(flag, v); err != nil {
			return err
		}
		if required && strings.TrimSpace(v) == "" {
			return errs.New(errs.HistoryEntryInvalid, "the %s must not be empty", flag).With("flag", flag)
		}
		if len(v) > session.MaxCommandField {
			return errs.New(errs.HistoryEntryInvalid, "--%s is %d bytes; at most %d", flag, len(v), session.MaxCommandField).With("flag", flag)
		}
		return nil
	}
	for _, f := range []struct {
		flag, v  string
		required bool
	}{{"command", o.Command, true}, {"arguments", o.Arguments, false}, {"error", o.Error, false}} {
		if err := field(f.flag, f.v, f.required); err != nil {
			return err
		}
	}
	for flag, v := range map[string]string{"model": o.Model, "agent": o.Agent} {
		if v != "" && !commandlog.AgentRe().MatchString(v) {
			return errs.New(errs.HistoryEntryInvalid, "--%s %q is not an identifier: letters, digits and . _ : / @ + -, at most 100", flag, v).With("flag", flag)
		}
	}
	if o.TaskID != "" && o.TaskID != "-" && !planIDRe().MatchString(o.TaskID) {
		return errs.New(errs.HistoryEntryInvalid, "--task %q is not a task id", o.TaskID).With("flag", "task")
	}
	if o.FeatureID != "" && o.FeatureID != "-" {
		if err := CheckFeatureID("feature", o.FeatureID); err != nil {
			return err
		}
	}
	if o.Status != "" && o.Status != session.CommandSuccess && o.Status != session.CommandFailure {
		return errs.New(errs.HistoryEntryInvalid, "--status %q is not success or failure", o.Status).With("flag", "status")
	}
	if o.DurationMs != nil && *o.DurationMs < 0 {
		return errs.New(errs.HistoryEntryInvalid, "--duration-ms %d is negative", *o.DurationMs).With("flag", "duration-ms")
	}
	if o.Session != "" {
		if err := vault.CheckName("session id", o.Session); err != nil {
			return errs.New(errs.HistoryEntryInvalid, "--session %q is not a session id", o.Session).With("flag", "session")
		}
	}
	return nil
}

// RecordCommand appends one entry to a session's command log (see the
// history format) and, with o.Commit, commits the log as the agent's edit.
// The task and feature default to the session's active ones. An invalid
// field is errs.HistoryEntryInvalid naming its flag (a bad feature id
// errs.InvalidFeatureId).
func (s *Service) RecordCommand(o RecordOptions) (RecordOutcome, error) {
	if err := o.validate(); err != nil {
		return RecordOutcome{}, err
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return RecordOutcome{}, err
	}
	st, err := s.Current(project)
	if err != nil {
		return RecordOutcome{}, err
	}
	sessionID := o.Session
	switch {
	case sessionID == "" && !st.Active():
		return RecordOutcome{}, errs.New(errs.NoActiveSession, "no active session in project %s to record the command in; start one with `%s`, or name a session with --session", project, s.Command(project, "start --objective ...")).With("project", project)
	case sessionID == "":
		sessionID = st.Session
	case sessionID != st.Session || !st.Active():
		if !s.NoteExists(project + "/" + session.SessionsDir + "/" + sessionID + ".md") {
			return RecordOutcome{}, errs.New(errs.SessionNotFound, "session %s is neither active nor archived in project %s (see `%s`)", sessionID, project, s.Command(project, "log")).With("session", sessionID)
		}
	}
	e := CommandEntry{Command: o.Command, Arguments: o.Arguments, Model: o.Model, Agent: o.Agent, Status: session.FirstNonEmpty(o.Status, session.CommandSuccess), DurationMs: o.DurationMs, Error: o.Error}
	if o.At != nil {
		e.Timestamp = o.At.UTC().Truncate(time.Second)
	} else {
		e.Timestamp = s.NowUTC()
	}
	active := st.Active() && st.Session == sessionID
	switch {
	case o.TaskID == "-":
	case o.TaskID != "":
		e.TaskID = o.TaskID
	case active:
		e.TaskID = st.ActiveTask
	}
	switch {
	case o.FeatureID == "-":
	case o.FeatureID != "":
		e.FeatureID = o.FeatureID
	case active:
		e.FeatureID = st.ActiveFeature
	}
	e.taskLinked = e.TaskID != "" && s.NoteExists(session.TaskPath(project, e.TaskID))
	e.featureLinked = e.FeatureID != "" && s.NoteExists(session.FeaturePath(project, e.FeatureID))
	want := e.Timestamp
	written, _, err := s.appendCommands(project, sessionID, sessionLogIntro, []CommandEntry{e})
	if err != nil {
		return RecordOutcome{}, err
	}
	out := RecordOutcome{Entry: written[0], Clamped: written[0].Timestamp.After(want)}
	if o.Commit {
		out.Commit, err = s.CommitCommandLogs(project, written[0].Log)
	}
	return out, err
}

const sessionLogIntro = "Every Bash and MCP tool call of the session (and each command recorded with `sessionvault history record`), one line each, oldest first. Append-only: sessionvault never rewrites a line."

// ToolCall is what the PostToolUse hook knows of one tool call (Claude Code
// hooks input); the lean hook records the same (guard.RecordCommand).
type ToolCall = guard.CommandCall

// RecordModel records the model Claude Code's SessionStart hook names for
// its session (no commit): PostToolUse inputs do not name it.
func (s *Service) RecordModel(project, claudeSession, model string) error {
	if model == "" {
		return nil
	}
	return s.V.WriteState(commandlog.ModelFile(project), commandlog.ModelRecord(claudeSession, model))
}

func (s *Service) recordedModel(project, claudeSession string) string {
	data, err := s.V.ReadState(commandlog.ModelFile(project))
	if err != nil {
		return ""
	}
	return commandlog.RecordedModel(data, claudeSession)
}

// RecordToolCommand appends a Bash or MCP tool call (guard.RecordsCommand;
// other tools are not recorded) to the command log of the session it ran
// in: the active session, or the one that ended during the call (the call
// started — PreToolUse's record, or now minus its duration — before the
// state's last change). Without such a session nothing is recorded. The
// command is Bash's command line, or the MCP tool's name; the arguments are
// the rest of the tool input as JSON (both cut at 4 KiB); the duration is
// the input's, else the time since PreToolUse noted the call. It returns
// the log written ("" when none) and whether it is due for a commit now:
// its first entry, a session no longer active, or HistoryCommitEvery since
// the logs were last committed.
func (s *Service) RecordToolCommand(project string, c ToolCall) (log string, due bool, err error) {
	if !guard.RecordsCommand(c.Tool) {
		return "", false, nil
	}
	end := time.Now()
	start, known := guard.TakeCallStart(s.V.Root, c.ToolUseID)
	if c.DurationMs == nil && known {
		d := max(end.Sub(start).Milliseconds(), 0)
		c.DurationMs = &d
	} else if c.DurationMs != nil && !known {
		start, known = end.Add(-time.Duration(*c.DurationMs)*time.Millisecond), true
	}
	st, err := s.VerifiedCached(project)
	if err != nil {
		return "", false, nil // a state that does not verify: PreToolUse says why
	}
	sessionID := st.Session
	if !st.Active() {
		// The call that ended the session (`sessionvault end`, session_end)
		// belongs to it.
		if !known || st.LastSession == "" || st.Updated == nil || start.After(st.Updated.Add(time.Second)) {
			return "", false, nil
		}
		sessionID = st.LastSession
	}
	e := CommandEntry{Timestamp: s.NowUTC(), Status: session.CommandSuccess, DurationMs: c.DurationMs}
	e.Command, e.Arguments = commandlog.ToolCommand(c.Tool, c.Input)
	if c.Failed {
		e.Status = session.CommandFailure
		e.Error = commandlog.Cut(c.Error, commandlog.ErrorCut)
	}
	e.Model = commandlog.Identifier(session.FirstNonEmpty(c.Model, s.recordedModel(project, c.ClaudeSession)))
	e.Agent = commandlog.Identifier(session.FirstNonEmpty(c.AgentType, c.AgentID))
	if st.Active() {
		e.TaskID, e.FeatureID = st.ActiveTask, st.ActiveFeature
		e.taskLinked, e.featureLinked = e.TaskID != "", e.FeatureID != "" // their notes were there when they became active
	}
	written, created, err := s.appendCommands(project, sessionID, sessionLogIntro, []CommandEntry{e})
	if err != nil {
		return "", false, err
	}
	return written[0].Log, created || !st.Active() || s.LogsCommitDue(project), nil
}

// ---- reading ----

// CommandLog is one session's command log as read.
type CommandLog struct {
	Session  string            `json:"session"`
	Log      string            `json:"log"` // the note, from the vault root
	Entries  []CommandEntry    `json:"entries"`
	Problems []session.Problem `json:"problems,omitempty"`
}

// readCommandLog reads the log note rel of session; a missing one is empty.
func (s *Service) readCommandLog(rel, sessionID string) (CommandLog, error) {
	l := CommandLog{Session: sessionID, Log: rel, Entries: []CommandEntry{}}
	data, err := s.V.ReadFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	for i, line := range strings.Split(string(data), "\n") {
		if !commandlog.IDRe().MatchString(strings.TrimRight(line, "\r")) {
			continue
		}
		e, why := parseCommand(line)
		if why != "" {
			l.Problems = append(l.Problems, session.Problem{Note: rel, Line: i + 1, Text: strings.TrimRight(line, "\r"), Why: "cannot read this command entry back (" + why + "); it is kept as written"})
			continue
		}
		e.Session, e.Log, e.Line = sessionID, rel, i+1
		l.Entries = append(l.Entries, e)
	}
	return l, nil
}

// commandLogs reads every command log of project, in session order.
func (s *Service) commandLogs(project string) ([]CommandLog, error) {
	ents, err := os.ReadDir(path.Join(s.V.Root, project, session.SessionsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []CommandLog
	for _, e := range ents {
		if !e.IsDir() || vault.CheckName("session id", e.Name()) != nil {
			continue
		}
		rel := session.CommandLogPath(project, e.Name())
		if _, err := os.Stat(path.Join(s.V.Root, rel)); err != nil {
			continue
		}
		l, err := s.readCommandLog(rel, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Session < out[j].Session })
	return out, nil
}

// HistoryOptions are the inputs of CommandHistory.
type HistoryOptions struct {
	Project string
	// Session is the session whose log to read: "" is the active session,
	// else the last one; "all" is every log of the project.
	Session string
	Feature string // only entries recorded with this feature
	Limit   int    // the newest Limit entries (0: all)
}

// History is what CommandHistory read: the entries, oldest first, and the
// lines that could not be read back.
type History struct {
	Session  string            `json:"session,omitempty"`
	Entries  []CommandEntry    `json:"entries"`
	Problems []session.Problem `json:"problems,omitempty"`
}

// CommandHistory reads a session's command log (see HistoryOptions). A
// session with no log has no entries; an unknown session id is
// errs.SessionNotFound.
func (s *Service) CommandHistory(o HistoryOptions) (History, error) {
	project, err := s.Project(o.Project)
	if err != nil {
		return History{}, err
	}
	if o.Feature != "" {
		if err := CheckFeatureID("feature", o.Feature); err != nil {
			return History{}, err
		}
	}
	h := History{Session: o.Session, Entries: []CommandEntry{}}
	var logs []CommandLog
	switch o.Session {
	case "all":
		if logs, err = s.commandLogs(project); err != nil {
			return h, err
		}
		h.Session = ""
	default:
		if h.Session == "" {
			st, err := s.Current(project)
			if err != nil {
				return h, err
			}
			h.Session = session.FirstNonEmpty(st.Session, st.LastSession)
			if h.Session == "" {
				return h, nil
			}
		} else if err := vault.CheckName("session id", h.Session); err != nil {
			return h, errs.New(errs.SessionNotFound, "--session %q is not a session id", h.Session).With("session", h.Session)
		}
		rel := session.CommandLogPath(project, h.Session)
		if !s.NoteExists(rel) && !s.NoteExists(project+"/"+session.SessionsDir+"/"+h.Session+".md") {
			if st, _ := s.Current(project); st.Session != h.Session {
				return h, errs.New(errs.SessionNotFound, "session %s has no record and no command log in project %s (see `%s`)", h.Session, project, s.Command(project, "log")).With("session", h.Session)
			}
		}
		l, err := s.readCommandLog(rel, h.Session)
		if err != nil {
			return h, err
		}
		logs = []CommandLog{l}
	}
	for _, l := range logs {
		for _, e := range l.Entries {
			if o.Feature == "" || e.FeatureID == o.Feature {
				h.Entries = append(h.Entries, e)
			}
		}
		h.Problems = append(h.Problems, l.Problems...)
	}
	if o.Session == "all" {
		sort.SliceStable(h.Entries, func(i, j int) bool { return h.Entries[i].Timestamp.Before(h.Entries[j].Timestamp) })
	}
	if o.Limit > 0 && len(h.Entries) > o.Limit {
		h.Entries = slices.Clone(h.Entries[len(h.Entries)-o.Limit:])
	}
	return h, nil
}
