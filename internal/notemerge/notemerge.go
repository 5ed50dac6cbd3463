package notemerge

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/note"
)

// MergeNotes is the three-way merge of two versions of a note, ours and
// theirs, descended from base: the merge of `remote sync` and of the git
// merge driver (`sessionvault merge-driver`, registered for *.md through
// .gitattributes). path is the note's vault-relative path ("" when not
// known); own says which of its sections are the engine's (Ownership).
//
//   - Properties merge per key: a key changed on one side takes that change;
//     changed on both, `updated` and other times take the later, `version`,
//     `progress` and other integers the larger, anything else ours.
//   - Everything outside the engine's lists — a person's sections, their
//     block ids, blank lines, comments, fences, the engine's own prose — is
//     text, merged three-way by lines as git merges: changes to separate
//     lines are all applied; what both sides inserted at one place is kept
//     whole, ours then theirs, byte for byte (once when one side's
//     insertion begins or ends the other's; a line of a session's record
//     both sides added lands once, Ownership.Record); where both changed
//     the same lines differently (blank lines aside), the lines that differ
//     get git's conflict markers in place, and conflicted is true.
//   - In a list the engine keeps (Ownership.List), its entries
//     (Ownership.EntryID) are merged by id: each id once, an entry edited
//     on one side takes that edit, one deleted on one side (a compaction
//     moved it) and untouched on the other stays deleted, and each run of
//     timed entries is ordered by time (oldest first, or newest first where
//     ours had it so). Where both sides changed a list at one place, both
//     sides' lines are kept (a list never stops a merge).
//
// A project's current state (type: session-state) whose two sides hold
// different sessions takes one side's session whole (SessionWinner): its
// properties and every section the engine renders (Ownership.Owned); the
// other side's session is kept apart by the reconciliation that follows a
// merge (session.Service.Reconcile), and what a person changed there
// outside the engine's sections is merged in as above.
//
// A side that does not parse as a note is merged as text. MergeNotes is
// pure and never fails.
func MergeNotes(path string, base, ours, theirs []byte, own Ownership) (merged []byte, conflicted bool) {
	switch {
	case bytes.Equal(ours, theirs), bytes.Equal(base, theirs):
		return ours, false
	case bytes.Equal(base, ours):
		return theirs, false
	}
	af, ab := SplitNote(ours)
	bf, bb := SplitNote(theirs)
	typ := noteType(af)
	if typ == "" {
		typ = noteType(bf)
	}
	if len(base) == 0 && own.engines(path, typ, ab, bb) {
		// A note of the engine's added on both sides (two machines made
		// the same record): what the two have in common stands for the
		// ancestor, so that each side's own lines are its additions. A
		// person's note added on both sides merges against nothing: each
		// side's text is kept whole.
		base = commonLines(ours, theirs)
	}
	of, ob := SplitNote(base)
	if w, clash := SessionWinner(of, af, bf); clash {
		// The winner's session whole; of the other side only what a
		// person changed outside the engine's sections.
		if w == 0 {
			body, conflicted := mergeBody(path, typ, ob, ab, personPart(path, typ, ob, bb, own), own)
			return append(append([]byte(nil), af...), body...), conflicted
		}
		body, conflicted := mergeBody(path, typ, ob, personPart(path, typ, ob, ab, own), bb, own)
		return append(append([]byte(nil), bf...), body...), conflicted
	}
	fm := mergeProperties(of, af, bf)
	body, conflicted := mergeBody(path, typ, ob, ab, bb, own)
	return append(fm, body...), conflicted
}

// noteType is the type property of a front matter block, or "".
func noteType(fm []byte) string {
	_, props, _, ok := splitProps(fm)
	if !ok {
		return ""
	}
	return propScalar(propMap(props)["type"])
}

// commonLines is the lines a and b have in common, in order (the lines of
// a that the line diff from a to b keeps).
func commonLines(a, b []byte) []byte {
	al := SplitLines(a)
	var out strings.Builder
	next := 0
	for _, h := range lineHunks(a, b, 0) {
		for _, l := range al[next:h.start] {
			out.WriteString(l)
		}
		next = h.end
	}
	for _, l := range al[next:] {
		out.WriteString(l)
	}
	return []byte(out.String())
}

