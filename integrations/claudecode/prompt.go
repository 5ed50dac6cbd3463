package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/recovery"

	"github.com/sessionvault/sessionvault/internal/features"

	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
)

func nowUTC() time.Time { return time.Now().UTC() }

// SessionStart prints the resume prompt as additional context (Claude Code
// hooks: SessionStart, hookSpecificOutput.additionalContext): objective,
// status, open checklist items, open blockers, latest updates and decisions,
// and for a crashed or compacted session how to recover. It never blocks.
// On a vault in a newer format than this binary writes it records nothing
// and the context starts with why (formatContext).
func (h Handler) SessionStart(in Input) Response {
	svc, err := h.Open()
	if err != nil {
		return Allow()
	}
	svc = withCodeDir(svc, in.Cwd)
	project, err := svc.Project(h.Project)
	if err != nil {
		return Allow()
	}
	// A vault this binary does not write: the state without recording
	// anything, after why.
	notice := formatContext(svc)
	if notice != "" {
		notice += "\n\n"
	} else {
		_ = features.New(svc).RecordModel(project, in.SessionID, in.Model) // the command history's model; without it, entries name none
	}
	if _, err := svc.VerifiedCached(project); err != nil {
		if errors.Is(err, session.ErrTampered) {
			return contextResponse(notice + "sessionvault: the session state cannot be trusted: " + err.Error() + ". Editing tools are denied until a person reviews the change and runs `" + svc.Command(project, "accept") + "`.")
		}
		return contextResponse(notice + "sessionvault: the session state cannot be read (" + err.Error() + "). Ask a person to fix it.")
	}
	st, err := svc.Current(project)
	if err != nil {
		return contextResponse(notice + "sessionvault: the session state cannot be read (" + err.Error() + "). Ask a person to fix it.")
	}
	proto, _ := svc.Protocol(project)
	limit := h.PromptLimit
	if limit <= 0 {
		limit = 8 << 10
	}
	if notice != "" {
		return contextResponse(notice + ResumePrompt(svc, st, proto, in.Source, in.Cwd, limit))
	}
	// The session this machine's agent worked in lost a clash (or ended
	// elsewhere): said first, once (handing over the state ends it).
	if clash := svc.ClashNotice(project); clash != "" {
		notice = clash + "\n\n"
	}
	// The state handed to the agent here is the evidence that it read it
	// (the start checklist's "read the current state").
	_ = svc.ObserveStateRead(project, "SessionStart")   // without it, the item waits for a Read or `status`
	_ = svc.ObserveHistoryRead(project, "SessionStart") // (the prompt carries the latest session of the history)
	return contextResponse(notice + ResumePrompt(svc, st, proto, in.Source, in.Cwd, limit-len(notice)))
}

func contextResponse(text string) Response {
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": "SessionStart", "additionalContext": text}})
	return Response{Stdout: string(out) + "\n"}
}

// ResumePrompt renders the bounded markdown summary an agent gets to
// continue: at most limit bytes, cut at a line boundary. The commands it
// names run as written from any folder (see session.Service.Runnable;
// codeDir is the code repository, "" for the current folder).
//
// The project's imported memory bank, when it has one, follows: the first
// lines of its active context and progress notes
// (session.Service.MemoryBankExcerpt); being last, it is what the limit cuts
// first.
func ResumePrompt(svc *session.Service, st session.State, proto *protocol.Protocol, source, codeDir string, limit int) string {
	text := resumeText(svc, st, proto, source)
	if mb := recovery.New(svc).MemoryBankExcerpt(st.Project, 2); mb != "" {
		text = strings.TrimRight(text, "\n") + "\n\n" + mb
	}
	return clip(svc.Runnable(st.Project, text, codeDir), limit)
}

