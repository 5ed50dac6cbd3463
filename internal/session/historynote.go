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
	SecRecent = "Recent sessions"
	SecOlder  = "Older sessions"
)

// HistoryEntry renders a session's full entry in session-history.md: an H3
// heading linking to its record, then one line per field.
func HistoryEntry(st State) []string {
	lines := []string{"### " + SessionLink(st.Project, st.Session) + Sep + st.Status, ""}
	lines = append(lines, "- **Objective:** "+OneLine(st.Objective))
	if st.Summary != "" {
		lines = append(lines, "- **Summary:** "+OneLine(st.Summary))
	}
	lines = append(lines, fmt.Sprintf("- **Progress:** %d%% → %d%%", st.ProgressStart, st.Progress))
	if st.Started != nil && st.Ended != nil {
		lines = append(lines, "- **When:** "+note.FormatTime(*st.Started)+" → "+note.FormatTime(*st.Ended)+" ("+duration(st.Ended.Sub(*st.Started))+")")
	}
	if len(st.Decisions) > 0 {
		var ds []string
		for _, d := range st.Decisions {
			ds = append(ds, Link(d.Note, d.Title))
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

// AddToHistory puts st at the top of session-history.md's recent sessions;
// entries past the configured number move to the older sessions as links.
func (s *Service) AddToHistory(tx *vault.Tx, st State, now time.Time) error {
	_, rel, _ := Paths(st.Project)
	d, err := s.ReadDoc(tx, rel)
	if err != nil {
		return err
	}
	nl := d.Newline()
	entry := strings.Join(HistoryEntry(st), nl)
	recent, ok := d.Section(SecRecent)
	var olds []markdown.Section
	if ok {
		for _, sec := range d.MD.Sections {
			if sec.Level == 3 && sec.Start >= recent.BodyStart && sec.Start < recent.End {
				olds = append(olds, sec)
			}
		}
	}
	switch {
	case !ok:
		d.AppendNewSection(SecRecent, entry)
	case len(olds) > 0:
		d.Edit(olds[0].Start, olds[0].Start, entry+nl)
	default:
		first, _, has := d.contentBounds(recent)
		at := recent.End
		if has {
			at = first
		}
		text := entry + nl
		if !has {
			text = nl + entry + nl
			d.Edit(recent.BodyStart, recent.End, text)
			break
		}
		d.Edit(at, at, text)
	}
	keep := s.V.Config.HistoryFull - 1
	var moved []string
	for i := keep; i >= 0 && i < len(olds); i++ {
		sec := olds[i]
		target := Unlink(strings.TrimSpace(strings.Split(sec.Title, Sep)[0]))
		objective := ""
		for _, l := range markdown.Lines(d.Body, sec.BodyStart, sec.End) {
			if v, ok := strings.CutPrefix(string(l.Content()), "- **Objective:** "); ok {
				objective = v
			}
		}
		end := sec.End
		if recent.End < end {
			end = recent.End
		}
		d.Edit(sec.Start, end, "")
		moved = append(moved, "- "+Link(inProject(st.Project, target), path.Base(target))+Sep+objective)
	}
	if len(moved) > 0 {
		d.prependLine(SecOlder, strings.Join(moved, nl))
	}
	d.Set("sessions", d.IntProp("sessions")+1)
	d.Set("updated", now)
	b, err := d.Bytes()
	if err != nil {
		return err
	}
	return tx.Write(rel, b)
}
