package importer

import (
	"strings"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// This file splits a Markdown document into sections (one per heading) made
// of simple blocks: paragraphs, list items and tables. Fenced code blocks and
// HTML comments are dropped; nothing else of CommonMark is needed to read
// session logs.

// mdSection is the text under one heading, up to the next heading of any
// level. The section before the first heading has level 0 and no title.
type mdSection struct {
	level    int
	title    string // cleaned heading text
	parent   *mdSection
	children []*mdSection
	blocks   []mdBlock
	kind     secKind // cached by kindOf
	kindSet  bool
}

type blockKind int

const (
	blockPara blockKind = iota
	blockItem
	blockTable
)

// mdBlock is one paragraph, list item or table.
type mdBlock struct {
	kind   blockKind
	indent int        // list items: columns before the marker
	check  byte       // list items and paragraphs: 'x' checked, ' ' unchecked, 0 none
	text   string     // raw text (inline Markdown kept), lines joined by spaces
	more   []string   // list items: continuation lines, joined into text at the end
	rows   [][]string // tables: header first, separator row removed
}

// ancestors returns s and its parents, innermost first.
func (s *mdSection) ancestors() []*mdSection {
	var out []*mdSection
	for p := s; p != nil; p = p.parent {
		out = append(out, p)
	}
	return out
}

// subtree returns s and all its descendants in document order.
func (s *mdSection) subtree() []*mdSection {
	out := []*mdSection{s}
	for _, c := range s.children {
		out = append(out, c.subtree()...)
	}
	return out
}

var (
	reHeading   = lazyregexp.New(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	reFence     = lazyregexp.New("^\\s*(```|~~~)")
	reListItem  = lazyregexp.New(`^(\s*)([-*+]|\d{1,3}[.)])\s+(.*)$`)
	reCheckbox  = lazyregexp.New(`^\[([ xX✓✔])\]\s*`)
	reRule      = lazyregexp.New(`^\s{0,3}([-*_])(\s*([-*_]))*\s*$`)
	reTableSep  = lazyregexp.New(`^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$`)
	reLabelLine = lazyregexp.New(`^\s*\*\*[^*]{1,80}\*\*\s*:|^\s*\*\*[^*]{1,80}:\*\*`)
)

// parseSections splits a Markdown document into a tree of sections. The
// returned slice holds every section in document order; the first is the
// level-0 preamble.
func parseSections(doc string) []*mdSection {
	root := &mdSection{}
	all := []*mdSection{root}
	cur := root
	var b blockBuilder
	lines := strings.Split(strings.ReplaceAll(doc, "\r\n", "\n"), "\n")
	inFence, inComment := "", false
	for _, ln := range lines {
		switch {
		case inFence != "":
			if m := reFence().FindStringSubmatch(ln); m != nil && m[1] == inFence {
				inFence = ""
			}
			continue
		case inComment:
			if i := strings.Index(ln, "-->"); i >= 0 {
				inComment = false
				ln = ln[i+3:]
			} else {
				continue
			}
		}
		ln = stripComments(ln, &inComment)
		if m := reFence().FindStringSubmatch(ln); m != nil {
			inFence = m[1]
			b.flushPara(cur)
			continue
		}
		if m := reHeading().FindStringSubmatch(ln); m != nil {
			b.flush(cur)
			sec := &mdSection{level: len(m[1]), title: clean(m[2])}
			parent := cur
			for parent.level >= sec.level {
				parent = parent.parent
			}
			sec.parent = parent
			parent.children = append(parent.children, sec)
			all = append(all, sec)
			cur = sec
			continue
		}
		b.addLine(cur, ln)
	}
	b.flush(cur)
	for _, sec := range all {
		for i := range sec.blocks {
			if blk := &sec.blocks[i]; len(blk.more) > 0 {
				blk.text += " " + strings.Join(blk.more, " ")
				blk.more = nil
			}
		}
	}
	return all
}

// stripComments removes "<!-- … -->" parts of a line; an unterminated
// comment sets *open and drops the rest of the line.
func stripComments(ln string, open *bool) string {
	for {
		i := strings.Index(ln, "<!--")
		if i < 0 {
			return ln
		}
		j := strings.Index(ln[i:], "-->")
		if j < 0 {
			*open = true
			return ln[:i]
		}
		ln = ln[:i] + ln[i+j+3:]
	}
}

// blockBuilder accumulates the lines of the current block.
type blockBuilder struct {
	para      []string
	table     [][]string
	lastItem  int  // index in the section's blocks of the open list item, or -1
	blankSeen bool // a blank line followed the open list item
	itemOpen  bool
}

func (b *blockBuilder) flushPara(s *mdSection) {
	if len(b.para) > 0 {
		text := strings.Join(b.para, " ")
		blk := mdBlock{kind: blockPara, text: text}
		if m := reCheckbox().FindStringSubmatch(text); m != nil {
			blk.check = checkByte(m[1])
			blk.text = text[len(m[0]):]
		}
		s.blocks = append(s.blocks, blk)
		b.para = nil
	}
}

func (b *blockBuilder) flushTable(s *mdSection) {
	if len(b.table) > 0 {
		s.blocks = append(s.blocks, mdBlock{kind: blockTable, rows: b.table})
		b.table = nil
	}
}

func (b *blockBuilder) flush(s *mdSection) {
	b.flushPara(s)
	b.flushTable(s)
	b.itemOpen = false
}

func checkByte(s string) byte {
	if s == " " {
		return ' '
	}
	return 'x'
}

// addLine feeds one non-heading, non-code line of section s.
func (b *blockBuilder) addLine(s *mdSection, ln string) {
	trimmed := strings.TrimSpace(ln)
	switch {
	case trimmed == "":
		b.flushPara(s)
		b.flushTable(s)
		if b.itemOpen {
			b.blankSeen = true
		}
	case strings.HasPrefix(trimmed, "|"):
		b.flushPara(s)
		b.itemOpen = false
		if !reTableSep().MatchString(trimmed) {
			b.table = append(b.table, splitRow(trimmed))
		}
	case reRule().MatchString(ln):
		b.flush(s)
	default:
		b.flushTable(s)
		if m := reListItem().FindStringSubmatch(ln); m != nil {
			b.flushPara(s)
			blk := mdBlock{kind: blockItem, indent: indentWidth(m[1]), text: m[3]}
			if c := reCheckbox().FindStringSubmatch(blk.text); c != nil {
				blk.check = checkByte(c[1])
				blk.text = blk.text[len(c[0]):]
			}
			s.blocks = append(s.blocks, blk)
			b.lastItem, b.itemOpen, b.blankSeen = len(s.blocks)-1, true, false
			return
		}
		indent := indentWidth(ln[:len(ln)-len(strings.TrimLeft(ln, " \t"))])
		if b.itemOpen && len(b.para) == 0 && (!b.blankSeen || indent >= 2) && !reLabelLine().MatchString(ln) {
			it := &s.blocks[b.lastItem]
			it.more = append(it.more, trimmed)
			return
		}
		b.itemOpen = false
		if reLabelLine().MatchString(ln) {
			b.flushPara(s)
		}
		b.para = append(b.para, trimmed)
	}
}

func indentWidth(ws string) int {
	n := 0
	for _, r := range ws {
		if r == '\t' {
			n += 4
		} else {
			n++
		}
	}
	return n
}

// splitRow splits a table row on '|' outside code spans and escapes.
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	var cur strings.Builder
	inCode := false
	for i := 0; i < len(row); i++ {
		c := row[i]
		switch {
		case c == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			inCode = !inCode
			cur.WriteByte(c)
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	cells = append(cells, strings.TrimSpace(cur.String()))
	return cells
}

var (
	reLabelBold  = lazyregexp.New(`^\*\*([^*]{1,80}?)\s*:?\s*\*\*\s*:?\s*(.*)$`)
	reLabelPlain = lazyregexp.New(`^([A-Za-z][A-Za-z /()-]{0,40}?)\s*:\s+(.*)$`)
)

// boldLabel splits "**Key**: value" / "**Key:** value" into its key
// (lower-cased, cleaned) and value (raw). ok is false when text does not
// start with a bold label followed by a colon.
func boldLabel(text string) (key, value string, ok bool) {
	t := strings.TrimSpace(text)
	m := reLabelBold().FindStringSubmatch(t)
	if m == nil {
		return "", "", false
	}
	// Require a colon after the key, inside or right after the bold span.
	head := t[:len(t)-len(m[2])]
	if !strings.Contains(head, ":") {
		return "", "", false
	}
	return strings.ToLower(clean(m[1])), strings.TrimSpace(m[2]), true
}

// plainLabel splits "Key: value" where Key is short text without markup.
func plainLabel(text string) (key, value string, ok bool) {
	m := reLabelPlain().FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return "", "", false
	}
	return strings.ToLower(strings.TrimSpace(m[1])), strings.TrimSpace(m[2]), true
}