// SessionWinner decides, for the front matter of a current-state note
// (type: session-state) at the merge base (o, nil when absent) and on the
// two sides (a: ours, b: theirs), whether the sides hold different sessions
// (clash) and which one the merged note keeps (0: ours, 1: theirs):
//
//   - the side whose session changed since the base (a session ended, or
//     ended and another started there) over the side still on the base's;
//   - where both changed: a session over none, then the one started first
//     (its start would have refused the other had the machines synced
//     before), then the smaller session id.
//
// The rule depends on nothing but the three versions, so every clone that
// merges the same two sides picks the same session.
func SessionWinner(o, a, b []byte) (winner int, clash bool) {
	ta, sa, startA := stateProps(a)
	tb, sb, startB := stateProps(b)
	if !ta || !tb || sa == sb {
		return 0, false
	}
	_, so, _ := stateProps(o)
	switch {
	case sa == so:
		return 1, true
	case sb == so:
		return 0, true
	case sa == "" || sb == "":
		if sa == "" {
			return 1, true
		}
		return 0, true
	}
	if !startA.Equal(startB) {
		if startB.Before(startA) {
			return 1, true
		}
		return 0, true
	}
	if sb < sa {
		return 1, true
	}
	return 0, true
}

// stateProps reads a front matter block as a current state's: whether it
// is one (type: session-state), its session and its start time (zero when
// absent).
func stateProps(fm []byte) (isState bool, session string, started time.Time) {
	_, props, _, ok := splitProps(fm)
	if !ok {
		return false, "", time.Time{}
	}
	m := propMap(props)
	if propScalar(m["type"]) != "session-state" {
		return false, "", time.Time{}
	}
	started, _ = time.Parse(time.RFC3339, propScalar(m["started"]))
	return true, propScalar(m["session"]), started
}

// ---- properties ----

// propBlock is one top-level property of a front matter block: its key and
// its lines (the key's line and the indented or list lines under it).
type propBlock struct {
	key   string
	lines string
}

// splitProps splits a front matter block (delimiters included) into its
// opening delimiter, properties and closing delimiter. ok is false when the
// block is not one key per top-level line.
func splitProps(fm []byte) (open string, props []propBlock, close string, ok bool) {
	lines := SplitLines(fm)
	if len(lines) < 2 {
		return "", nil, "", false
	}
	open, close = lines[0], lines[len(lines)-1]
	for _, l := range lines[1 : len(lines)-1] {
		t := strings.TrimRight(l, "\r\n")
		top := t != "" && t[0] != ' ' && t[0] != '\t' && t[0] != '-' && t[0] != '#'
		if top {
			k, _, found := strings.Cut(t, ":")
			if !found {
				return "", nil, "", false
			}
			props = append(props, propBlock{key: strings.TrimSpace(k), lines: l})
			continue
		}
		if len(props) == 0 {
			if strings.TrimSpace(t) == "" || strings.HasPrefix(t, "#") {
				props = append(props, propBlock{key: "", lines: l}) // a comment or blank line before the first key
				continue
			}
			return "", nil, "", false
		}
		props[len(props)-1].lines += l
	}
	return open, props, close, true
}

func propMap(props []propBlock) map[string]string {
	m := map[string]string{}
	for _, p := range props {
		if p.key != "" {
			m[p.key] = p.lines
		}
	}
	return m
}

// mergeProperties merges front matter blocks per key (see MergeNotes); when
// a block cannot be split into keys, the line merge of Merge3 decides.
func mergeProperties(o, a, b []byte) []byte {
	switch {
	case bytes.Equal(a, b), bytes.Equal(o, b):
		return a
	case bytes.Equal(o, a):
		return b
	}
	aOpen, ap, aClose, ok1 := splitProps(a)
	_, op, _, ok2 := splitProps(o)
	_, bp, _, ok3 := splitProps(b)
	if !ok1 || !ok3 || (len(o) > 0 && !ok2) {
		if m := mergeLines(o, a, b, nil); frontMatterParses(m) {
			return m
		}
		return a
	}
	om, am, bm := propMap(op), propMap(ap), propMap(bp)
	lock := lockWinner(am, bm)
	var out strings.Builder
	out.WriteString(aOpen)
	emitted := map[string]bool{}
	emit := func(key string) {
		if emitted[key] {
			return
		}
		emitted[key] = true
		if lock != nil && lockKeys[key] {
			out.WriteString(lock[key])
			return
		}
		ov, inO := om[key]
		av, inA := am[key]
		bv, inB := bm[key]
		switch {
		case inA && inB:
			switch {
			case av == bv || bv == ov:
				out.WriteString(av)
			case av == ov:
				out.WriteString(bv)
			default:
				out.WriteString(pickProperty(key, av, bv))
			}
		case inA: // theirs deleted it, or ours added it
			if !inO || av != ov {
				out.WriteString(av)
			}
		case inB:
			if !inO || bv != ov {
				out.WriteString(bv)
			}
		}
	}
	// Ours in order, with theirs' new keys after the key they follow.
	after := map[string][]string{}
	prev := ""
	for _, p := range bp {
		if p.key == "" {
			continue
		}
		if _, inA := am[p.key]; !inA {
			after[prev] = append(after[prev], p.key)
		}
		prev = p.key
	}
	var walk func(key string)
	walk = func(key string) {
		for _, k := range after[key] {
			emit(k)
			walk(k)
		}
	}
	walk("")
	for _, p := range ap {
		if p.key == "" {
			out.WriteString(p.lines)
			continue
		}
		emit(p.key)
		walk(p.key)
	}
	out.WriteString(aClose)
	return []byte(out.String())
}

