package recovery

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/shellquote"
	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/note"
)

// Crash and compaction recovery (the check_recovery MCP tool). Sources: the
// active session's heartbeat gone stale (crash), and the recovery point the
// PreCompact hook records (compaction). Tool usage is what the PostToolUse
// hook saw (RecordToolUse), kept in .sessionvault/state, not committed.

// RecoveryTypes are the kinds of recovery a session may need.
var RecoveryTypes = []string{"crash", "compaction", "timeout", "manual"}

// ToolUse is one tool call the PostToolUse hook saw: a line of the tool
// history.
type ToolUse = guard.ToolUse

// PendingChange is a note changed in the vault and not yet committed.
type PendingChange struct {
	Type        string `json:"type"` // modified, added, deleted
	Path        string `json:"path"`
	Description string `json:"description"`
}

// RecoveryNeed is a session that needs recovery.
type RecoveryNeed struct {
	SessionID      string          `json:"session_id"`
	TaskID         string          `json:"task_id,omitempty"`
	TaskName       string          `json:"task_name,omitempty"`
	RecoveryType   string          `json:"recovery_type"`
	LastActivity   time.Time       `json:"last_activity"`
	ResumePrompt   string          `json:"resume_prompt"`
	ToolHistory    []ToolUse       `json:"tool_history,omitempty"`
	UnsavedChanges []PendingChange `json:"unsaved_changes"`
}

// RecoveryReport is check_recovery's result.
type RecoveryReport struct {
	NeedsRecovery bool           `json:"needs_recovery"`
	Sessions      []RecoveryNeed `json:"sessions"`
	Summary       string         `json:"summary"`
	Recovered     string         `json:"recovered,omitempty"` // the session markRecovered marked
	Timestamp     time.Time      `json:"timestamp"`
}

// RecoveryPoint is what the PreCompact hook records before Claude Code
// compacts the context.
type RecoveryPoint struct {
	Session string    `json:"session"`
	Trigger string    `json:"trigger"` // manual, auto
	Time    time.Time `json:"time"`
	// Summary is what the hook input gave to steer the compaction (a
	// manual /compact's instructions), "" when none.
	Summary string `json:"summary,omitempty"`
}

func recoveryPointFile(project string) string { return "recovery-" + project }
func toolHistoryFile(project string) string   { return guard.ToolHistoryFile(project) }

// RecordRecoveryPoint records a compaction recovery point of the active
// session (the PreCompact hook). No commit.
func (s *Service) RecordRecoveryPoint(project, trigger, summary string) error {
	st, err := s.Current(project)
	if err != nil || !st.Active() && st.Status != session.StatusCrashed {
		return err
	}
	b, _ := json.Marshal(RecoveryPoint{Session: st.Session, Trigger: trigger, Time: s.NowUTC(), Summary: session.OneLine(summary)})
	return s.V.WriteState(recoveryPointFile(project), append(b, '\n'))
}

func (s *Service) recoveryPoint(project string) *RecoveryPoint {
	data, err := s.V.ReadState(recoveryPointFile(project))
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	var rp RecoveryPoint
	if json.Unmarshal(data, &rp) != nil {
		// The first form: "<session> <trigger> <time>".
		f := strings.Fields(string(data))
		if len(f) < 3 {
			return nil
		}
		rp.Session, rp.Trigger = f[0], f[1]
		rp.Time, _ = time.Parse(time.RFC3339, f[2])
	}
	return &rp
}

// maxToolHistory is how many tool calls the history keeps when it is cut
// back.
const maxToolHistory = 50

// RecordToolUse appends a tool call to the project's tool history (the
// PostToolUse hook: one append per call, guard.AppendToolUse); past
// guard.MaxToolHistoryBytes the file is cut back to its newest
// maxToolHistory calls. No commit.
func (s *Service) RecordToolUse(project, tool string, success bool) error {
	size, err := guard.AppendToolUse(s.V.Root, project, guard.ToolUse{Timestamp: s.NowUTC(), Tool: tool, Success: success})
	if err != nil || size <= guard.MaxToolHistoryBytes {
		return err
	}
	var b strings.Builder
	for _, h := range lastN(s.toolHistory(project), maxToolHistory) {
		l, _ := json.Marshal(h)
		b.Write(l)
		b.WriteByte('\n')
	}
	return s.V.WriteState(toolHistoryFile(project), []byte(b.String()))
}

