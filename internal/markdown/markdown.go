// Package markdown finds the structure of a note's body — its sections,
// tables and task items — with their byte ranges, using one configured
// goldmark parser (GFM tables and task lists, Obsidian wikilinks). Edits are
// made by splicing bytes at those ranges; the AST is never rendered back to
// markdown. The package is pure: no I/O.
package markdown

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"go.abhg.dev/goldmark/wikilink"
)

// Parser is a configured goldmark parser. Build one with New and reuse it;
// it is safe for concurrent use.
type Parser struct {
	md goldmark.Markdown
}

// New returns the parser sessionvault uses: CommonMark plus GFM tables,
// task lists and strikethrough, and wikilinks ([[target#frag|label]]). GFM's
// autolinks are left out: they change no structure the engine reads, and
// their patterns cost a few milliseconds at every process start.
func New() *Parser {
	return &Parser{md: goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList, &wikilink.Extender{}))}
}

// Section is a heading and the bytes it governs. Offsets are into the
// source given to Parse.
type Section struct {
	Level int    // 1-6
	Title string // heading text, trimmed, without closing #s
	Line  int    // 1-based line of the heading in the source
	// Start is the offset of the heading line, BodyStart the offset of the
	// line after it, End the offset of the next heading of the same or a
	// higher level (smaller number), or the end of the source.
	Start, BodyStart, End int
}

// Table is a GFM table: Start is the offset of its header line, End the
// offset just after its last row's line.
type Table struct {
	Start, End int
	Line       int // 1-based
}

// Fence is a fenced code block at the top level: its info string (e.g.
// "markdown") and the byte range of its content, fences excluded.
type Fence struct {
	Info       string
	Start, End int
	Line       int // 1-based line of the first content line
}

// Doc is the structure of one parsed source.
type Doc struct {
	Sections []Section // every heading at the top level of the document, in order
	Tables   []Table
	Fences   []Fence
}

// Parse parses src (a note's body) and returns its structure. It never fails:
// any byte sequence is some markdown.
func (p *Parser) Parse(src []byte) *Doc {
	root := p.md.Parser().Parse(text.NewReader(src), parser.WithContext(parser.NewContext()))
	d := &Doc{}
	for c := root.FirstChild(); c != nil; c = c.NextSibling() {
		switch n := c.(type) {
		case *ast.Heading:
			d.Sections = append(d.Sections, headingSection(src, n))
		case *extast.Table:
			d.Tables = append(d.Tables, tableRange(src, n))
		case *ast.FencedCodeBlock:
			if n.Lines().Len() > 0 {
				f := Fence{Start: n.Lines().At(0).Start, End: n.Lines().At(n.Lines().Len() - 1).Stop}
				if n.Info != nil {
					f.Info = strings.TrimSpace(string(n.Info.Segment.Value(src)))
				}
				f.Line = 1 + bytes.Count(src[:f.Start], []byte{'\n'})
				d.Fences = append(d.Fences, f)
			}
		}
	}
	for i := range d.Sections {
		d.Sections[i].End = len(src)
		for j := i + 1; j < len(d.Sections); j++ {
			if d.Sections[j].Level <= d.Sections[i].Level {
				d.Sections[i].End = d.Sections[j].Start
				break
			}
		}
	}
	return d
}

func clamp(off, n int) int {
	if off < 0 {
		return 0
	}
	if off > n {
		return n
	}
	return off
}

func headingSection(src []byte, h *ast.Heading) Section {
	anchor := h.Pos()
	if h.Lines().Len() > 0 {
		anchor = h.Lines().At(0).Start
	}
	anchor = clamp(anchor, len(src))
	start := LineStart(src, anchor)
	title := ""
	if h.Lines().Len() > 0 {
		seg := h.Lines().At(0)
		title = strings.TrimSpace(string(seg.Value(src)))
	}
	title = strings.TrimSpace(strings.TrimRight(title, "#"))
	body := LineEnd(src, anchor)
	if n := h.Lines().Len(); n > 0 {
		// A setext heading's body starts after its underline, which
		// goldmark keeps out of the heading's lines.
		last := LineEnd(src, clamp(h.Lines().At(n-1).Start, len(src)))
		under := bytes.TrimSpace(src[last:LineEnd(src, last)])
		if atx := bytes.HasPrefix(bytes.TrimLeft(src[start:], " "), []byte("#")); !atx && len(under) > 0 && isSetextUnderline(under) {
			body = LineEnd(src, last)
		}
	}
	return Section{
		Level:     h.Level,
		Title:     title,
		Line:      1 + bytes.Count(src[:start], []byte{'\n'}),
		Start:     start,
		BodyStart: body,
	}
}

