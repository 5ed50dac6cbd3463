package notemerge

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/testenv"
)

// propMerges is how many random merges TestMergeNotesProperty runs (the
// acceptance of the person's-text issue: at least 100,000 in `make test`).
var propMerges = flag.Int("merge.n", testenv.Size(20_000, 100_000), "random merges in TestMergeNotesProperty (20,000; make test runs 100,000)")

// propShow is how many violations TestMergeNotesProperty lists.
var propShow = flag.Int("merge.show", 10, "violations TestMergeNotesProperty lists, each in one line")

// propOnly runs the one merge of that number (-1: all).
var propOnly = flag.Int("merge.only", -1, "the one merge TestMergeNotesProperty runs (-1: all)")

// propSeed seeds TestMergeNotesProperty.
var propSeed = flag.Uint64("merge.seed", 25, "random seed of TestMergeNotesProperty")

// pline is one line of a generated note: its text (without the line
// ending), where it came from (the ancestor's line number, or -1), and the
// section it is in.
type pline struct {
	text    string
	base    int
	section string
	list    bool
}

// propNote is a generated version of a note's body and what made it.
type propNote struct {
	lines   []pline
	updated string
	version int
	// added are the blocks of new lines a side inserted into a person's
	// section or at the note's end, each at one ancestor gap (the number of
	// ancestor lines before it).
	blocks []personBlock
	// removed are the ancestor lines the side deleted or replaced; touched
	// those and the ancestor lines next to which it inserted lines.
	removed, touched map[int]bool
	// edited are the entries (by id) whose text the side changed.
	edited map[string]string
	next   int // the side's next unique number
}

type personBlock struct {
	gap   int
	lines []string
}

// Lines a person writes that are not unique: blank lines, template lines,
// comments, fences, a block id of their own and one shaped like the
// engine's (text in a person's section).
var sharedLines = []string{"", "", "", "same", "%% a comment %%", "```", "```go", "- [ ] todo", "see above ^gh", "- one ^u-1", "---"}

func genBase(rng *rand.Rand) *propNote {
	n := &propNote{updated: "2026-11-23T10:00:00Z", version: 3, removed: map[int]bool{}, edited: map[string]string{}}
	add := func(section string, list bool, texts ...string) {
		for _, t := range texts {
			n.lines = append(n.lines, pline{text: t, base: len(n.lines), section: section, list: list})
		}
	}
	add("", false, "# Current session", "", "> [!info] Kept by sessionvault", "")
	for _, sec := range []string{"Updates", "Decisions", "Blockers"} {
		add(sec, false, "## "+sec)
		add(sec, true, "")
		for i := 0; i < rng.IntN(4); i++ {
			add(sec, true, entryLine(sec, fmt.Sprintf("base %s %d", sec, i), fmt.Sprintf("%c-%d", lower(sec), i+1), 10+i))
		}
		add(sec, false, "")
	}
	for s := 0; s < 1+rng.IntN(3); s++ {
		sec := fmt.Sprintf("Notes %d", s)
		add(sec, false, "## "+sec, "")
		for i := 0; i < rng.IntN(8); i++ {
			if rng.IntN(3) == 0 {
				add(sec, false, sharedLines[rng.IntN(len(sharedLines))])
			} else {
				add(sec, false, fmt.Sprintf("base line %d.%d", s, i))
			}
		}
		add(sec, false, "")
	}
	return n
}

func lower(sec string) byte { return sec[0] + 'a' - 'A' }

// entryLine is an engine entry of section sec at minute min.
func entryLine(sec, text, id string, min int) string {
	if sec == "Blockers" {
		return fmt.Sprintf("- [ ] 2026-11-23T10:%02d:00Z · **low** · %s ^%s", min, text, id)
	}
	return fmt.Sprintf("- 2026-11-23T10:%02d:00Z · note · %s ^%s", min, text, id)
}

