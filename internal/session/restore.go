package session

import (
	"bytes"
	"strings"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/notemerge"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// appendOnly lists, per canonical note, the sections whose entries are never
// lost: an entry the engine wrote and committed that a save drops — an
// editor saving a buffer it had not reloaded — is put back by the next
// operation that writes the note, and the person's other changes are
// kept. blocks marks sections whose entries are H3 blocks (a heading and its
// lines) rather than single lines.
var appendOnly = map[string][]struct {
	title  string
	blocks bool
}{
	CurrentStateNote: {{SecUpdates, false}, {SecDecisions, false}, {SecBlockers, false}, {SecInvocations, false}, {SecHandoffs, false}, {SecVerdicts, false}, {SecModes, false}},
	DecisionsNote:    {{"Decisions", false}},
	ViolationsNote:   {{"Violations", true}},
	HistoryNote:      {{SecRecent, true}, {SecOlder, false}},
}

// logLineRe matches the entry lines of the canonical logs that carry no
// block id: a decision (- 2026-11-22 · [[…), a history entry (### [[…, or
// - [[… among the older ones), a violation row (| 2026-11-22T…).
var logLineRe = lazyregexp.New(`^(- \d{4}-\d\d-\d\d · \[\[|### \[\[|- \[\[|\| \d{4}-\d\d-\d\dT)`)

// isEntryLine reports whether line is an entry of an append-only section:
// a line ending in a block id, or an entry line of a canonical log. A merge
// with another writer's version never lets that version delete one
// (vault.Change.Protect).
func isEntryLine(line []byte) bool {
	return notemerge.IsEntryLine(line) || logLineRe().Match(line)
}

// unit is one entry of an append-only section: its key and its byte range in
// the body; an H3 block also has its keyed lines.
type unit struct {
	key        string
	start, end int
	sub        []unit
}

var (
	blockIDRe  = lazyregexp.New(`\^[a-z]-\d+` + MachineSuffix + `\s*$`)
	wikiLinkRe = lazyregexp.New(`\[\[([^\]|#]+)`)
)

// entryKey is what identifies an entry line: its block id (^u-12), else its
// first wikilink's target, else (a table row) the trimmed line. Lines
// without one (blank lines, table headers) are not entries.
func entryKey(line []byte) string {
	t := bytes.TrimSpace(line)
	if m := blockIDRe().Find(t); m != nil {
		return string(bytes.TrimSpace(m))
	}
	if m := wikiLinkRe().FindSubmatch(t); m != nil {
		return "[[" + string(m[1])
	}
	if len(t) > 1 && t[0] == '|' && !bytes.HasPrefix(bytes.TrimLeft(t, "| "), []byte("-")) && !bytes.Contains(t, []byte("| Timestamp |")) {
		return string(t)
	}
	return ""
}

// units returns the entries of the H2 section s of d.
func units(d *Doc, s markdown.Section, blocks bool) []unit {
	var out []unit
	lines := markdown.Lines(d.Body, s.BodyStart, s.End)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		content := l.Content()
		if blocks && bytes.HasPrefix(content, []byte("### ")) {
			u := unit{key: "### " + strings.TrimSpace(string(content[4:])), start: l.Offset}
			if m := wikiLinkRe().FindSubmatch(content); m != nil {
				u.key = "[[" + string(m[1])
			}
			j := i + 1
			for ; j < len(lines) && !bytes.HasPrefix(lines[j].Content(), []byte("### ")); j++ {
				if k := entryKey(lines[j].Content()); k != "" {
					u.sub = append(u.sub, unit{key: k, start: lines[j].Offset, end: lines[j].Offset + len(lines[j].Text)})
				}
			}
			u.end = s.End
			if j < len(lines) {
				u.end = lines[j].Offset
			}
			out = append(out, u)
			i = j - 1
			continue
		}
		if k := entryKey(content); k != "" {
			out = append(out, unit{key: k, start: l.Offset, end: l.Offset + len(l.Text)})
		}
	}
	return out
}

// hasKey reports whether key occurs in body as a whole token: a block id
// not followed by another digit, a wikilink target followed by ']', '|' or
// '#', a table row as a whole line.
func hasKey(body []byte, key string) bool {
	k := []byte(key)
	for off := 0; ; {
		i := bytes.Index(body[off:], k)
		if i < 0 {
			return false
		}
		end := off + i + len(k)
		next := byte('\n')
		if end < len(body) {
			next = body[end]
		}
		switch {
		case key[0] == '^':
			if (next < '0' || next > '9') && machineTail(body, end) == end {
				return true
			}
		case strings.HasPrefix(key, "[["):
			if next == ']' || next == '|' || next == '#' {
				return true
			}
		default:
			return true
		}
		off = end
	}
}

// machineTail returns the end of the machine name that follows an entry
// id's number at body[j] (^u-12-laptop: "-laptop"), or j when none does.
func machineTail(body []byte, j int) int {
	if j+1 >= len(body) || body[j] != '-' || body[j+1] < 'a' || body[j+1] > 'z' {
		return j
	}
	k := j + 2
	for k < len(body) && (body[k] >= 'a' && body[k] <= 'z' || body[k] >= '0' && body[k] <= '9') {
		k++
	}
	return k
}

