package notemerge

import (
	"bytes"
	"sort"
	"strings"
	"unicode"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/sessionvault/sessionvault/internal/note"
)

// Merge3 merges two versions a and b of a note that both descend from
// ancestor o, line by line, and never drops a line either side added: where
// both changed the same lines (a conflict) the result holds a's lines, then
// the lines b added there that a does not have. A line of text of the body
// both added (a save made from a copy the other side had merged already) is
// there once, where a put it, not once from each side; a line a side only
// moved is no addition of it. (Not on the quick path, where a only appended
// lines: b, then a's new lines, compares no lines.) A line deleted on one side
// and kept unchanged on the other is deleted — except that a (the version
// someone else wrote) never deletes a line for which protect is true (an
// entry of an append-only section: an editor that saved a stale buffer
// dropped it). protect nil means IsEntryLine.
//
// The front matter and the body are merged separately. When the merged front
// matter would not parse (two versions of one property side by side), the
// front matter of prefer (a or b) is taken whole; the engine sets its own
// properties again on top. Merge3 is pure; it never fails.
func Merge3(o, a, b, prefer []byte, protect func(line []byte) bool) []byte {
	if protect == nil {
		protect = IsEntryLine
	}
	switch {
	case bytes.Equal(a, b):
		return a
	case bytes.Equal(o, a):
		return b
	}
	if tail, ok := appendedLines(o, a); ok && endsLike(b, o) {
		// The common case, cheaply: a only appended lines at the end (a
		// person's `>>`), and b kept o's last line last.
		return append(append([]byte(nil), b...), tail...)
	}
	of, ob := SplitNote(o)
	af, ab := SplitNote(a)
	bf, bb := SplitNote(b)
	fm := mergeLines(of, af, bf, nil)
	if len(fm) > 0 && !frontMatterParses(fm) {
		fm, _ = SplitNote(prefer)
	}
	return append(fm, mergeLines(ob, ab, bb, protect)...)
}

// frontMatterParses reports whether fm, a merged front matter block, still
// parses as one.
func frontMatterParses(fm []byte) bool {
	n, err := note.Parse("merge", append(append([]byte(nil), fm...), "x\n"...))
	return err == nil && n.HasFrontMatter()
}

// IsEntryLine reports whether line ends in an Obsidian block id, as every
// entry the engine writes does.
func IsEntryLine(line []byte) bool { _, end := blockIDAt(line); return end > 0 }

// blockID is the Obsidian block id at the end of line (" ^u-12" gives
// "u-12"), or "".
func blockID(line string) string {
	i, end := blockIDAt(line)
	return line[i:end]
}

// blockIDAt finds the Obsidian block id at the end of line — a caret after
// white space, then a letter or digit, then letters, digits and dashes;
// spaces and a line ending after it allowed — and returns its range (the
// id without the caret), or 0, 0.
func blockIDAt[T string | []byte](line T) (start, end int) {
	end = len(line)
	for end > 0 && isSpace(line[end-1]) {
		end--
	}
	i := end - 1
	for i >= 0 && line[i] != '^' {
		i--
	}
	if i < 1 || i+1 == end || !isSpace(line[i-1]) || line[i+1] == '-' {
		return 0, 0
	}
	for k := i + 1; k < end; k++ {
		if c := line[k]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return 0, 0
		}
	}
	return i + 1, end
}

// isSpace reports whether c is white space as a regular expression's \s is.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// appendedLines returns the whole lines a adds after the end of o, when that
// is all a changes.
func appendedLines(o, a []byte) ([]byte, bool) {
	if len(o) == 0 || o[len(o)-1] != '\n' || len(a) <= len(o) || !bytes.HasPrefix(a, o) {
		return nil, false
	}
	return a[len(o):], true
}

// endsLike reports whether b ends as o does, from o's last non-blank line
// on (o ends with a line ending): text appended to o's end belongs at b's
// end. (Blank lines alone say nothing: b may have added text after them.)
func endsLike(b, o []byte) bool {
	end := len(o) - 1
	for {
		i := bytes.LastIndexByte(o[:end], '\n')
		if len(bytes.TrimSpace(o[i+1:end])) > 0 || i < 0 {
			return bytes.HasSuffix(b, o[i+1:])
		}
		end = i
	}
}

// SplitNote splits a note into its front matter block (delimiters included)
// and its body. A note that does not parse is all body.
func SplitNote(src []byte) (fm, body []byte) {
	n, err := note.Parse("merge", src)
	if err != nil || !n.HasFrontMatter() {
		return nil, src
	}
	off := n.BodyOffset()
	return src[:off:off], src[off:]
}

// hunkOf says that ancestor lines [start, end) became lines (of type L);
// side says which version (0: a, 1: b) made the change.
type hunkOf[L any] struct {
	start, end int
	lines      []L
	side       int
}

// hunk is a change of the write path's line merge (lines with their line
// endings).
type hunk = hunkOf[string]

