package notemerge

import (
	"bytes"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
)

// Ownership tells the note merge (MergeNotes) which parts of a note are
// the engine's lists of entries. The zero value owns nothing: every line of
// every note is a person's text.
type Ownership struct {
	// List reports whether the section titled title (the text of a level 1
	// or 2 heading; "" for the lines before the first one) of the note at
	// path (vault-relative, slash-separated; "" when not known), whose type
	// property is noteType ("" when it has none), is a list the engine
	// keeps: entries are merged by id there, and what two machines add at
	// one place is unioned, never marked as a conflict.
	List func(path, noteType, title string) bool
	// EntryID returns the id of line (without its line ending) when it is
	// an entry the engine wrote ("u-12" for "- … ^u-12"; "u-12-laptop" from
	// a second machine), else "". Only lines of List sections are asked.
	EntryID func(line string) string
	// Owned reports whether the section titled title of the note at path
	// (type noteType) is one the engine renders: its lists and its own
	// prose (an objective, next steps). Where two machines' sessions clash
	// in a current state, the winner's session keeps these whole. Nil: the
	// lists alone.
	Owned func(path, noteType, title string) bool
	// Record reports whether the note at path (type noteType) is one the
	// engine assembles from what several machines held — a session's
	// record, which each machine's reconciliation joins the lines of a
	// session it lost into: there, a line both sides added (each joined it)
	// is kept once. Nil: no such notes.
	Record func(path, noteType string) bool
}

// mline is one line of a version of a note's body as the merge compares
// it: two versions share a line when they share its key; text is what is
// written. A person's line is keyed by its content (its line ending aside:
// a last line without one is the same line once a side goes on after it);
// an engine entry by its id (an edit of the entry is a change of its text);
// a list the engine keeps by its section (its text: all its lines).
type mline struct {
	key  string
	text string
}

// Key prefixes of mline.
const (
	keyText  = "T"
	keyEntry = "E"
	keyList  = "L"
)

func (l mline) isList() bool  { return strings.HasPrefix(l.key, keyList) }
func (l mline) isEntry() bool { return strings.HasPrefix(l.key, keyEntry) }
func (l mline) blank() bool {
	return strings.HasPrefix(l.key, keyText) && strings.TrimSpace(l.text) == ""
}

// textLine is a person's line (or any line outside the engine's entries).
func textLine(s string) mline { return mline{key: keyText + strings.TrimRight(s, "\r\n"), text: s} }

// noteBody is one version of a body, split for the merge: seq is its lines
// with each list's content (the lines after the list's heading through its
// last non-blank one) as one line; lists holds those contents by key.
type noteBody struct {
	seq   []mline
	lists map[string][]mline
}

// part is one part of a body: the lines before its first level 1 or 2
// heading (title "", head == start), or such a heading (from head) and the
// lines under it (from start) up to the next one (end). Byte offsets.
type part struct {
	title            string
	head, start, end int
}

// parts splits body at its level 1 and 2 headings (the sections a note's
// owner is known by); the part before the first heading comes first, empty
// or not.
func parts(body []byte) []part {
	out := []part{{}}
	for _, s := range markdown.ScanSections(body) {
		if s.Level > 2 {
			continue
		}
		out[len(out)-1].end = s.Start
		out = append(out, part{title: s.Title, head: s.Start, start: s.BodyStart})
	}
	out[len(out)-1].end = len(body)
	return out
}

// splitBody splits body into lines and lists: isList says which sections
// are lists, entryID which of their lines are entries.
func splitBody(body []byte, isList func(title string) bool, entryID func(string) string) noteBody {
	nb := noteBody{lists: map[string][]mline{}}
	regions := parts(body)
	seen := map[string]int{}
	for _, r := range regions {
		for _, l := range SplitLines(body[r.head:r.start]) {
			nb.seq = append(nb.seq, textLine(l))
		}
		lines := SplitLines(body[r.start:r.end])
		if !isList(r.title) {
			for _, l := range lines {
				nb.seq = append(nb.seq, textLine(l))
			}
			continue
		}
		last := len(lines)
		for last > 0 && strings.TrimSpace(lines[last-1]) == "" {
			last--
		}
		key := keyList + r.title + "\x00" + strconv.Itoa(seen[r.title])
		seen[r.title]++
		var content []mline
		for _, l := range lines[:last] {
			if id := entryID(strings.TrimRight(l, "\r\n")); id != "" {
				content = append(content, mline{key: keyEntry + id, text: l})
			} else {
				content = append(content, textLine(l))
			}
		}
		nb.lists[key] = content
		nb.seq = append(nb.seq, mline{key: key, text: strings.Join(texts(content), "")})
		for _, l := range lines[last:] {
			nb.seq = append(nb.seq, textLine(l))
		}
	}
	return nb
}