// lockKeys are a task note's lock properties, merged as one.
var lockKeys = map[string]bool{"locked_by": true, "locked_at": true, "lock_expires": true,
	"lock_machine": true, "lock_clone": true, "lock_provisional": true}

// lockWinner returns the properties of the side whose task lock stands when
// both sides hold it for different holders (a holder being locked_by on
// the clone lock_clone names) — two clones took it before a sync. In
// order: a lock claimed on the remote beats a provisional one (taken
// offline); a lock taken once the other's lease had ended (its locked_at
// at or after the other's lock_expires) replaces it; else the earlier
// taker (locked_at; on a tie the smaller holder). So every clone keeps the
// same one, the one the remote's claim names when there is one, and the
// other learns it does not hold it. nil when the sides do not both hold
// it.
func lockWinner(a, b map[string]string) map[string]string {
	ha, hb := propScalar(a["locked_by"]), propScalar(b["locked_by"])
	if ha == "" || hb == "" {
		return nil
	}
	ha += "\x00" + propScalar(a["lock_clone"])
	hb += "\x00" + propScalar(b["lock_clone"])
	if ha == hb {
		return nil
	}
	if pa, pb := propScalar(a["lock_provisional"]) == "true", propScalar(b["lock_provisional"]) == "true"; pa != pb {
		if pa {
			return b
		}
		return a
	}
	ta, tb := propScalar(a["locked_at"]), propScalar(b["locked_at"])
	ea, eb := propScalar(a["lock_expires"]), propScalar(b["lock_expires"])
	switch {
	case ea != "" && tb >= ea && tb > ta:
		return b
	case eb != "" && ta >= eb && ta > tb:
		return a
	}
	if tb < ta || (tb == ta && hb < ha) {
		return b
	}
	return a
}

// statusRank orders a session's statuses for a merge where both sides
// changed it: the one further along wins (a session completed on one
// machine and recorded as abandoned on another is complete).
var statusRank = map[string]int{"idle": 1, "active": 2, "crashed": 3, "recovered": 4, "ending": 5, "abandoned": 6, "complete": 7}

// pickProperty chooses between two changed values of key: for status, the
// one further along (statusRank); the later time, the larger integer, else
// ours.
func pickProperty(key, a, b string) string {
	va, vb := propScalar(a), propScalar(b)
	if key == "status" && statusRank[va] > 0 && statusRank[vb] > 0 {
		if statusRank[vb] > statusRank[va] {
			return b
		}
		return a
	}
	if ta, err := time.Parse(time.RFC3339, va); err == nil {
		if tb, err := time.Parse(time.RFC3339, vb); err == nil {
			if tb.After(ta) {
				return b
			}
			return a
		}
	}
	if na, err := strconv.Atoi(va); err == nil {
		if nb, err := strconv.Atoi(vb); err == nil {
			if nb > na {
				return b
			}
			return a
		}
	}
	return a
}

// propScalar is a one-line property's value, unquoted.
func propScalar(block string) string {
	_, v, _ := strings.Cut(strings.TrimRight(block, "\r\n"), ":")
	return strings.Trim(strings.TrimSpace(v), `"'`)
}

// EntryID is the block id an entry line ends in (" ^u-12" gives "u-12"),
// or "".
func EntryID(l string) string { return blockID(l) }

// entryTimeRe finds the time an entry line starts with
// (`- 2026-11-23T10:00:00Z ·`, `- [ ] 2026-…`).
var entryTimeRe = lazyregexp.New(`^- (?:\[.\] )?(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)?) `)

// EntryTime is the time an entry line (a list item ending in a block id)
// starts with, zero when it has none; a time without a zone is UTC.
func EntryTime(l string) time.Time {
	if blockID(l) == "" {
		return time.Time{}
	}
	m := entryTimeRe().FindStringSubmatch(l)
	if m == nil {
		return time.Time{}
	}
	t, _ := note.ParseTime(m[1], time.UTC)
	return t
}