// side makes one side's version of base: a few random engine operations
// (entries added, edited, compacted away) and a person's edits (sections
// appended, blocks inserted, lines edited and deleted, lines put into a
// list).
func side(rng *rand.Rand, base *propNote, name, suffix string) *propNote {
	n := &propNote{lines: append([]pline(nil), base.lines...), updated: base.updated, version: base.version,
		removed: map[int]bool{}, edited: map[string]string{}}
	n.version += 1 + rng.IntN(3)
	n.updated = fmt.Sprintf("2026-11-23T1%d:00:00Z", 1+rng.IntN(8))
	unique := func() string {
		n.next++
		return fmt.Sprintf("%s-%d person text", name, n.next)
	}
	block := func() []string {
		var b []string
		for i := 0; i < 1+rng.IntN(5); i++ {
			switch k := rng.IntN(10); {
			case k < 4:
				b = append(b, sharedLines[rng.IntN(len(sharedLines))])
			case k < 5:
				b = append(b, "", "", "") // a run of blank lines
			default:
				b = append(b, unique())
			}
		}
		if rng.IntN(2) == 0 {
			b = append(b, unique()) // most blocks hold a line of their own
		}
		return b
	}
	insert := func(at int, section string, list bool, texts []string) {
		ls := make([]pline, len(texts))
		for i, t := range texts {
			ls[i] = pline{text: t, base: -1, section: section, list: list}
		}
		n.lines = append(n.lines[:at], append(ls, n.lines[at:]...)...)
	}
	idn := 100
	for op := 0; op < 1+rng.IntN(6); op++ {
		switch k := rng.IntN(9); k {
		case 0, 1: // the engine adds an entry at a list's end
			sec := []string{"Updates", "Decisions", "Blockers"}[rng.IntN(3)]
			last := -1
			for i, l := range n.lines {
				if l.section == sec && l.list && strings.TrimSpace(l.text) != "" {
					last = i
				}
				if l.section == sec && l.list && last < 0 && strings.TrimSpace(l.text) == "" {
					last = i // after the heading's blank line
				}
			}
			idn++
			id := fmt.Sprintf("%c-%d%s", lower(sec), idn, suffix)
			insert(last+1, sec, true, []string{entryLine(sec, name+" entry "+id, id, 30+rng.IntN(29))})
		case 2: // the engine (or a person ticking it) edits an entry
			if i, ok := pick(rng, n.lines, func(l pline) bool { return l.list && l.base >= 0 && EntryID(l.text) != "" }); ok {
				id := EntryID(n.lines[i].text)
				t := strings.Replace(n.lines[i].text, " ^"+id, " (edited by "+name+") ^"+id, 1)
				t = strings.Replace(t, "- [ ] ", "- [x] ", 1)
				n.lines[i].text = t
				n.edited[id] = t
			}
		case 3: // a compaction takes the oldest updates away
			var drop []int
			for i, l := range n.lines {
				if l.section == "Updates" && l.list && l.base >= 0 && EntryID(l.text) != "" && len(drop) < 2 {
					drop = append(drop, i)
				}
			}
			for j := len(drop) - 1; j >= 0; j-- {
				n.removed[n.lines[drop[j]].base] = true
				delete(n.edited, EntryID(n.lines[drop[j]].text))
				n.lines = append(n.lines[:drop[j]], n.lines[drop[j]+1:]...)
			}
		case 4: // a person appends a section
			insert(len(n.lines), "", false, append([]string{"", "## " + unique()}, block()...))
		case 5: // a person inserts a block into one of their sections
			if i, ok := pick(rng, n.lines, func(l pline) bool { return !l.list && strings.HasPrefix(l.section, "Notes") }); ok {
				insert(i+1, n.lines[i].section, false, block())
			}
		case 6: // a person edits a line of theirs
			if i, ok := pick(rng, n.lines, func(l pline) bool {
				return !l.list && strings.HasPrefix(l.section, "Notes") && l.base >= 0 && !strings.HasPrefix(l.text, "## ")
			}); ok {
				n.removed[n.lines[i].base] = true
				n.lines[i] = pline{text: unique(), base: -1, section: n.lines[i].section}
			}
		case 7: // a person deletes one or two lines of theirs
			if i, ok := pick(rng, n.lines, func(l pline) bool {
				return !l.list && strings.HasPrefix(l.section, "Notes") && l.base >= 0 && !strings.HasPrefix(l.text, "## ")
			}); ok {
				for j := 0; j < 1+rng.IntN(2) && i < len(n.lines) && n.lines[i].base >= 0 && !strings.HasPrefix(n.lines[i].text, "## "); j++ {
					n.removed[n.lines[i].base] = true
					n.lines = append(n.lines[:i], n.lines[i+1:]...)
				}
			}
		case 8: // a person writes a line into a list
			if i, ok := pick(rng, n.lines, func(l pline) bool { return l.list }); ok {
				insert(i+1, n.lines[i].section, true, []string{unique() + " in a list"})
			}
		}
	}
	n.markEdits(len(base.lines))
	return n
}

// gapOf returns the ancestor gap before position i of n's lines (baseLen:
// the ancestor's number of lines).
func (n *propNote) gapOf(i, baseLen int) int {
	for ; i < len(n.lines); i++ {
		if n.lines[i].base >= 0 {
			return n.lines[i].base
		}
	}
	return baseLen
}