func texts(ls []mline) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.text
	}
	return out
}

// mergeBody merges three versions of a note's body (see MergeNotes).
func mergeBody(path, typ string, o, a, b []byte, own Ownership) ([]byte, bool) {
	isList := func(title string) bool { return own.List != nil && own.List(path, typ, title) }
	entryID := own.EntryID
	if entryID == nil {
		entryID = func(string) string { return "" }
	}
	record := own.Record != nil && own.Record(path, typ)
	ob, ab, bb := splitBody(o, isList, entryID), splitBody(a, isList, entryID), splitBody(b, isList, entryID)
	conflicted := false
	merged := merge3(ob.seq, ab.seq, bb.seq, func(start, end int, ra, rb []mline) []mline {
		if holdsList(ob.seq[start:end]) || holdsList(ra) || holdsList(rb) {
			// A list changed on both sides at one place: both sides'
			// lines (each list once, below).
			return append(append([]mline(nil), ra...), rb...)
		}
		out, c := mergeText(blankOnly(ob.seq[start:end]), ra, rb)
		conflicted = conflicted || c
		return out
	})
	nl := "\n"
	if bytes.Contains(a, []byte("\r\n")) {
		nl = "\r\n"
	}
	var out strings.Builder
	write := func(s string) {
		if out.Len() > 0 && !strings.HasSuffix(out.String(), "\n") {
			out.WriteString(nl) // a last line without a line ending met more lines
		}
		out.WriteString(s)
	}
	if record {
		merged = dropDoubled(merged, ob.seq, ab.seq, bb.seq)
	}
	done := map[string]bool{}
	for _, l := range merged {
		if !l.isList() {
			write(l.text)
			continue
		}
		if done[l.key] {
			continue
		}
		done[l.key] = true
		for _, e := range mergeList(l.key, ob, ab, bb) {
			write(e.text)
		}
	}
	return []byte(out.String()), conflicted
}

// dropDoubled removes, from the end, the copies of a person's line (not
// blank) that both sides added — each has it more often than the ancestor
// — beyond what the side with more copies has: in a record, the same line
// reached the two sides by two machines' joins and landed at two places.
func dropDoubled(merged, o, a, b []mline) []mline {
	count := func(ls []mline) map[string]int {
		m := map[string]int{}
		for _, l := range ls {
			if strings.HasPrefix(l.key, keyText) && !l.blank() {
				m[l.key]++
			}
		}
		return m
	}
	cm, co, ca, cb := count(merged), count(o), count(a), count(b)
	extra := map[string]int{}
	for k, n := range cm {
		if ca[k] > co[k] && cb[k] > co[k] && n > max(ca[k], cb[k]) {
			extra[k] = n - max(ca[k], cb[k])
		}
	}
	if len(extra) == 0 {
		return merged
	}
	drop := make([]bool, len(merged))
	for i := len(merged) - 1; i >= 0; i-- {
		if k := merged[i].key; extra[k] > 0 {
			extra[k]--
			drop[i] = true
		}
	}
	out := merged[:0:0]
	for i, l := range merged {
		if !drop[i] {
			out = append(out, l)
		}
	}
	return out
}

func holdsList(ls []mline) bool {
	for _, l := range ls {
		if l.isList() {
			return true
		}
	}
	return false
}

// blankOnly reports whether ls holds no line but blank ones.
func blankOnly(ls []mline) bool {
	for _, l := range ls {
		if !l.blank() {
			return false
		}
	}
	return true
}

