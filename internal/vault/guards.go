package vault

import (
	"bytes"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/notemerge"
)

// guardTime is how long a line the engine took from a replaced file is put
// back into its note when a save drops it — counted from the end of the
// operation that took it, and at least until the next operation has
// checked: the writer of that line may have read the note before the
// engine wrote the line into it, and save what it read (plus its next line)
// a moment later.
const guardTime = 10 * time.Second

// guard is one such line: its text, the line before it where it was found,
// and when.
type guard struct {
	Rel   string    `json:"rel"`
	Line  string    `json:"line"`
	After string    `json:"after,omitempty"`
	At    time.Time `json:"at"`   // when the operation that took it ended
	Seen  bool      `json:"seen"` // checked by a later operation
}

const guardsName = "guards.json"

// guardLines records the lines other added to ancestor's body (the bytes
// someone wrote into a replaced file), which the engine merged into rel.
// Front matter lines are not guarded: a property's other value is a second
// definition of it, not a line to put back (Merge3 merges properties).
func (w *writer) guardLines(rel string, ancestor, other []byte) {
	_, ancestor = notemerge.SplitNote(ancestor)
	_, other = notemerge.SplitNote(other)
	have := map[string]bool{}
	for _, l := range notemerge.SplitLines(ancestor) {
		have[l] = true
	}
	prev := ""
	now := time.Now()
	for _, l := range notemerge.SplitLines(other) {
		if !have[l] && strings.TrimSpace(l) != "" {
			w.guards = append(w.guards, guard{Rel: rel, Line: l, After: prev, At: now})
		}
		prev = l
	}
}

func (v *Vault) loadGuards() []guard { return loadStateList[guard](v, guardsName) }

func (v *Vault) saveGuards(gs []guard) error {
	for i := range gs {
		if !gs[i].Seen {
			gs[i].At = time.Now() // the clock starts when the operation ends
		}
	}
	return saveStateList(v, guardsName, gs)
}

// applyGuards puts back into their notes the guarded lines a save dropped
// (after the line that preceded them, or at the end), and forgets guards
// older than guardTime.
func (w *writer) applyGuards() {
	v := w.v
	byRel := map[string][]guard{}
	var keep []guard
	for _, g := range w.guards {
		if g.Seen && time.Since(g.At) > guardTime {
			continue // checked at least once, and long enough
		}
		byRel[g.Rel] = append(byRel[g.Rel], g)
		g.Seen = true
		keep = append(keep, g)
	}
	w.guards = keep
	for rel, gs := range byRel {
		abs, err := v.Abs(rel)
		if err != nil {
			continue
		}
		live, id, fi, err := readStableInfo(abs, rel)
		if err != nil {
			continue
		}
		out := live
		for _, g := range gs {
			if notemerge.HasLine(out, g.Line) {
				continue
			}
			at := len(out)
			if g.After != "" {
				if i := lineIndex(out, g.After); i >= 0 {
					at = i + len(g.After)
				}
			}
			line := g.Line
			if !strings.HasSuffix(line, "\n") {
				line += "\n"
			}
			if at > 0 && out[at-1] != '\n' {
				line = "\n" + line
			}
			out = append(append(append([]byte(nil), out[:at]...), line...), out[at:]...)
		}
		if bytes.Equal(out, live) || !parsesAsBefore(live, out) {
			continue
		}
		if err := w.writeForPerson(rel, abs, &readRec{data: live, id: id, fi: fi}, out); err != nil {
			continue
		}
		w.warn(v.saveOrphans(w.orphans), "the replaced files to check were not recorded")
	}
}

// parsesAsBefore reports whether after parses as a note when before does:
// lines put back never make a note unreadable.
func parsesAsBefore(before, after []byte) bool {
	if _, err := note.Parse("guard", before); err != nil {
		return true
	}
	_, err := note.Parse("guard", after)
	return err == nil
}

// lineIndex returns the offset of line (with its ending) as a whole line in
// text, or -1.
func lineIndex(text []byte, line string) int {
	for off := 0; ; {
		i := bytes.Index(text[off:], []byte(line))
		if i < 0 {
			return -1
		}
		if at := off + i; at == 0 || text[at-1] == '\n' {
			return at
		}
		off += i + 1
	}
}