func (s *Service) toolHistory(project string) []ToolUse {
	data, err := s.V.ReadState(toolHistoryFile(project))
	if err != nil {
		return nil
	}
	var out []ToolUse
	for _, l := range strings.Split(string(data), "\n") {
		var h ToolUse
		if json.Unmarshal([]byte(l), &h) == nil && h.Tool != "" {
			out = append(out, h)
		}
	}
	return out
}

// RecoveryOptions are the inputs of CheckRecovery.
type RecoveryOptions struct {
	Project        string
	MarkRecovered  string // a session id to mark recovered
	IncludeHistory bool   // the last 10 tool calls per session
}

// CheckRecovery reports the sessions that need recovery, each with a resume
// prompt in recoveryPrompt's format. MarkRecovered first marks a session
// recovered: a crashed one is resumed (as Recover does), a compaction's
// recovery point is cleared; a session that needs no recovery is
// errs.RecoverySessionNotFound.
func (s *Service) CheckRecovery(o RecoveryOptions) (RecoveryReport, error) {
	project, err := s.Project(o.Project)
	if err != nil {
		return RecoveryReport{}, err
	}
	rep := RecoveryReport{Sessions: []RecoveryNeed{}, Timestamp: s.NowUTC()}
	needs, err := s.recoveryNeeds(project, o.IncludeHistory)
	if err != nil {
		return rep, err
	}
	if o.MarkRecovered != "" {
		var found *RecoveryNeed
		for i := range needs {
			if needs[i].SessionID == o.MarkRecovered {
				found = &needs[i]
			}
		}
		if found == nil {
			return rep, errs.New(errs.RecoverySessionNotFound, "session %q does not need recovery in project %s (see `%s`)", o.MarkRecovered, project, s.Command(project, "recovery check")).With("session", o.MarkRecovered)
		}
		if found.RecoveryType == "crash" {
			if _, err := s.Recover(project, found.SessionID, true); err != nil {
				return rep, err
			}
		}
		if rp := s.recoveryPoint(project); rp != nil && rp.Session == found.SessionID {
			if err := s.V.WriteState(recoveryPointFile(project), nil); err != nil {
				return rep, err
			}
		}
		rep.Recovered = found.SessionID
		if needs, err = s.recoveryNeeds(project, o.IncludeHistory); err != nil {
			return rep, err
		}
	}
	rep.Sessions = needs
	rep.NeedsRecovery = len(needs) > 0
	switch len(needs) {
	case 0:
		rep.Summary = "no session needs recovery"
	default:
		var parts []string
		for _, n := range needs {
			parts = append(parts, n.SessionID+" ("+n.RecoveryType+")")
		}
		rep.Summary = fmt.Sprintf("%d session(s) need recovery: %s", len(needs), strings.Join(parts, ", "))
	}
	return rep, nil
}

func (s *Service) recoveryNeeds(project string, withHistory bool) ([]RecoveryNeed, error) {
	st, err := s.Current(project)
	if err != nil {
		return nil, err
	}
	rp := s.recoveryPoint(project)
	kind := ""
	switch {
	case st.Status == session.StatusCrashed:
		kind = "crash"
	case rp != nil && rp.Session == st.Session && st.Active():
		kind = "compaction"
	}
	if kind == "" {
		return []RecoveryNeed{}, nil
	}
	n := RecoveryNeed{SessionID: st.Session, RecoveryType: kind, UnsavedChanges: []PendingChange{}}
	if st.LastSign != nil {
		n.LastActivity = *st.LastSign
	} else if st.Updated != nil {
		n.LastActivity = *st.Updated
	}
	var task *tasks.Task
	g, _ := tasks.New(s.Service).Global(project)
	if st.ActiveTask != "" {
		g.ActiveTask = st.ActiveTask
	}
	if g.ActiveTask != "" {
		if t, err := tasks.New(s.Service).ReadTaskFile(project, g.ActiveTask); err == nil {
			task = &t
			n.TaskID, n.TaskName = t.ID, t.Name
		}
	}
	hist := s.toolHistory(project)
	if withHistory {
		n.ToolHistory = lastN(hist, 10)
	}
	pending, err := s.V.Uncommitted(project)
	if err != nil {
		return nil, err
	}
	for _, p := range pending {
		n.UnsavedChanges = append(n.UnsavedChanges, PendingChange{Type: p.Kind, Path: p.Path, Description: p.Kind + " and not committed"})
	}
	n.ResumePrompt = s.recoveryPrompt(project, kind, st, task, lastN(hist, 5), n.UnsavedChanges, rp)
	return []RecoveryNeed{n}, nil
}