// mergeText resolves a region where both sides changed a person's text at
// one place: ra and rb are what each side made of it; insertion says that
// neither replaced any ancestor line there but blank ones (both only
// inserted, or also changed blank lines: never a conflict). Two
// insertions are both kept whole, ours first — or only the longer, when it
// begins or ends with the other (the same text reached both sides). Two
// different changes of the same lines keep their common first and last
// lines once and put git's conflict markers around the rest.
func mergeText(insertion bool, ra, rb []mline) ([]mline, bool) {
	if insertion {
		if r, ok := contained(ra, rb); ok {
			return r, false
		}
		return append(append([]mline(nil), ra...), rb...), false
	}
	p := 0
	for p < len(ra) && p < len(rb) && ra[p] == rb[p] {
		p++
	}
	s := 0
	for s < len(ra)-p && s < len(rb)-p && ra[len(ra)-1-s] == rb[len(rb)-1-s] {
		s++
	}
	out := append([]mline(nil), ra[:p]...)
	out = append(out, textLine("<<<<<<< ours\n"))
	out = append(out, ra[p:len(ra)-s]...)
	out = append(out, textLine("=======\n"))
	out = append(out, rb[p:len(rb)-s]...)
	out = append(out, textLine(">>>>>>> theirs\n"))
	out = append(out, ra[len(ra)-s:]...)
	return out, true
}

// contained returns the longer of x and y when it begins or ends with the
// other (compared by key).
func contained(x, y []mline) ([]mline, bool) {
	if len(x) > len(y) {
		x, y = y, x
	}
	same := func(off int) bool {
		for i := range x {
			if x[i].key != y[off+i].key {
				return false
			}
		}
		return true
	}
	if same(0) || same(len(y)-len(x)) {
		return y, true
	}
	return nil, false
}

// mergeList merges the three versions of the list key (a version without
// it counts as the ancestor's; a list new to both sides merges against an
// empty one): entries by id, other lines as text. Where both sides changed
// the list at one place, what both have there is kept: ours, then theirs
// (without its leading and trailing blank lines: no blank line splits a
// run of entries), then ours' trailing blank lines — less an ancestor
// entry one side left as it was and the other deleted (a compaction moved
// it). Each id is kept once, in the version edited since the ancestor
// (ours when both were); runs of timed entries are ordered by time.
func mergeList(key string, o, a, b noteBody) []mline {
	ol := o.lists[key]
	al, ok := a.lists[key]
	if !ok {
		al = ol
	}
	bl, ok := b.lists[key]
	if !ok {
		bl = ol
	}
	ov, av, bv := entryVersions(ol), entryVersions(al), entryVersions(bl)
	// deleted reports whether l, an ancestor entry left as it was on one
	// side, was deleted on the other (whose entries are other).
	deleted := func(l mline, other map[string]string) bool {
		anc, inO := ov[l.key]
		_, inOther := other[l.key]
		return l.isEntry() && inO && l.text == anc && !inOther
	}
	merged := merge3(ol, al, bl, func(start, end int, ra, rb []mline) []mline {
		if start == end {
			if r, ok := contained(ra, rb); ok {
				return r
			}
		}
		keep := func(ls []mline, other map[string]string) []mline {
			var out []mline
			for _, l := range ls {
				if !deleted(l, other) {
					out = append(out, l)
				}
			}
			return out
		}
		ra, rb = keep(ra, bv), keep(rb, av)
		core := len(ra)
		for core > 0 && ra[core-1].blank() {
			core--
		}
		i, j := 0, len(rb)
		for i < j && rb[i].blank() {
			i++
		}
		for j > i && rb[j-1].blank() {
			j--
		}
		switch {
		case i == j: // theirs has only blank lines here
			return ra
		case core == 0: // ours has only blank lines here
			return rb
		}
		out := append([]mline(nil), ra[:core]...)
		out = append(out, rb[i:j]...)
		return append(out, ra[core:]...)
	})
	// Each entry once, in its edited version.
	seen := map[string]bool{}
	out := merged[:0:0]
	for _, l := range merged {
		if l.isEntry() {
			if seen[l.key] {
				continue
			}
			seen[l.key] = true
			anc, inO := ov[l.key]
			switch at, inA := av[l.key]; {
			case inA && (!inO || at != anc):
				l.text = at
			default:
				if bt, inB := bv[l.key]; inB && (!inO || bt != anc) {
					l.text = bt
				} else if inA {
					l.text = at
				}
			}
		}
		out = append(out, l)
	}
	orderRuns(out, descending(al))
	return out
}

// entryVersions maps each entry of ls (by key) to its first line's text.
func entryVersions(ls []mline) map[string]string {
	m := map[string]string{}
	for _, l := range ls {
		if _, dup := m[l.key]; l.isEntry() && !dup {
			m[l.key] = l.text
		}
	}
	return m
}

// entryTimes is the time each line of ls starts with when it is an entry
// that starts with one, else zero.
func entryTimes(ls []mline) []time.Time {
	out := make([]time.Time, len(ls))
	for i, l := range ls {
		if l.isEntry() {
			if m := entryTimeRe().FindStringSubmatch(l.text); m != nil {
				out[i], _ = note.ParseTime(m[1], time.UTC)
			}
		}
	}
	return out
}