// restoreDropped puts back into d (a canonical note as read) the entries of
// its append-only sections that base (the engine's last committed version of
// it) has and d lacks anywhere, each after the entry that precedes it in
// base, and keeps version from going back. It returns the restored note, or
// d itself when nothing was missing.
func (s *Service) restoreDropped(tx *vault.Tx, d *Doc, name string) (*Doc, error) {
	specs := appendOnly[name]
	if specs == nil {
		return d, nil
	}
	baseBytes, same, _, err := tx.Base(d.Path)
	if err != nil || same || baseBytes == nil {
		return d, err
	}
	b, err := openDoc(s.MD, d.Path, baseBytes)
	if err != nil {
		return d, nil // a base that does not parse restores nothing
	}
	if name == CurrentStateNote && b.Prop("session") != d.Prop("session") {
		return d, nil // another session: its entries are not this one's
	}
	n := &Doc{Path: d.Path, Note: d.Note, MD: d.MD, Body: d.Body}
	restored := false
	for _, spec := range specs {
		bs, ok := b.Section(spec.title)
		if !ok {
			continue
		}
		missing := restoreUnits(n, b, units(b, bs, spec.blocks), spec.title, spec.blocks)
		restored = restored || missing
	}
	if bv, dv := b.IntProp("version"), d.IntProp("version"); bv > dv {
		n.Set("version", bv)
		restored = true
	}
	if !restored {
		return d, nil
	}
	out, err := n.Bytes()
	if err != nil {
		return d, nil
	}
	return s.ParseDoc(d.Path, out)
}

// KeyIndex answers hasKey for one body in constant time per key: the block
// ids and wikilink targets in it are collected once (a note with thousands
// of entries would otherwise be scanned once per entry).
type KeyIndex struct {
	body []byte
	keys map[string]bool
}

// NewKeyIndex collects the block ids (^u-12, digits taken whole, and a
// machine's name after them: ^u-12-laptop) and the
// wikilink targets ([[target, ended by ']', '|' or '#') of body.
func NewKeyIndex(body []byte) *KeyIndex {
	x := &KeyIndex{body: body, keys: map[string]bool{}}
	for i := 0; i < len(body); i++ {
		switch {
		case body[i] == '^' && i+3 < len(body) && body[i+1] >= 'a' && body[i+1] <= 'z' && body[i+2] == '-':
			j := i + 3
			for j < len(body) && body[j] >= '0' && body[j] <= '9' {
				j++
			}
			if j > i+3 {
				x.keys[string(body[i:machineTail(body, j)])] = true
			}
		case body[i] == '[' && i+1 < len(body) && body[i+1] == '[':
			if k := bytes.IndexAny(body[i+2:], "]|#"); k > 0 {
				x.keys[string(body[i:i+2+k])] = true
			}
		}
	}
	return x
}

// Has is hasKey(body, key).
func (x *KeyIndex) Has(key string) bool {
	if key[0] == '^' || strings.HasPrefix(key, "[[") {
		return x.keys[key]
	}
	return bytes.Contains(x.body, []byte(key))
}

// restoreUnits queues, on d, the insertion of every base unit whose key d
// lacks, and recurses into H3 blocks both have. It reports whether anything
// was missing.
func restoreUnits(d *Doc, b *Doc, bu []unit, title string, blocks bool) bool {
	ds, ok := d.Section(title)
	if !ok {
		var text []byte
		for _, u := range bu {
			if !hasKey(d.Body, u.key) {
				text = append(text, b.Body[u.start:u.end]...)
			}
		}
		if len(text) == 0 {
			return false
		}
		d.AppendNewSection(title, string(text))
		return true
	}
	du := units(d, ds, blocks)
	at := map[string]unit{}
	for _, u := range du {
		at[u.key] = u
	}
	missing := false
	var atEnd []byte // entries for a section that has none: appended as one block
	present := NewKeyIndex(d.Body)
	for i, u := range bu {
		if present.Has(u.key) {
			if dn, ok := at[u.key]; ok && len(u.sub) > 0 {
				missing = restoreSub(d, b, u.sub, dn) || missing
			}
			continue
		}
		missing = true
		// After the nearest earlier base entry d has, else before d's
		// first entry, else after the section's content.
		pos := -1
		for k := i - 1; k >= 0 && pos < 0; k-- {
			if p, ok := at[bu[k].key]; ok {
				pos = p.end
			}
		}
		if pos < 0 && len(du) > 0 {
			pos = du[0].start
		}
		if pos < 0 {
			atEnd = append(atEnd, b.Body[u.start:u.end]...)
			continue
		}
		insertText(d, pos, b.Body[u.start:u.end])
	}
	if len(atEnd) > 0 {
		d.AppendLine(title, strings.TrimRight(string(atEnd), "\r\n"))
	}
	return missing
}

// restoreSub restores the keyed lines of a base H3 block into d's block dn.
func restoreSub(d *Doc, b *Doc, sub []unit, dn unit) bool {
	have := map[string]unit{}
	for _, u := range dn.sub {
		have[u.key] = u
	}
	missing := false
	for i, u := range sub {
		if hasKey(d.Body[dn.start:dn.end], u.key) {
			continue
		}
		pos := -1
		for k := i - 1; k >= 0 && pos < 0; k-- {
			if p, ok := have[sub[k].key]; ok {
				pos = p.end
			}
		}
		if pos < 0 {
			if len(dn.sub) > 0 {
				pos = dn.sub[0].start
			} else {
				pos = dn.end
			}
		}
		insertText(d, pos, b.Body[u.start:u.end])
		missing = true
	}
	return missing
}

// insertText queues text (whole lines) at body offset pos, giving the line
// before it a line ending when it has none.
func insertText(d *Doc, pos int, text []byte) {
	t := string(text)
	if !strings.HasSuffix(t, "\n") {
		t += d.Newline()
	}
	if pos > 0 && d.Body[pos-1] != '\n' {
		t = d.Newline() + t
	}
	d.Edit(pos, pos, t)
}
