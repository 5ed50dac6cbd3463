package vault

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/note"
)

// MergeNotes is the three-way merge of two versions of a note, ours and
// theirs, descended from base: the merge of `remote sync` and of the git
// merge driver (`sessionvault merge-driver`, registered for *.md through
// .gitattributes), DESIGN §6.
//
//   - Properties merge per key: a key changed on one side takes that change;
//     changed on both, `updated` and other times take the later, `version`,
//     `progress` and other integers the larger, anything else ours.
//   - Entries (lines ending in a block id, ^u-12) are unioned by id: an entry
//     added on both sides is there once, one edited on one side takes that
//     edit, and each run of entries is ordered by the time it starts with
//     (oldest first, or newest first where the section already was).
//   - Other lines merge as text, as git's line merge does. Lines both sides
//     only added at one place are all kept, ours first (two appends to a
//     note's end lose nothing and need no one). Where both sides changed the
//     same lines of a section that holds entries, both sides' lines are kept
//     (an engine section never stops a merge); elsewhere (a person's
//     section) that region alone gets git's conflict markers, and
//     conflicted is true.
//
// A project's current state (type: session-state) whose two sides hold
// different sessions is not merged line by line: one side is taken whole
// (SessionWinner), and the other side's session is kept apart by the
// reconciliation that follows a merge (session.Service.Reconcile).
//
// A side that does not parse as a note is merged as text with markers.
// MergeNotes is pure and never fails.
func MergeNotes(base, ours, theirs []byte) (merged []byte, conflicted bool) {
	switch {
	case bytes.Equal(ours, theirs), bytes.Equal(base, theirs):
		return ours, false
	case bytes.Equal(base, ours):
		return theirs, false
	}
	if len(base) == 0 {
		// Added on both sides (two machines made the same note): what the
		// two have in common stands for the ancestor, so that each side's
		// own lines are its additions.
		base = commonLines(ours, theirs)
	}
	of, ob := splitNote(base)
	af, ab := splitNote(ours)
	bf, bb := splitNote(theirs)
	if w, clash := SessionWinner(of, af, bf); clash {
		if w == 0 {
			return ours, false
		}
		return theirs, false
	}
	fm := mergeProperties(of, af, bf)
	body, conflicted := mergeBody(ob, ab, bb)
	return append(fm, body...), conflicted
}