// resumeText is ResumePrompt's text, before its commands are made runnable
// and it is clipped.
func resumeText(svc *session.Service, st session.State, proto *protocol.Protocol, source string) string {
	var b strings.Builder
	if !st.Active() {
		fmt.Fprintf(&b, "# sessionvault: no active session in %s\n\nStart one: `sessionvault start --objective \"...\"`", st.Project)
		if st.LastSession == "" {
			b.WriteString(".")
			return b.String()
		}
		id := path.Base(st.LastSession)
		fmt.Fprintf(&b, " (add `--continue %s` to carry on from the last session).\n", id)
		last, err := svc.Archived(st.Project, id)
		if err != nil {
			fmt.Fprintf(&b, "\nThe last session was %s.", st.LastSession)
			return b.String()
		}
		fmt.Fprintf(&b, "\n## The last session: %s (%s)\n\n- Objective: %s\n- Progress: %d%%\n", id, last.Status, last.Objective, last.Progress)
		if last.Summary != "" {
			fmt.Fprintf(&b, "- Summary: %s\n", last.Summary)
		}
		if len(last.NextSteps) > 0 {
			b.WriteString("\n## Next steps it left\n\n")
			for _, n := range last.NextSteps {
				fmt.Fprintf(&b, "- %s\n", n)
			}
		}
		if open := last.OpenBlockers(); len(open) > 0 {
			b.WriteString("\n## Blockers it left open\n\n")
			for _, bl := range open {
				fmt.Fprintf(&b, "- %s [%s] %s\n", bl.ID, bl.Severity, bl.Text)
			}
		}
		return b.String()
	}
	fmt.Fprintf(&b, "# sessionvault: session %s (%s)\n\n", st.Session, st.Status)
	fmt.Fprintf(&b, "- Objective: %s\n- Progress: %d%%\n- Mode: %s\n", st.Objective, st.Progress, st.ModeOrDefault())
	if st.Continues != "" {
		// Started with --continue: what the session it carries on left.
		if prev, err := svc.Archived(st.Project, path.Base(st.Continues)); err == nil {
			fmt.Fprintf(&b, "- Continues: %s", path.Base(st.Continues))
			if prev.Summary != "" {
				fmt.Fprintf(&b, " (its summary: %s)", prev.Summary)
			}
			b.WriteString("\n")
			for _, n := range prev.NextSteps {
				fmt.Fprintf(&b, "  - next step it left: %s\n", n)
			}
		}
	}
	if wf := session.WorkflowSummary(st.Workflow, 3); wf != "" {
		b.WriteString("\n## Orchestrator workflow\n\n" + wf)
	}
	if st.Status == session.StatusCrashed {
		b.WriteString("\nThe session shows no recent sign of life: run `sessionvault recover` to resume it.\n")
	}
	if source == "compact" || source == "resume" {
		b.WriteString("\nYour context was " + map[string]string{"compact": "compacted", "resume": "resumed"}[source] + ": this summary is the state to continue from; `sessionvault status` shows more.\n")
	}
	if proto != nil {
		for _, g := range []struct {
			name  string
			phase protocol.Phase
		}{{"Start checklist", protocol.Start}, {"End checklist", protocol.End}} {
			if missing := svc.Gate(st, proto, g.phase); len(missing) > 0 {
				fmt.Fprintf(&b, "\n## %s: open MUST items\n", g.name)
				for _, m := range missing {
					fmt.Fprintf(&b, "- %s %s: %s\n", m.ID, m.Step, m.Do)
				}
			}
		}
	}
	if open := st.OpenBlockers(); len(open) > 0 {
		b.WriteString("\n## Open blockers\n")
		for _, bl := range open {
			fmt.Fprintf(&b, "- %s [%s] %s\n", bl.ID, bl.Severity, bl.Text)
		}
	}
	if n := len(st.Updates); n > 0 {
		b.WriteString("\n## Latest updates\n")
		for _, u := range st.Updates[max(0, n-5):] {
			fmt.Fprintf(&b, "- %s %s: %s\n", note.FormatTime(u.Time), u.Type, u.Message)
		}
	}
	if n := len(st.Decisions); n > 0 {
		b.WriteString("\n## Decisions\n")
		svc.CheckCitations(&st) // a decision whose cited code changed since needs a second look
		for _, d := range st.Decisions[max(0, n-5):] {
			fmt.Fprintf(&b, "- %s: %s (%s)", d.Title, d.Choice, d.Rationale)
			if d.Stale != "" {
				fmt.Fprintf(&b, " — stale: %s; check it still holds", d.Stale)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := strings.LastIndexByte(s[:limit-len("\n…")], '\n')
	if cut < 0 {
		cut = limit - len("\n…")
	}
	return s[:cut] + "\n…"
}