func lastN(h []ToolUse, n int) []ToolUse {
	if len(h) > n {
		return append([]ToolUse(nil), h[len(h)-n:]...)
	}
	return append([]ToolUse{}, h...)
}

// recoveryPrompt renders a resume prompt: "## Recovery Required: <type>",
// then sections for the task, recent tool usage, pending changes, the
// conversation summary and recommended actions.
func (s *Service) recoveryPrompt(project, kind string, st session.State, t *tasks.Task, tools []ToolUse, pending []PendingChange, rp *RecoveryPoint) string {
	var b strings.Builder
	orNone := func(v string) string {
		if strings.TrimSpace(v) == "" {
			return "—"
		}
		return v
	}
	fmt.Fprintf(&b, "## Recovery Required: %s\n\n", kind)
	if t != nil {
		fmt.Fprintf(&b, "### Task: %s\n- **Phase**: %s\n- **Iteration**: %d\n\n", orNone(t.Name), orNone(t.Phase), t.Iteration)
		blockers := "none"
		if len(t.Immediate.Blockers) > 0 {
			blockers = strings.Join(t.Immediate.Blockers, "; ")
		}
		fmt.Fprintf(&b, "### Immediate Context\n- **Working On**: %s\n- **Last Action**: %s\n- **Next Step**: %s\n- **Blockers**: %s\n\n",
			orNone(t.Immediate.WorkingOn), orNone(t.Immediate.LastAction), orNone(t.Immediate.NextStep), blockers)
	} else {
		fmt.Fprintf(&b, "### Task: —\n- **Objective**: %s\n- **Progress**: %d%%\n\n", orNone(st.Objective), st.Progress)
	}
	if wf := session.WorkflowSummary(st.Workflow, 3); wf != "" {
		b.WriteString("### Orchestrator Workflow\n" + wf + "\n")
	}
	b.WriteString("### Recent Tool Usage\n")
	if len(tools) == 0 {
		b.WriteString("- none recorded\n")
	}
	for _, u := range tools {
		res := "ok"
		if !u.Success {
			res = "failed"
		}
		fmt.Fprintf(&b, "- %s %s (%s)\n", note.FormatTime(u.Timestamp), u.Tool, res)
	}
	b.WriteString("\n### Pending Changes\n")
	if len(pending) == 0 {
		b.WriteString("- none\n")
	}
	for _, p := range pending {
		fmt.Fprintf(&b, "- %s: %s\n", p.Type, p.Path)
	}
	b.WriteString("\n### Conversation Summary\n")
	summary := ""
	if rp != nil && rp.Summary != "" {
		summary = rp.Summary + "\n"
	}
	if n := len(st.Updates); n > 0 {
		for _, u := range st.Updates[max(0, n-3):] {
			summary += "- " + u.Message + "\n"
		}
	}
	if summary == "" {
		summary = "- " + orNone(st.Objective) + "\n"
	}
	b.WriteString(summary)
	if mb := s.MemoryBankExcerpt(project, 3); mb != "" {
		b.WriteString("\n" + mb)
	}
	b.WriteString("\n### Recommended Actions\n")
	var acts []string
	switch kind {
	case "crash":
		acts = append(acts, "Resume the session: `"+s.Command(project, "recovery check --mark-recovered "+st.Session)+"`")
	case "compaction":
		acts = append(acts, "Re-read the session: `"+s.Command(project, "status")+"`; then `"+s.Command(project, "recovery check --mark-recovered "+st.Session)+"`")
	}
	if t != nil {
		acts = append(acts, "Reload the task: `"+s.Command(project, "task show "+shellquote.Quote(t.ID))+"`")
	}
	if len(pending) > 0 {
		acts = append(acts, "Review the pending changes (`"+s.GitCommand("status")+"`); the next operation commits them")
	}
	if open := st.OpenBlockers(); len(open) > 0 {
		acts = append(acts, fmt.Sprintf("Deal with %d open blocker(s) first", len(open)))
	}
	for i, a := range acts {
		fmt.Fprintf(&b, "%d. %s\n", i+1, a)
	}
	return b.String()
}