// descending returns the keys of the entries in ls's runs of timed entries
// that are newest first (later somewhere, never earlier, down the run).
func descending(ls []mline) map[string]bool {
	out := map[string]bool{}
	ts := entryTimes(ls)
	for i := 0; i < len(ls); {
		if ts[i].IsZero() {
			i++
			continue
		}
		j := i + 1
		desc, asc := false, false
		for j < len(ls) && !ts[j].IsZero() {
			desc = desc || ts[j].Before(ts[j-1])
			asc = asc || ts[j].After(ts[j-1])
			j++
		}
		if desc && !asc {
			for _, l := range ls[i:j] {
				out[l.key] = true
			}
		}
		i = j
	}
	return out
}

// orderRuns sorts each run of consecutive timed entries of ls by time, in
// place: newest first when its first or last entry is in desc.
func orderRuns(ls []mline, desc map[string]bool) {
	ts := entryTimes(ls)
	for i := 0; i < len(ls); {
		if ts[i].IsZero() {
			i++
			continue
		}
		j := i
		for j < len(ls) && !ts[j].IsZero() {
			j++
		}
		run := make([]int, j-i)
		for k := range run {
			run[k] = i + k
		}
		down := desc[ls[i].key] || desc[ls[j-1].key]
		sort.SliceStable(run, func(x, y int) bool {
			if down {
				return ts[run[x]].After(ts[run[y]])
			}
			return ts[run[x]].Before(ts[run[y]])
		})
		sorted := make([]mline, len(run))
		for k, r := range run {
			sorted[k] = ls[r]
		}
		copy(ls[i:j], sorted)
		i = j
	}
}

// mhunk is a change of the note merge's line merge.
type mhunk = hunkOf[mline]

// merge3 merges a and b, both descended from o, as git's three-way merge
// does: a change one side made alone is applied; both sides' changes to
// separate ancestor lines are both applied (an insertion just before a line
// the other side changed goes first); where both changed the same ancestor
// lines [start, end), or inserted at one point (start == end), and made
// different lines of them (ra, rb), resolve says what the region becomes.
// A line whose key both keep but whose text one side changed is a change
// of that line.
func merge3(o, a, b []mline, resolve func(start, end int, ra, rb []mline) []mline) []mline {
	enc := lineEncoder{ids: map[string]rune{}}
	var out []mline
	pos := 0 // next ancestor line to copy
	eachRegion(enc.hunks(o, a, 0), enc.hunks(o, b, 1), func(start, end int, ha, hb []mhunk) {
		out = append(out, o[pos:start]...)
		switch {
		case hb == nil:
			out = region(out, o, start, end, ha)
		case ha == nil:
			out = region(out, o, start, end, hb)
		default:
			ra, rb := region(nil, o, start, end, ha), region(nil, o, start, end, hb)
			if equalLines(ra, rb) {
				out = append(out, ra...)
			} else {
				out = append(out, resolve(start, end, ra, rb)...)
			}
		}
		pos = end
	})
	return append(out, o[pos:]...)
}

func equalLines(x, y []mline) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// lineEncoder gives each distinct key a rune, so that the line diff runs
// on runes (diffmatchpatch's line mode).
type lineEncoder struct {
	ids  map[string]rune
	next rune
}

func (e *lineEncoder) encode(ls []mline) []rune {
	out := make([]rune, len(ls))
	for i, l := range ls {
		r, ok := e.ids[l.key]
		if !ok {
			e.next++
			if e.next == 0xD800 { // runes a string cannot hold
				e.next = 0xE000
			}
			r = e.next
			e.ids[l.key] = r
		}
		out[i] = r
	}
	return out
}

