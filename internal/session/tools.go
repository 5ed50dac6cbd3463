package session

import (
	"crypto/hmac"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/integrity"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/protocol"
)

// RecordToolCall is called by the PostToolUse hook: when a checklist item's
// evidence is `tool: PATTERN` and the tool's name matches, the call is
// recorded in .sessionvault/state/tools-<project> (no commit), one signed
// line per call: "<session> <item> <tool> <time> <hmac>". It returns the
// items it recorded.
func (s *Service) RecordToolCall(project, tool string) ([]string, error) {
	st, err := s.VerifiedCached(project)
	if err != nil || !st.Active() {
		return nil, err
	}
	proto, err := s.Protocol(project)
	if err != nil {
		return nil, err
	}
	var recorded []string
	for _, group := range []struct {
		prefix string
		reqs   []protocol.Requirement
	}{{"c-", proto.Start}, {"e-", proto.End}} {
		for i, r := range group.reqs {
			if r.Check.Kind != protocol.KindTool {
				continue
			}
			re, err := regexp.Compile("^(?:" + r.Check.Arg + ")$")
			if err != nil || !re.MatchString(tool) {
				continue
			}
			id := group.prefix + itoa(i+1)
			line := st.Session + " " + id + " " + tool + " " + note.FormatTime(s.NowUTC())
			mac, err := s.lineMAC(toolMACPrefix + project + "\t" + line)
			if err != nil {
				return recorded, err
			}
			if err := s.AppendState(integrity.ToolsFile(project), line+" "+mac+"\n"); err != nil {
				return recorded, err
			}
			recorded = append(recorded, id)
		}
	}
	return recorded, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// toolMACPrefix starts what a tool-evidence line's MAC covers, before its
// project and its line: a line copied into another project's file, or into
// another state file, does not check.
const toolMACPrefix = "sessionvault tool v1\t"

func (s *Service) lineMAC(line string) (string, error) {
	k, err := s.key()
	if err != nil {
		return "", err
	}
	return integrity.Sign(k, []byte(line))[:32], nil
}

// AppendState appends line (its newline included) to the state file name
// (under the vault's state folder), made when missing.
func (s *Service) AppendState(name, line string) error {
	p, err := s.V.StatePath(name)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(line)
	return err
}

// toolSeen returns the tool and time of a signed tool-call record of
// session for item, or ok=false.
func (s *Service) toolSeen(project, session, item string) (tool string, at time.Time, ok bool) {
	data, err := s.V.ReadState(integrity.ToolsFile(project))
	if err != nil {
		return "", time.Time{}, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] != session || f[1] != item {
			continue
		}
		if mac, err := s.lineMAC(toolMACPrefix + project + "\t" + strings.Join(f[:4], " ")); err != nil || !hmac.Equal([]byte(mac), []byte(f[4])) {
			continue
		}
		t, _ := time.Parse(time.RFC3339, f[3])
		return f[2], t, true
	}
	return "", time.Time{}, false
}

// toolCallNotes are the notes whose change during a tool call the hooks
// look for: the project's canonical notes.
func toolCallNotes(project string) []string {
	return []string{project + "/" + CurrentStateNote, project + "/" + DecisionsNote, project + "/" + HistoryNote, project + "/" + ViolationsNote}
}

// NoteToolCall is called by the PreToolUse hook for a call it lets through
// that may write: it records the stat identity of the project's canonical
// notes (guard.NoteToolCall: the call's own record, named by its
// tool_use_id id; no commit), for CommitToolEdits to compare after the
// call.
func (s *Service) NoteToolCall(project, tool, id string) error {
	return guard.NoteToolCall(s.V.Root, project, tool, id, toolCallNotes(project))
}

// CommitToolEdits is called by the PostToolUse hook of the call id of tool:
// canonical notes that changed since NoteToolCall recorded them were
// changed during the agent's tool call, and are committed as the agent's
// edit (not the person's). Such an edit is never signed: a change to the
// sealed part of the state still waits for a person's accept. Only the
// project's canonical notes are committed, whatever the record names. It
// returns the commit, or "".
func (s *Service) CommitToolEdits(project, tool, id string) (string, error) {
	noted, err := guard.TakeToolCall(s.V.Root, project, tool, id)
	if err != nil || len(noted) == 0 {
		return "", err
	}
	watched := toolCallNotes(project)
	var changed []string
	for _, rel := range noted {
		if slices.Contains(watched, rel) {
			changed = append(changed, rel)
		}
	}
	if len(changed) == 0 {
		return "", nil
	}
	return s.V.CommitAgentEdits(changed, tool)
}
