package session

import (
	"bytes"
	"sort"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
)

// Doc is a note opened for reading its sections and queueing edits. Body
// edits are byte splices computed against one parse of the body, applied
// back to front; property edits are applied after them. Bytes outside the
// edited ranges are never touched.
type Doc struct {
	Path  string
	Note  *note.Note
	MD    *markdown.Doc
	Body  []byte
	edits []bodyEdit
	props []propEdit
	Loc   *time.Location // zone of times written without one (nil: local)
	// parsed is the Service's memo of parsed notes when the Doc came from
	// it: Bytes keeps the new version's parse there.
	parsed *parsedNotes
	// grown are the H2 sections (by title) an edit queued on this Doc adds
	// lines to: what an engine operation itself wrote (observed evidence).
	grown map[string]bool
}

// grow records that the section titled title gets lines from this Doc's edits.
func (d *Doc) grow(title string) {
	if d.grown == nil {
		d.grown = map[string]bool{}
	}
	d.grown[title] = true
}

// Grown reports whether an edit queued on d adds lines to the H2 section
// titled title.
func (d *Doc) Grown(title string) bool { return d.grown[title] }

type bodyEdit struct {
	start, end int // body-relative
	text       string
	seq        int
}

type propEdit struct {
	key   string
	value any
}

func openDoc(p *markdown.Parser, path string, src []byte) (*Doc, error) {
	pn, err := parseNoteDoc(path, src)
	if err != nil {
		return nil, err
	}
	return pn.doc(), nil
}

// parseNoteDoc parses src as the note path, and its body's sections.
func parseNoteDoc(path string, src []byte) (parsedNote, error) {
	n, err := note.Parse(path, src)
	if err != nil {
		return parsedNote{}, err
	}
	return parsedNote{n: n, md: scanSections(n)}, nil
}

// doc opens a Doc on the parse (which it shares: neither is changed).
func (p parsedNote) doc() *Doc {
	return &Doc{Path: p.n.Path(), Note: p.n, MD: p.md, Body: p.n.Body()}
}

// Section returns the H2 section titled title.
func (d *Doc) Section(title string) (markdown.Section, bool) {
	return d.MD.Find(2, title)
}

// SectionLines returns the lines of an H2 section's body (body-relative offsets).
func (d *Doc) SectionLines(title string) []markdown.Line {
	s, ok := d.Section(title)
	if !ok {
		return nil
	}
	return markdown.Lines(d.Body, s.BodyStart, s.End)
}

// LineNo returns the 1-based line in the note of a body-relative offset.
func (d *Doc) LineNo(bodyOff int) int { return d.Note.LineOf(d.Note.BodyOffset() + bodyOff) }

// Edit queues the replacement of the body bytes [start, end) by text.
func (d *Doc) Edit(start, end int, text string) {
	d.edits = append(d.edits, bodyEdit{start: start, end: end, text: text, seq: len(d.edits)})
}

// Set queues setting the property key to value.
func (d *Doc) Set(key string, value any) { d.props = append(d.props, propEdit{key, value}) }

// Unset queues the removal of a property (nothing when it is absent).
func (d *Doc) Unset(key string) { d.props = append(d.props, propEdit{key, deleted{}}) }

// deleted is the value of a queued property removal.
type deleted struct{}