// align pairs the lines of o and x that a line diff keeps (mo: the line of
// x each line of o pairs with, or -1; mx the other way), as patience diff
// does: first the lines whose key is once in each, in the run both have in
// the same order that holds the most text, then diffmatchpatch's diff
// between those anchors — or diffmatchpatch's diff alone, when that keeps
// more text. So a line both versions kept is paired even where a diff
// could keep as many blank lines instead.
func (e *lineEncoder) align(o, x []mline) (mo, mx []int) {
	ro, rx := e.encode(o), e.encode(x)
	mo, mx = make([]int, len(o)), make([]int, len(x))
	for k := range mo {
		mo[k] = -1
	}
	for k := range mx {
		mx[k] = -1
	}
	count := map[rune][2]int{}
	for _, r := range ro {
		c := count[r]
		c[0]++
		count[r] = c
	}
	for _, r := range rx {
		c := count[r]
		c[1]++
		count[r] = c
	}
	at := map[rune]int{}
	for j, r := range rx {
		if count[r] == [2]int{1, 1} {
			at[r] = j
		}
	}
	// The unique pairs in o's order, and the run of them rising in x that
	// holds the most text (a longest increasing subsequence weighted by
	// line length, with a Fenwick tree of the best run ending at each line
	// of x): "base line 12" is a better anchor than "---".
	type pair struct{ i, j, prev, weight int }
	var pairs []pair
	for i, r := range ro {
		if j, ok := at[r]; ok {
			pairs = append(pairs, pair{i: i, j: j, prev: -1})
		}
	}
	best := make([]int, len(x)+1) // Fenwick tree over j+1: the index in pairs of the heaviest run ending at or before j
	for k := range best {
		best[k] = -1
	}
	heavier := func(a, b int) int {
		if a < 0 || b >= 0 && pairs[b].weight > pairs[a].weight {
			return b
		}
		return a
	}
	top := -1
	for k := range pairs {
		p := -1
		for q := pairs[k].j; q > 0; q -= q & -q { // runs ending before j
			p = heavier(p, best[q])
		}
		pairs[k].prev = p
		// Its text, and on a tie, the line that stayed nearer its place.
		pairs[k].weight = (1+len(strings.TrimSpace(o[pairs[k].i].text)))<<12 - min(abs(pairs[k].j-pairs[k].i), 1<<12-1)
		if p >= 0 {
			pairs[k].weight += pairs[p].weight
		}
		for q := pairs[k].j + 1; q <= len(x); q += q & -q {
			best[q] = heavier(best[q], k)
		}
		top = heavier(top, k)
	}
	var anchors []pair
	for k := top; k >= 0; k = pairs[k].prev {
		anchors = append(anchors, pairs[k])
	}
	slices.Reverse(anchors)
	anchors = append(anchors, pair{i: len(o), j: len(x)})
	patience := func(mo, mx []int) {
		i0, j0 := 0, 0
		for _, a := range anchors {
			pairDiff(ro[i0:a.i], rx[j0:a.j], i0, j0, mo, mx)
			if a.i < len(o) {
				mo[a.i], mx[a.j] = a.j, a.i
			}
			i0, j0 = a.i+1, a.j+1
		}
	}
	patience(mo, mx)
	paired := 0
	for _, j := range mo {
		if j >= 0 {
			paired++
		}
	}
	if len(anchors) == 1 || paired == min(len(o), len(x)) {
		return mo, mx // no anchor (the plain diff), or no line left to pair
	}
	// The plain diff keeps more lines where the anchors cut through runs of
	// lines both kept (a line moved, a heading kept with its blank lines):
	// take whichever keeps more text.
	po, px := make([]int, len(o)), make([]int, len(x))
	for k := range po {
		po[k] = -1
	}
	for k := range px {
		px[k] = -1
	}
	pairDiff(ro, rx, 0, 0, po, px)
	kept := func(mo []int) int {
		n := 0
		for i, j := range mo {
			if j >= 0 {
				n += 1 + len(strings.TrimSpace(o[i].text))
			}
		}
		return n
	}
	if kept(po) > kept(mo) {
		return po, px
	}
	return mo, mx
}

// pairDiff pairs the lines diffmatchpatch's diff of ro and rx keeps, in mo
// and mx (ro starts at line i0 of o, rx at line j0 of x).
func pairDiff(ro, rx []rune, i0, j0 int, mo, mx []int) {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	i, j := i0, j0
	for _, d := range dmp.DiffMainRunes(ro, rx, false) {
		n := utf8.RuneCountInString(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for k := 0; k < n; k++ {
				mo[i+k], mx[j+k] = j+k, i+k
			}
			i, j = i+n, j+n
		case diffmatchpatch.DiffDelete:
			i += n
		case diffmatchpatch.DiffInsert:
			j += n
		}
	}
}

