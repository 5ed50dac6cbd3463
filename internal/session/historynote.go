package session

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

const (
	secRecent = "Recent sessions"
	secOlder  = "Older sessions"
)

// historyEntry renders a session's full entry in session-history.md: an H3
// heading linking to its record, then one line per field.
func historyEntry(st State) []string {
	lines := []string{"### " + sessionLink(st.Project, st.Session) + sep + st.Status, ""}
	lines = append(lines, "- **Objective:** "+oneLine(st.Objective))
	if st.Summary != "" {
		lines = append(lines, "- **Summary:** "+oneLine(st.Summary))
	}
	lines = append(lines, fmt.Sprintf("- **Progress:** %d%% → %d%%", st.ProgressStart, st.Progress))
	if st.Started != nil && st.Ended != nil {
		lines = append(lines, "- **When:** "+note.FormatTime(*st.Started)+" → "+note.FormatTime(*st.Ended)+" ("+duration(st.Ended.Sub(*st.Started))+")")
	}
	if len(st.Decisions) > 0 {
		var ds []string
		for _, d := range st.Decisions {
			ds = append(ds, link(d.Note, d.Title))
		}
		lines = append(lines, "- **Decisions:** "+strings.Join(ds, ", "))
	}
	if len(st.Blockers) > 0 {
		open := len(st.OpenBlockers())
		lines = append(lines, fmt.Sprintf("- **Blockers:** %d resolved, %d open", len(st.Blockers)-open, open))
	}
	if len(st.NextSteps) > 0 {
		lines = append(lines, "- **Next steps:** "+strings.Join(st.NextSteps, "; "))
	}
	return append(lines, "")
}

func duration(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := int(d.Hours()), int(d.Minutes())%60
	if h > 0 {
		return fmt.Sprintf("%dh %02dm", h, m)
	}
	return fmt.Sprintf("%dm", m)
}

// addToHistory puts st at the top of session-history.md's recent sessions;
// entries past the configured number move to the older sessions as links.
func (s *Service) addToHistory(tx *vault.Tx, st State, now time.Time) error {
	_, rel, _ := paths(st.Project)
	d, err := s.readDoc(tx, rel)
	if err != nil {
		return err
	}
	nl := d.newline()
	entry := strings.Join(historyEntry(st), nl)
	recent, ok := d.section(secRecent)
	var olds []markdown.Section
	if ok {
		for _, sec := range d.md.Sections {
			if sec.Level == 3 && sec.Start >= recent.BodyStart && sec.Start < recent.End {
				olds = append(olds, sec)
			}
		}
	}
	switch {
	case !ok:
		d.appendNewSection(secRecent, entry)
	case len(olds) > 0:
		d.edit(olds[0].Start, olds[0].Start, entry+nl)
	default:
		first, _, has := d.contentBounds(recent)
		at := recent.End
		if has {
			at = first
		}
		text := entry + nl
		if !has {
			text = nl + entry + nl
			d.edit(recent.BodyStart, recent.End, text)
			break
		}
		d.edit(at, at, text)
	}
	keep := s.V.Config.HistoryFull - 1
	var moved []string
	for i := keep; i >= 0 && i < len(olds); i++ {
		sec := olds[i]
		target := Unlink(strings.TrimSpace(strings.Split(sec.Title, sep)[0]))
		objective := ""
		for _, l := range markdown.Lines(d.body, sec.BodyStart, sec.End) {
			if v, ok := strings.CutPrefix(string(l.Content()), "- **Objective:** "); ok {
				objective = v
			}
		}
		end := sec.End
		if recent.End < end {
			end = recent.End
		}
		d.edit(sec.Start, end, "")
		moved = append(moved, "- "+link(inProject(st.Project, target), path.Base(target))+sep+objective)
	}
	if len(moved) > 0 {
		d.prependLine(secOlder, strings.Join(moved, nl))
	}
	d.set("sessions", d.intProp("sessions")+1)
	d.set("updated", now)
	b, err := d.bytes()
	if err != nil {
		return err
	}
	return tx.Write(rel, b)
}