// Newline returns the body's line ending.
func (d *Doc) Newline() string {
	if i := bytes.IndexByte(d.Note.Bytes(), '\n'); i > 0 && d.Note.Bytes()[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// SetSection replaces an H2 section's body with lines (each without a line
// ending); a missing section is appended at the end of the note.
func (d *Doc) SetSection(title string, lines []string) {
	nl := d.Newline()
	content := ""
	if len(lines) > 0 {
		content = strings.Join(lines, nl) + nl
		d.grow(title)
	}
	s, ok := d.Section(title)
	if !ok {
		d.AppendNewSection(title, content)
		return
	}
	text := nl + content
	if s.End < len(d.Body) && content != "" {
		text += nl
	}
	if string(d.Body[s.BodyStart:s.End]) == text {
		return
	}
	d.Edit(s.BodyStart, s.End, text)
}

// AppendNewSection queues a new H2 section titled title, holding content,
// at the end of the body.
func (d *Doc) AppendNewSection(title, content string) {
	nl := d.Newline()
	prefix := ""
	if len(d.Body) > 0 && !bytes.HasSuffix(d.Body, []byte("\n")) {
		prefix = nl
	}
	if len(d.Body) > 0 {
		prefix += nl
	}
	text := prefix + "## " + title + nl
	if content != "" {
		text += nl + content
	}
	d.Edit(len(d.Body), len(d.Body), text)
}

// contentBounds returns the offsets of the first and just past the last
// non-blank line of a section's body, or ok=false when it has none.
func (d *Doc) contentBounds(s markdown.Section) (first, last int, ok bool) {
	first, last = -1, -1
	for _, l := range markdown.Lines(d.Body, s.BodyStart, s.End) {
		if len(bytes.TrimSpace(l.Text)) == 0 {
			continue
		}
		if first < 0 {
			first = l.Offset
		}
		last = l.Offset + len(l.Text)
	}
	return first, last, first >= 0
}

// AppendLine adds line (no line ending) after the last non-blank line of an
// H2 section, creating the section when missing.
func (d *Doc) AppendLine(title, line string) {
	d.grow(title)
	nl := d.Newline()
	s, ok := d.Section(title)
	if !ok {
		d.AppendNewSection(title, line+nl)
		return
	}
	d.AppendLineIn(s, line)
}

// AppendLineIn adds line after the last non-blank line of section sec.
func (d *Doc) AppendLineIn(sec markdown.Section, line string) {
	d.grow(sec.Title)
	nl := d.Newline()
	_, last, ok := d.contentBounds(sec)
	if !ok {
		d.setSectionRaw(sec, line)
		return
	}
	if !bytes.HasSuffix(d.Body[:last], []byte("\n")) {
		d.Edit(last, last, nl+line)
		return
	}
	d.Edit(last, last, line+nl)
}

// prependLine adds line before the first non-blank line of an H2 section.
func (d *Doc) prependLine(title, line string) {
	d.grow(title)
	nl := d.Newline()
	s, ok := d.Section(title)
	if !ok {
		d.AppendNewSection(title, line+nl)
		return
	}
	first, _, ok := d.contentBounds(s)
	if !ok {
		d.setSectionRaw(s, line)
		return
	}
	d.Edit(first, first, line+nl)
}

func (d *Doc) setSectionRaw(s markdown.Section, line string) {
	nl := d.Newline()
	text := nl + line + nl
	if s.End < len(d.Body) {
		text += nl
	}
	d.Edit(s.BodyStart, s.End, text)
}

// ReplaceLine replaces the content of the line at body offset off (its line
// ending is kept).
func (d *Doc) ReplaceLine(off int, line string) {
	end := markdown.LineEnd(d.Body, off)
	content := bytes.TrimRight(d.Body[off:end], "\r\n")
	d.Edit(off, off+len(content), line)
}

// Bytes applies the queued edits and returns the new note.
func (d *Doc) Bytes() ([]byte, error) {
	body := d.Body
	if len(d.edits) > 0 {
		edits := append([]bodyEdit(nil), d.edits...)
		sort.SliceStable(edits, func(i, j int) bool {
			if edits[i].start != edits[j].start {
				return edits[i].start > edits[j].start
			}
			return edits[i].seq > edits[j].seq
		})
		var b []byte
		b = append(b, body...)
		for _, e := range edits {
			b = append(b[:e.start:e.start], append([]byte(e.text), b[e.end:]...)...)
		}
		body = b
	}
	n := d.Note
	if len(d.edits) > 0 {
		var err error
		if n, err = n.WithBody(body); err != nil {
			return nil, err
		}
	}
	for _, p := range d.props {
		var err error
		if _, del := p.value.(deleted); del {
			n, err = n.Delete(p.key)
		} else {
			n, err = n.Set(p.key, p.value)
		}
		if err != nil {
			return nil, err
		}
	}
	if !d.parsed.keeps(d.Path) {
		return n.Bytes(), nil
	}
	// The memo's parse keeps its bytes: the caller gets a copy.
	if n != d.Note {
		d.parsed.put(parsedNote{n: n})
	}
	return bytes.Clone(n.Bytes()), nil
}

// Retitle turns the current-state note's H1 ("# Current session") into the
// archived record's ("# Session <id>").
func (d *Doc) Retitle(id string) {
	if h, ok := d.MD.Find(1, "Current session"); ok {
		d.Edit(h.Start, h.BodyStart, "# Session "+id+d.Newline())
	}
}