// hunks returns the changes from o to x in ancestor order: the line diff's
// insertions, deletions and replacements, and a one-line change for each
// line both hold by key whose text x changed.
//
// Where the diff could pair an ancestor line with any of several equal
// lines of x (blank lines, mostly), it picks the one that keeps what x
// inserted there in one piece (below), so that the other side's insertion
// at that place lands before or after it, not inside: text a person
// appended keeps the blank line it starts with, a block a person inserted
// its blank lines, whatever else they changed near it.
func (e *lineEncoder) hunks(o, x []mline, side int) []mhunk {
	mo, mx := e.align(o, x)
	// Re-pair each paired ancestor line within the lines x inserted around
	// it (between the lines of x paired with its paired neighbours): with
	// the first of them, when it is equal (what x inserted there follows
	// it), else with the last (what x inserted precedes it), else with the
	// first equal one — so that an insertion stays one piece where it can.
	next := make([]int, len(o)+1) // the line of x paired with the first paired ancestor line from i on
	next[len(o)] = len(x)
	for i := len(o) - 1; i >= 0; i-- {
		next[i] = next[i+1]
		if mo[i] >= 0 {
			next[i] = mo[i]
		}
	}
	prevJ := -1
	for i := range o {
		if mo[i] < 0 {
			continue
		}
		nextJ := next[i+1]
		to := mo[i]
		switch {
		case x[prevJ+1].key == o[i].key:
			to = prevJ + 1
		case x[nextJ-1].key == o[i].key:
			to = nextJ - 1
		default:
			for j := prevJ + 1; j < mo[i]; j++ {
				if x[j].key == o[i].key {
					to = j
					break
				}
			}
		}
		mx[mo[i]], mx[to], mo[i] = -1, i, to
		prevJ = to
	}
	// A run of blank lines with x's new lines on both sides of it is part of
	// them: x replaced it (one change, not two insertions the other side's
	// insertion there could come between).
	for i := 0; i < len(o); {
		if mo[i] < 0 || !o[i].blank() {
			i++
			continue
		}
		k := i + 1
		for k < len(o) && mo[k] == mo[k-1]+1 && o[k].blank() {
			k++
		}
		if before, after := mo[i]-1, mo[k-1]+1; before >= 0 && mx[before] < 0 && after < len(x) && mx[after] < 0 {
			for ; i < k; i++ {
				mx[mo[i]], mo[i] = -1, -1
			}
		}
		i = k
	}
	var out []mhunk
	i, j := 0, 0
	for i < len(o) || j < len(x) {
		if i < len(o) && mo[i] >= 0 && mo[i] == j {
			if o[i].text != x[j].text {
				out = append(out, mhunk{start: i, end: i + 1, lines: []mline{x[j]}, side: side})
			}
			i, j = i+1, j+1
			continue
		}
		h := mhunk{start: i, end: i, side: side}
		for i < len(o) && mo[i] < 0 {
			i++
		}
		h.end = i
		for j < len(x) && mx[j] < 0 {
			h.lines = append(h.lines, x[j])
			j++
		}
		out = append(out, h)
	}
	return out
}

// engines reports whether the note at path (type typ), whose bodies are
// given, is one the engine keeps lists in or assembles (Record).
func (own Ownership) engines(path, typ string, bodies ...[]byte) bool {
	if own.Record != nil && own.Record(path, typ) {
		return true
	}
	if own.List == nil {
		return false
	}
	if own.List(path, typ, "") {
		return true
	}
	for _, b := range bodies {
		for _, p := range parts(b)[1:] {
			if own.List(path, typ, p.title) {
				return true
			}
		}
	}
	return false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// personPart is body (a version of a note descended from base) with every
// section the engine renders (Ownership.Owned, else Ownership.List) as base
// has it, or left out where base has none: what remains changed since base
// is what a person changed.
func personPart(path, typ string, base, body []byte, own Ownership) []byte {
	owned := own.Owned
	if owned == nil {
		owned = own.List
	}
	if owned == nil {
		return body
	}
	// Base's sections by title, each occurrence in order.
	inBase := map[string][][]byte{}
	for _, p := range parts(base)[1:] {
		inBase[p.title] = append(inBase[p.title], base[p.head:p.end])
	}
	ps := parts(body)
	out := append([]byte(nil), body[:ps[0].end]...)
	seen := map[string]int{}
	for _, p := range ps[1:] {
		n := seen[p.title]
		seen[p.title]++
		switch {
		case !owned(path, typ, p.title):
			out = append(out, body[p.head:p.end]...)
		case n < len(inBase[p.title]):
			out = append(out, inBase[p.title][n]...)
		}
	}
	return out
}