// commonLines is the lines a and b have in common, in order (the lines of
// a that the line diff from a to b keeps).
func commonLines(a, b []byte) []byte {
	al := splitLines(a)
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
	lines := splitLines(fm)
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

// lockKeys are a task note's lock properties (seed 002 §8.2.1), merged as
// one.
var lockKeys = map[string]bool{"locked_by": true, "locked_at": true, "lock_expires": true}

// lockWinner returns the properties of the side whose task lock stands when
// both sides hold it for different holders — two clones took it before a
// sync: the earlier taker (locked_at; on a tie the smaller holder), so every
// clone keeps the same one and the other learns it does not hold it. nil
// when the sides do not both hold it.
func lockWinner(a, b map[string]string) map[string]string {
	ha, hb := propScalar(a["locked_by"]), propScalar(b["locked_by"])
	if ha == "" || hb == "" || ha == hb {
		return nil
	}
	ta, tb := propScalar(a["locked_at"]), propScalar(b["locked_at"])
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

// ---- body ----

// mergeBody merges two bodies line by line (the hunks of Merge3), unions
// entries by block id and orders them by time; conflicts outside sections
// that hold entries get conflict markers.
func mergeBody(o, a, b []byte) ([]byte, bool) {
	ol := splitLines(o)
	ha := lineHunks(o, a, 0)
	engineAt := engineSections(ol, a, b)
	conflicted := false
	merged := applyHunks(ol, ha, dropAddedBy(ha, lineHunks(o, b, 1)), func(out *bytes.Buffer, start, end int, ra, rb []byte) {
		list := engineAt(start, ra, rb)
		if start != end && !list {
			// Both changed the same lines of a person's section.
			conflicted = true
			writeLines(out, []byte("<<<<<<< ours\n"))
			writeLines(out, ra)
			writeLines(out, []byte("=======\n"))
			writeLines(out, rb)
			writeLines(out, []byte(">>>>>>> theirs\n"))
			return
		}
		// Lines both sides only added at one place (two appends to a note's
		// end), or a section of entries: both kept, ours first, then what
		// theirs has that ours does not (in a list of entries, no blank
		// line from theirs splits it). An ancestor line one side kept
		// unchanged and the other deleted (an update compaction moved to
		// the session's log) stays deleted.
		anc, inA, inB := lineSet(ol[start:end]), lineSet(splitLines(ra)), lineSet(splitLines(rb))
		var kept []string
		for _, l := range splitLines(ra) {
			if t := strings.TrimRight(l, "\r\n"); strings.TrimSpace(t) == "" || !anc[t] || inB[t] {
				kept = append(kept, l)
			}
		}
		// In a list, theirs' entries go before the blank lines ending ours
		// (the blank line that closes the section stays last).
		tail := len(kept)
		for list && tail > 0 && strings.TrimSpace(kept[tail-1]) == "" {
			tail--
		}
		for _, l := range kept[:tail] {
			writeLines(out, []byte(l))
		}
		for _, l := range splitLines(rb) {
			t := strings.TrimRight(l, "\r\n")
			if blank := strings.TrimSpace(t) == ""; blank && !list || !blank && !inA[t] && !anc[t] {
				writeLines(out, []byte(l))
			}
		}
		for _, l := range kept[tail:] {
			writeLines(out, []byte(l))
		}
	})
	return orderEntries(dropDoubledAdditions(merged, o, a, b), o, a, b), conflicted
}

// dropDoubledAdditions removes, from the end, the copies of a non-blank
// line that both sides added (each has it more often than the ancestor)
// beyond what the side with more copies has: the same line reached the two
// sides by two routes (a machine's edit merged on each) and landed at two
// places.
func dropDoubledAdditions(merged, o, a, b []byte) []byte {
	count := func(lines []string) map[string]int {
		m := map[string]int{}
		for _, l := range lines {
			if t := strings.TrimRight(l, "\r\n"); strings.TrimSpace(t) != "" {
				m[t]++
			}
		}
		return m
	}
	ml := splitLines(merged)
	cm, co, ca, cb := count(ml), count(splitLines(o)), count(splitLines(a)), count(splitLines(b))
	extra := map[string]int{}
	for l, n := range cm {
		if ca[l] > co[l] && cb[l] > co[l] && n > max(ca[l], cb[l]) {
			extra[l] = n - max(ca[l], cb[l])
		}
	}
	if len(extra) == 0 {
		return merged
	}
	drop := make([]bool, len(ml))
	for i := len(ml) - 1; i >= 0; i-- {
		if t := strings.TrimRight(ml[i], "\r\n"); extra[t] > 0 {
			extra[t]--
			drop[i] = true
		}
	}
	var out strings.Builder
	for i, l := range ml {
		if !drop[i] {
			out.WriteString(l)
		}
	}
	return []byte(out.String())
}

// lineSet is the set of lines (without line endings).
func lineSet(lines []string) map[string]bool {
	m := make(map[string]bool, len(lines))
	for _, l := range lines {
		m[strings.TrimRight(l, "\r\n")] = true
	}
	return m
}

// engineSections returns whether a conflict at ancestor line start, whose
// two sides are ra and rb, lies in a section that holds entries (in the
// ancestor, or on either side).
func engineSections(ol []string, a, b []byte) func(start int, ra, rb []byte) bool {
	heading := make([]string, len(ol)+1) // the ## heading each ancestor line is under
	cur := ""
	for i, l := range ol {
		if strings.HasPrefix(l, "## ") {
			cur = strings.TrimSpace(l)
		}
		heading[i] = cur
	}
	heading[len(ol)] = cur
	withEntries := map[string]bool{}
	for _, text := range [][]byte{[]byte(strings.Join(ol, "")), a, b} {
		h := ""
		for _, l := range splitLines(text) {
			if strings.HasPrefix(l, "## ") {
				h = strings.TrimSpace(l)
			}
			if IsEntryLine([]byte(l)) {
				withEntries[h] = true
			}
		}
	}
	return func(start int, ra, rb []byte) bool {
		if withEntries[heading[start]] {
			return true
		}
		for _, l := range splitLines(append(append([]byte(nil), ra...), rb...)) {
			if IsEntryLine([]byte(l)) {
				return true
			}
		}
		return false
	}
}

// entryTimeRe finds the time an entry line starts with
// (`- 2026-11-23T10:00:00Z ·`, `- [ ] 2026-…`).
var entryTimeRe = lazyRegexp(`^- (?:\[.\] )?(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)?) `)

// orderEntries makes each block id appear once (the version edited since
// the ancestor, ours first) and orders each run of consecutive timed entries
// by time: oldest first, unless ours had that run newest first.
func orderEntries(merged, o, a, b []byte) []byte {
	lines := splitLines(merged)
	orig := map[string]string{}
	for _, l := range splitLines(o) {
		if id := lineID(l); id != "" {
			orig[id] = l
		}
	}
	// One line per id: the first seen that differs from the ancestor, else
	// the first.
	first := map[string]int{}
	drop := make([]bool, len(lines))
	for i, l := range lines {
		id := lineID(l)
		if id == "" {
			continue
		}
		j, seen := first[id]
		if !seen {
			first[id] = i
			continue
		}
		if lines[j] == orig[id] && l != orig[id] {
			lines[j] = l // the edit wins, in the first place
		}
		drop[i] = true
	}
	var kept []string
	for i, l := range lines {
		if !drop[i] {
			kept = append(kept, l)
		}
	}
	newestFirst := descendingRuns(a)
	for i := 0; i < len(kept); {
		if EntryTime(kept[i]).IsZero() {
			i++
			continue
		}
		j := i
		for j < len(kept) && !EntryTime(kept[j]).IsZero() {
			j++
		}
		run := kept[i:j]
		desc := newestFirst[strings.TrimRight(run[0], "\r\n")] || newestFirst[strings.TrimRight(run[len(run)-1], "\r\n")]
		sort.SliceStable(run, func(x, y int) bool {
			tx, ty := EntryTime(run[x]), EntryTime(run[y])
			if desc {
				return tx.After(ty)
			}
			return tx.Before(ty)
		})
		i = j
	}
	return []byte(strings.Join(kept, ""))
}

// EntryID is the block id an entry line ends in (" ^u-12" gives "u-12"),
// or "".
func EntryID(l string) string { return lineID(l) }

// lineID is the block id of an entry line, or "".
func lineID(l string) string {
	if m := blockIDRe().FindStringSubmatch(l); m != nil {
		return m[1]
	}
	return ""
}

// EntryTime is the time an entry line (a list item ending in a block id)
// starts with, zero when it has none; a time without a zone is UTC.
func EntryTime(l string) time.Time {
	if lineID(l) == "" {
		return time.Time{}
	}
	m := entryTimeRe().FindStringSubmatch(l)
	if m == nil {
		return time.Time{}
	}
	t, _ := note.ParseTime(m[1], time.UTC)
	return t
}

// descendingRuns returns the lines of text's runs of timed entries that are
// newest first (strictly later somewhere, and never earlier, down the run).
func descendingRuns(text []byte) map[string]bool {
	out := map[string]bool{}
	lines := splitLines(text)
	for i := 0; i < len(lines); {
		if EntryTime(lines[i]).IsZero() {
			i++
			continue
		}
		j := i + 1
		desc, asc := false, false
		for j < len(lines) && !EntryTime(lines[j]).IsZero() {
			t0, t1 := EntryTime(lines[j-1]), EntryTime(lines[j])
			desc = desc || t1.Before(t0)
			asc = asc || t1.After(t0)
			j++
		}
		if desc && !asc {
			for _, l := range lines[i:j] {
				out[strings.TrimRight(l, "\r\n")] = true
			}
		}
		i = j
	}
	return out
}