// markEdits records, once a side's operations are done, the ancestor lines
// it touched and the blocks of new lines it put outside the lists.
func (n *propNote) markEdits(baseLen int) {
	n.touched = map[int]bool{}
	for i := range n.removed {
		n.touched[i] = true
	}
	for i, l := range n.lines {
		if l.base < 0 {
			g := n.gapOf(i, baseLen)
			n.touched[g], n.touched[g-1] = true, true
		}
	}
	// The blocks: each run of new lines outside the lists.
	for i := 0; i < len(n.lines); {
		if n.lines[i].base >= 0 || n.lines[i].list {
			i++
			continue
		}
		j := i
		var b []string
		for j < len(n.lines) && n.lines[j].base < 0 && !n.lines[j].list {
			b = append(b, n.lines[j].text)
			j++
		}
		n.blocks = append(n.blocks, personBlock{gap: n.gapOf(j, baseLen), lines: b})
		i = j
	}
}

func pick(rng *rand.Rand, ls []pline, ok func(pline) bool) (int, bool) {
	var is []int
	for i, l := range ls {
		if ok(l) {
			is = append(is, i)
		}
	}
	if len(is) == 0 {
		return 0, false
	}
	return is[rng.IntN(len(is))], true
}

func (n *propNote) bytes() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "---\ntype: session-state\nstatus: active\nsession: s-1\nupdated: %s\nversion: %d\n---\n", n.updated, n.version)
	for _, l := range n.lines {
		b.WriteString(l.text + "\n")
	}
	return []byte(b.String())
}

// isUnique reports whether a generated line is one no other line shares.
func isUnique(t string) bool {
	return strings.Contains(t, " person text") || strings.HasPrefix(t, "base line ")
}

// checkMerge checks the merge of a and b (from o) against what each side
// did; it returns the first violation, or "".
func checkMerge(o, a, b *propNote, merged []byte, conflicted bool) string {
	if _, err := note.Parse("merged.md", merged); err != nil {
		return "the merge does not parse: " + err.Error()
	}
	m := string(merged)
	lines := strings.Split(m, "\n")
	count := map[string]int{}
	for _, l := range lines {
		count[l]++
	}
	if strings.Contains(m, "<<<<<<< ours") != conflicted {
		return fmt.Sprintf("conflict markers %v, conflicted %v", strings.Contains(m, "<<<<<<< ours"), conflicted)
	}
	if why := checkLines(o, a, b, count); why != "" {
		return why
	}
	if why := checkBlocks(o, a, b, m); why != "" {
		return why
	}
	return checkEntries(o, a, b, lines)
}

// checkLines checks the lines the sides added and the ancestor's lines
// against count, the merge's lines by number of occurrences.
func checkLines(o, a, b *propNote, count map[string]int) string {
	// Every unique line a side added: once.
	for _, s := range []*propNote{a, b} {
		for _, l := range s.lines {
			if l.base < 0 && isUnique(l.text) && count[l.text] != 1 {
				return fmt.Sprintf("added line %q is there %d times", l.text, count[l.text])
			}
		}
	}
	// Every unique ancestor line both kept: once; one deleted and the other
	// left alone near it: gone.
	for i, l := range o.lines {
		if !isUnique(l.text) {
			continue
		}
		switch {
		case !a.removed[i] && !b.removed[i]:
			if count[l.text] != 1 {
				return fmt.Sprintf("ancestor line %q, kept by both, is there %d times", l.text, count[l.text])
			}
		case a.removed[i] && !nearRun(a, b, i) || b.removed[i] && !nearRun(b, a, i):
			if count[l.text] != 0 {
				return fmt.Sprintf("ancestor line %q, deleted on one side, is there %d times", l.text, count[l.text])
			}
		}
	}
	return ""
}

// nearRemoved reports whether s deleted an ancestor line near gap.
func nearRemoved(s *propNote, gap int) bool {
	for d := -3; d <= 2; d++ {
		if s.removed[gap+d] {
			return true
		}
	}
	return false
}

// nearRun reports whether other touched the ancestor lines next to the
// run of lines s deleted that holds line i, or inside it.
func nearRun(s, other *propNote, i int) bool {
	lo, hi := i, i
	for s.removed[lo-1] {
		lo--
	}
	for s.removed[hi+1] {
		hi++
	}
	for k := lo - 2; k <= hi+2; k++ {
		if other.touched[k] {
			return true
		}
	}
	return false
}