// MemoryBankExcerpt returns the resume prompt's part about the project's
// memory bank: a heading of the given level ("## Memory bank" at 2), then,
// for the active context (memory-bank/activeContext.md, else Kilo Code's
// memory-bank/context.md) and the progress (memory-bank/progress.md) that
// exist, the note's absolute path and its first lines as a quote — at most
// memoryExcerptLines lines and memoryExcerptBytes bytes, past its front
// matter. "" when neither note exists. It reads only the
// first bytes of each note.
func (s *Service) MemoryBankExcerpt(project string, level int) string {
	h := strings.Repeat("#", level)
	var b strings.Builder
	for _, part := range []struct {
		title string
		names []string
	}{{"Active context", importer.ActiveContextNotes}, {"Progress", importer.ProgressNotes}} {
		for _, name := range part.names {
			rel := project + "/" + session.MemoryBankDir + "/" + name
			lines, cut, ok := s.noteHead(rel)
			if !ok {
				continue
			}
			if b.Len() == 0 {
				fmt.Fprintf(&b, "%s Memory bank\n\nThe start of the project's memory bank notes; read the whole note for the rest.\n", h)
			}
			what := "the whole of"
			if cut {
				what = fmt.Sprintf("the first %d lines of", len(lines))
			}
			fmt.Fprintf(&b, "\n%s# %s: %s %s\n\n", h, part.title, what, filepath.Join(s.V.Root, filepath.FromSlash(rel)))
			for _, l := range lines {
				if l == "" {
					b.WriteString(">\n")
				} else {
					b.WriteString("> " + l + "\n")
				}
			}
			if cut {
				b.WriteString("> …\n")
			}
			break
		}
	}
	return b.String()
}

// noteHead reads the first lines of a vault note, past its front matter:
// at most memoryExcerptLines lines and memoryExcerptBytes bytes, cut at a
// line; cut reports that the note goes on. ok is false when the note cannot
// be read.
func (s *Service) noteHead(rel string) (lines []string, cut, ok bool) {
	abs, err := s.V.Abs(rel)
	if err != nil {
		return nil, false, false
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, false, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, false, false
	}
	head, err := io.ReadAll(io.LimitReader(f, 8*memoryExcerptBytes))
	if err != nil {
		return nil, false, false
	}
	sc := bufio.NewScanner(bytes.NewReader(head))
	sc.Buffer(make([]byte, 0, 1024), len(head)+1)
	var all []string
	for sc.Scan() {
		all = append(all, strings.ToValidUTF8(strings.TrimRight(sc.Text(), "\r"), "�"))
	}
	whole := len(head) < 8*memoryExcerptBytes
	if !whole && len(all) > 0 {
		all = all[:len(all)-1] // the last line read may be cut short
	}
	// Past a front matter block ("---" on line 1 to the next "---").
	if len(all) > 0 && all[0] == "---" {
		for i := 1; i < len(all); i++ {
			if all[i] == "---" || all[i] == "..." {
				all = all[i+1:]
				break
			}
		}
	}
	for len(all) > 0 && strings.TrimSpace(all[0]) == "" {
		all = all[1:]
	}
	for len(all) > 0 && strings.TrimSpace(all[len(all)-1]) == "" {
		all = all[:len(all)-1]
	}
	size := 0
	for i, l := range all {
		if i == memoryExcerptLines || size+len(l)+1 > memoryExcerptBytes {
			if i == 0 { // one very long first line: its start
				cutAt := memoryExcerptBytes
				if cutAt >= len(l) {
					return all[:1], len(all) > 1 || !whole, true
				}
				for cutAt > 0 && !utf8.RuneStart(l[cutAt]) {
					cutAt--
				}
				return []string{l[:cutAt]}, true, true
			}
			return all[:i], true, true
		}
		size += len(l) + 1
	}
	return all, !whole, true
}

// Bounds of the memory bank excerpt in the resume prompt: per note, its
// first memoryExcerptLines lines, at most memoryExcerptBytes bytes.
const (
	memoryExcerptLines = 20
	memoryExcerptBytes = 1200
)