func tableRange(src []byte, t *extast.Table) Table {
	start := LineStart(src, clamp(t.Pos(), len(src)))
	end := start
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		for c := r.FirstChild(); c != nil; c = c.NextSibling() {
			if c.Lines().Len() > 0 {
				seg := c.Lines().At(c.Lines().Len() - 1)
				if e := LineEnd(src, clamp(seg.Start, len(src))); e > end {
					end = e
				}
			}
		}
	}
	if end == start {
		end = LineEnd(src, start)
	}
	return Table{Start: start, End: end, Line: 1 + bytes.Count(src[:start], []byte{'\n'})}
}

// WikiLinks returns the targets of the wikilinks in src, in order, as
// goldmark reads them: [[demo/tasks/x|x]] gives "demo/tasks/x"; a link's
// fragment and alias are dropped, and links inside code, embeds (![[...]])
// and links to a heading of the same note ([[#Foo]]) are left out.
func (p *Parser) WikiLinks(src []byte) []string {
	root := p.md.Parser().Parse(text.NewReader(src), parser.WithContext(parser.NewContext()))
	var out []string
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*wikilink.Node); ok && entering && !l.Embed && len(l.Target) > 0 {
			out = append(out, string(l.Target))
		}
		return ast.WalkContinue, nil
	})
	return out
}

// Find returns the first section with the given level and title (compared
// case-insensitively), and whether there is one.
func (d *Doc) Find(level int, title string) (Section, bool) {
	for _, s := range d.Sections {
		if s.Level == level && strings.EqualFold(s.Title, title) {
			return s, true
		}
	}
	return Section{}, false
}

// TablesIn returns the tables that start inside [start, end).
func (d *Doc) TablesIn(start, end int) []Table {
	var out []Table
	for _, t := range d.Tables {
		if t.Start >= start && t.Start < end {
			out = append(out, t)
		}
	}
	return out
}

// LineStart returns the offset of the start of the line holding off.
func LineStart(src []byte, off int) int {
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// LineEnd returns the offset just after the line ending of the line holding
// off, or len(src) for the last line without one.
func LineEnd(src []byte, off int) int {
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return len(src)
	}
	return off + i + 1
}

// Lines splits src[start:end] into lines, each with its offset; line endings
// are kept in Text.
func Lines(src []byte, start, end int) []Line {
	var out []Line
	for off := start; off < end; {
		e := LineEnd(src, off)
		if e > end {
			e = end
		}
		out = append(out, Line{Offset: off, Text: src[off:e]})
		off = e
	}
	return out
}

// Line is one line of a source with its offset.
type Line struct {
	Offset int
	Text   []byte // including its line ending, if any
}

// Content returns the line without its line ending.
func (l Line) Content() []byte { return bytes.TrimRight(l.Text, "\r\n") }

// TableRows splits a GFM table into rows of trimmed cell texts: the header
// first, the delimiter row skipped. Escaped pipes (\|) stay in their cell.
func TableRows(src []byte, t Table) [][]string {
	var rows [][]string
	for i, l := range Lines(src, t.Start, t.End) {
		if i == 1 {
			continue
		}
		rows = append(rows, SplitRow(string(l.Content())))
	}
	return rows
}

// SplitRow splits one table line into trimmed cells.
func SplitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' && i+1 < len(line) && line[i+1] == '|' {
			cur.WriteByte('|')
			i++
			continue
		}
		if line[i] == '|' {
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteByte(line[i])
	}
	return append(cells, strings.TrimSpace(cur.String()))
}