// checkBlocks checks that each block of a person's lines is in the merge m
// in one piece where it should be.
func checkBlocks(o, a, b *propNote, m string) string {
	// Each block of a person's lines with a line of its own, inserted where
	// neither side deleted anything near: byte for byte, in one piece.
	inBase := map[string]bool{}
	for _, l := range o.lines {
		inBase[l.text] = true
	}
	for _, pair := range [][2]*propNote{{a, b}, {b, a}} {
		for _, blk := range pair[0].blocks {
			own := false
			for _, t := range blk.lines {
				own = own || isUnique(t)
			}
			// (Next to lines the side itself deleted, its block and the
			// other side's insertion at that place may interleave: which
			// of its lines replaced the deleted ones is the diff's choice.)
			// (A block holding a line the ancestor has too, a fence or a
			// "---", can be paired with the ancestor in more ways than
			// one, each as good to a line diff.)
			for _, t := range blk.lines {
				own = own && (t == "" || !inBase[t])
			}
			if !own || nearRemoved(pair[1], blk.gap) || nearRemoved(pair[0], blk.gap) {
				continue
			}
			// Its blank lines at either end are not told apart from the
			// ancestor's blank lines next to it.
			core := blk.lines
			for len(core) > 0 && core[0] == "" {
				core = core[1:]
			}
			for len(core) > 0 && core[len(core)-1] == "" {
				core = core[:len(core)-1]
			}
			if want := "\n" + strings.Join(core, "\n") + "\n"; !strings.Contains(m, want) {
				return fmt.Sprintf("block %q is not there in one piece", want)
			}
		}
	}
	return ""
}

// checkEntries checks the engine entries among the merge's lines.
func checkEntries(o, a, b *propNote, lines []string) string {
	// Every engine entry once, in its edited version; one compacted on a
	// side and not edited on the other stays away.
	ids := map[string]int{}
	text := map[string]string{}
	for _, l := range lines {
		if id := EntryID(l); id != "" && strings.HasPrefix(l, "- ") && strings.Contains(l, "2026-") {
			ids[id]++
			text[id] = l
		}
	}
	for _, s := range []*propNote{a, b} {
		for _, l := range s.lines {
			if !l.list || l.base >= 0 {
				continue
			}
			if id := EntryID(l.text); id != "" && ids[id] != 1 {
				return fmt.Sprintf("entry ^%s is there %d times", id, ids[id])
			}
		}
	}
	for i, l := range o.lines {
		id := EntryID(l.text)
		if id == "" || !l.list {
			continue
		}
		gone := a.removed[i] && b.edited[id] == "" || b.removed[i] && a.edited[id] == ""
		if gone != (ids[id] == 0) {
			return fmt.Sprintf("ancestor entry ^%s: compacted %v, there %d times", id, gone, ids[id])
		}
		want := l.text
		if t := b.edited[id]; t != "" {
			want = t
		}
		if t := a.edited[id]; t != "" {
			want = t
		}
		if !gone && text[id] != want {
			return fmt.Sprintf("entry ^%s is %q, want %q", id, text[id], want)
		}
	}
	return ""
}

// Random engine operations and a person's random edits on two sides of a
// common ancestor, merged: every line a side added once, every block of a
// person's lines the other side did not touch byte for byte and in one
// piece, ancestor lines kept or deleted as the sides did, every engine
// entry once in its edited version, and the result parses.
func TestMergeNotesProperty(t *testing.T) {
	t.Parallel()
	// The merges allocate a lot and keep little: a larger heap between
	// collections saves a sixth of the test's CPU time.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var violations, conflicts atomic.Int64
	var first sync.Once
	workers := 4
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < *propMerges; i += workers {
				if *propOnly >= 0 && i != *propOnly {
					continue
				}
				rng := rand.New(rand.NewPCG(*propSeed, uint64(i)))
				o := genBase(rng)
				a := side(rng, o, "A", "")
				b := side(rng, o, "B", "-mb")
				ob, ab, bb := o.bytes(), a.bytes(), b.bytes()
				merged, conflicted := mergeTest(ob, ab, bb)
				if conflicted {
					conflicts.Add(1)
				}
				if why := checkMerge(o, a, b, merged, conflicted); why != "" {
					if v := violations.Add(1); v <= int64(*propShow) {
						t.Logf("violation in merge %d: %s", i, why)
					}
					first.Do(func() {
						t.Errorf("merge %d (-merge.seed %d): %s\n--- base\n%s--- ours\n%s--- theirs\n%s--- merged\n%s", i, *propSeed, why, ob, ab, bb, merged)
					})
				}
			}
		}(w)
	}
	wg.Wait()
	t.Logf("%d random merges, %d with a conflict marked, %d violations", *propMerges, conflicts.Load(), violations.Load())
	if violations.Load() > 0 {
		t.Errorf("%d of %d merges violate the merge's promises", violations.Load(), *propMerges)
	}
}