// eachRegion walks the hunks of two versions (each in ancestor order) in
// ancestor order, a region at a time: a run of hunks that change the same
// ancestor lines [start, end), or insert at one point (start == end); an
// insertion just before a line the other side changed is a region of its
// own. visit gets each side's hunks there (nil: that side changed nothing
// there).
func eachRegion[L any](ha, hb []hunkOf[L], visit func(start, end int, a, b []hunkOf[L])) {
	all := append(append([]hunkOf[L](nil), ha...), hb...)
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].start != all[j].start {
			return all[i].start < all[j].start
		}
		return all[i].start == all[i].end && all[j].start != all[j].end // insertions first
	})
	for k := 0; k < len(all); {
		start, end := all[k].start, all[k].end
		g := k + 1
		for g < len(all) && (all[g].start < end || all[g].start == start && start == end && all[g].start == all[g].end) {
			end = max(end, all[g].end)
			g++
		}
		var side [2][]hunkOf[L]
		for _, h := range all[k:g] {
			side[h.side] = append(side[h.side], h)
		}
		visit(start, end, side[0], side[1])
		k = g
	}
}

// lineHunks returns the changes from o to x as hunks in ancestor order.
func lineHunks(o, x []byte, side int) []hunk {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	ro, rx, lines := dmp.DiffLinesToRunes(string(o), string(x))
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ro, rx, false), lines)
	var out []hunk
	pos := 0
	var cur *hunk
	for _, d := range diffs {
		ls := SplitLines([]byte(d.Text))
		if d.Type == diffmatchpatch.DiffEqual {
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
			pos += len(ls)
			continue
		}
		if cur == nil {
			cur = &hunk{start: pos, end: pos, side: side}
		}
		if d.Type == diffmatchpatch.DiffDelete {
			pos += len(ls)
			cur.end = pos
		} else {
			cur.lines = append(cur.lines, ls...)
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

// SplitLines splits text into lines that keep their line endings.
func SplitLines(text []byte) []string {
	var out []string
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n')
		if i < 0 {
			out = append(out, string(text))
			break
		}
		out = append(out, string(text[:i+1]))
		text = text[i+1:]
	}
	return out
}

// mergeLines is the line merge of Merge3 for one part of a note. Changes of
// a and b to separate ancestor lines are both applied; an insertion at the
// point where the other side replaces lines goes before them. Changes to the
// same ancestor lines, or two insertions at one point, conflict (see Merge3).
func mergeLines(o, a, b []byte, protect func([]byte) bool) []byte {
	switch {
	case bytes.Equal(a, b):
		return a
	case bytes.Equal(o, a) && protect == nil:
		return b
	case bytes.Equal(o, b) && protect == nil:
		return a
	}
	ol := SplitLines(o)
	ha := lineHunks(o, a, 0)
	var addedA map[string]int // lines of text a added (net), for the body
	if protect != nil {
		addedA = netAdded(ol, ha) // before the protected lines go back in
		// a keeps the protected lines it deleted, where they were, unless
		// b deleted them too.
		for i, h := range ha {
			var keep []string
			for _, l := range ol[h.start:h.end] {
				if protect([]byte(l)) && !containsLine(h.lines, l) && HasLine(b, l) {
					keep = append(keep, l)
				}
			}
			if keep != nil {
				ha[i].lines = append(keep, h.lines...)
			}
		}
	}
	return applyHunks(ol, ha, dropAddedBy(ol, ha, lineHunks(o, b, 1), addedA), func(out *bytes.Buffer, start, end int, ra, rb []byte) {
		// A conflict: a's lines, then what b added there that neither a
		// (there) nor the ancestor (there) has. A line of text both sides
		// added elsewhere too is b's no more (dropAddedBy).
		writeLines(out, ra)
		have := map[string]bool{}
		for _, l := range SplitLines(ra) {
			have[strings.TrimRight(l, "\r\n")] = true
		}
		for _, l := range ol[start:end] {
			have[strings.TrimRight(l, "\r\n")] = true
		}
		for _, l := range SplitLines(rb) {
			t := strings.TrimRight(l, "\r\n")
			if !have[t] {
				writeLines(out, []byte(l))
			}
		}
	})
}

// applyHunks applies the hunks of a (ha) and b (hb) to the ancestor lines
// ol. Changes to separate ancestor lines are both applied; an insertion at
// the point where the other side replaces lines goes before them. Where
// both sides changed the same ancestor lines [start, end), or inserted at
// one point, and their results ra and rb differ, conflict writes the region
// (equal results are written once).
func applyHunks(ol []string, ha, hb []hunk, conflict func(out *bytes.Buffer, start, end int, ra, rb []byte)) []byte {
	var out bytes.Buffer
	pos := 0 // next ancestor line to copy
	eachRegion(ha, hb, func(start, end int, a, b []hunk) {
		for ; pos < start; pos++ {
			out.WriteString(ol[pos])
		}
		switch {
		case b == nil:
			writeRegion(&out, ol, start, end, a)
		case a == nil:
			writeRegion(&out, ol, start, end, b)
		default:
			var ra, rb bytes.Buffer
			writeRegion(&ra, ol, start, end, a)
			writeRegion(&rb, ol, start, end, b)
			if bytes.Equal(ra.Bytes(), rb.Bytes()) {
				writeLines(&out, ra.Bytes())
			} else {
				conflict(&out, start, end, ra.Bytes(), rb.Bytes())
			}
		}
		pos = end
	})
	for ; pos < len(ol); pos++ {
		out.WriteString(ol[pos])
	}
	return out.Bytes()
}

// dropAddedBy takes out of hb (b's changes to the ancestor lines ol) the
// lines that a adds too, and drops an insertion left with blank lines only:
//   - an entry line (IsEntryLine: a block id, unique in a note) that a's
//     changes ha hold, every copy of it. Both sides adding one entry (a
//     writer that read the engine's new version and saved it with an edit)
//     would otherwise show it twice where the two diffs place it
//     differently: an entry put into an empty section is, to a line diff,
//     "blank, entry" after the heading or "entry, blank" after the blank
//     line.
//   - a line of text (hasText) that both sides added, by count (textA: what
//     a added, netAdded): as many of b's copies as both added. Both adding
//     it at different places (b merged a copy of a's file that a saved
//     again, beside a line one of them moved) would otherwise show it
//     twice. The counts are net: a line a side only moved (deleted here,
//     put there) is no addition of it, so b's copy of a line a moved stays,
//     and a line b moved is never taken out of its new place. a's changes
//     are always written, so a copy taken out of b is still there once.
//     textA nil (a front matter, whose lines repeat by design: two lists
//     may each gain "  - x") takes out entries only.
//
// Blank lines and lines of markup alone ("---", "```") are left: two sides
// may well each add one.
func dropAddedBy(ol []string, ha, hb []hunk, textA map[string]int) []hunk {
	entries := map[string]bool{}
	for _, h := range ha {
		for _, l := range h.lines {
			if IsEntryLine([]byte(l)) {
				entries[strings.TrimRight(l, "\r\n")] = true
			}
		}
	}
	both := map[string]int{} // copies of a line of text to take out of hb
	if len(textA) > 0 {
		for k, nb := range netAdded(ol, hb) {
			if n := min(nb, textA[k]); n > 0 && hasText(k) {
				both[k] = n
			}
		}
	}
	if len(entries) == 0 && len(both) == 0 {
		return hb
	}
	out := hb[:0]
	for _, h := range hb {
		var keep []string
		text := false
		for _, l := range h.lines {
			k := strings.TrimRight(l, "\r\n")
			if entries[k] {
				continue
			}
			if n := both[k]; n > 0 { // (an entry is in both only when in entries)
				both[k] = n - 1
				continue
			}
			keep = append(keep, l)
			text = text || strings.TrimSpace(l) != ""
		}
		if len(keep) < len(h.lines) && !text && h.start == h.end {
			continue
		}
		h.lines = keep
		out = append(out, h)
	}
	return out
}

// netAdded counts, per line (without its line ending), how many more copies
// of it the changes hs put in than they take out of the ancestor lines ol:
// a line a side only moved counts 0.
func netAdded(ol []string, hs []hunk) map[string]int {
	m := map[string]int{}
	for _, h := range hs {
		for _, l := range h.lines {
			m[strings.TrimRight(l, "\r\n")]++
		}
		for _, l := range ol[h.start:h.end] {
			m[strings.TrimRight(l, "\r\n")]--
		}
	}
	return m
}

// hasText reports whether line holds a letter or a digit: a line of text,
// not a blank line or one of markup alone.
func hasText(line string) bool {
	for _, r := range line {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// HasLine reports whether text holds l (with its line ending) as a line.
func HasLine(text []byte, l string) bool {
	for off := 0; ; {
		i := bytes.Index(text[off:], []byte(l))
		if i < 0 {
			return false
		}
		if at := off + i; at == 0 || text[at-1] == '\n' {
			return true
		}
		off += i + 1
	}
}

func containsLine(lines []string, l string) bool {
	for _, x := range lines {
		if x == l {
			return true
		}
	}
	return false
}

// writeLines appends text to out, first ending out's last line when it
// has no line ending (a last line without one met a conflict).
func writeLines(out *bytes.Buffer, text []byte) {
	if len(text) > 0 && out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		out.WriteByte('\n')
	}
	out.Write(text)
}

// writeRegion writes ancestor lines [start, end) with hunks (inside that
// range, in order) applied.
func writeRegion(out *bytes.Buffer, ol []string, start, end int, hunks []hunk) {
	for _, l := range region(nil, ol, start, end, hunks) {
		out.WriteString(l)
	}
}

// region appends ancestor lines o[start:end] with hunks (inside that range,
// in order) applied.
func region[L any](out, o []L, start, end int, hunks []hunkOf[L]) []L {
	pos := start
	for _, h := range hunks {
		out = append(out, o[pos:h.start]...)
		out = append(out, h.lines...)
		pos = h.end
	}
	return append(out, o[pos:end]...)
}
