package importer

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// mdDoc is a Markdown document being turned into a Session.
type mdDoc struct {
	s         Session
	sections  []*mdSection
	handoff   bool
	meta      mdMeta
	objSec    string    // objective taken from an objective section
	objSource objSource // where Objective came from
	markers   int       // session markers seen (used to tell session logs apart)
}

// ParseMarkdown parses a Markdown session log or handoff. relPath is used
// for Session.ID, Session.SourcePath, the date fallback and the handoff
// test (a "handoffs/" folder or a "-handoff" name). The error is a
// *ParseError wrapping ErrEmpty for a blank file, or ErrNotSessionLog for a
// file whose name and content do not look like a session log: its name must
// start with YYYY-MM-DD and contain "session" or "handoff", or it must hold
// at least two session markers (objective, branch, start commit, checklist,
// work log, decisions, next steps) and have a dated or session-like name.
func ParseMarkdown(relPath string, data []byte) (Session, error) {
	s, _, err := parseMarkdown(relPath, data)
	return s, err
}

// parseMarkdown is ParseMarkdown that also reports where the objective
// came from.
func parseMarkdown(relPath string, data []byte) (Session, objSource, error) {
	relPath = strings.ReplaceAll(relPath, "\\", "/")
	data = bytes.ToValidUTF8(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), []byte("\uFFFD"))
	if strings.TrimSpace(string(data)) == "" {
		return Session{}, 0, &ParseError{Path: relPath, Err: ErrEmpty}
	}
	d := &mdDoc{
		s:    Session{ID: sessionID(relPath), SourcePath: relPath, Format: FormatMarkdown},
		meta: mdMeta{},
	}
	base := strings.ToLower(path.Base(relPath))
	d.handoff = strings.Contains("/"+relPath, "/handoffs/") || strings.HasSuffix(strings.TrimSuffix(base, path.Ext(base)), "handoff")
	if d.handoff {
		d.s.Format = FormatMarkdownHandoff
	}
	var prose string
	d.sections, prose = parseSectionsProse(string(data))
	d.readMeta()
	for _, sec := range d.sections {
		d.readSection(sec)
	}
	d.finish(prose)
	if reason := d.notSessionReason(base); reason != "" {
		return Session{}, 0, &ParseError{Path: relPath, Err: fmt.Errorf("%w: %s", ErrNotSessionLog, reason)}
	}
	return d.s, d.objSource, nil
}

// parseSectionsProse parses the sections and also returns the document's
// text outside code blocks, for reference scanning.
func parseSectionsProse(doc string) ([]*mdSection, string) {
	secs := parseSections(doc)
	var b strings.Builder
	for _, s := range secs {
		b.WriteString(s.title)
		b.WriteByte('\n')
		for _, blk := range s.blocks {
			b.WriteString(blk.text)
			for _, row := range blk.rows {
				b.WriteString(strings.Join(row, " | "))
				b.WriteByte('\n')
			}
			b.WriteByte('\n')
		}
	}
	return secs, b.String()
}

// readSection extracts checklist items, updates, outcomes, next steps and
// decisions from one section's own blocks (not its children).
func (d *mdDoc) readSection(sec *mdSection) {
	kind := kindOf(sec)
	if kind == secDecisions {
		if p := sec.parent; p == nil || kindOf(p) != secDecisions {
			d.s.Decisions = append(d.s.Decisions, parseDecisionSection(sec)...)
		}
		return
	}
	phase := checklistPhase(sec)
	var entries []string
	groups := groupBlocks(sec.blocks)
	for _, g := range groups {
		switch {
		case g.head.kind == blockTable:
			if cl, ok := checklistFromTable(g.head.rows, phase); ok {
				d.s.Checklist = append(d.s.Checklist, cl...)
			} else if kind == secWork || kind == secOutcome || kind == secNext {
				entries = append(entries, tableEntries(g.head.rows)...)
			}
		case g.head.check != 0 && kind != secWork && kind != secOutcome && kind != secNext:
			d.s.Checklist = append(d.s.Checklist, checklistFromItem(g, phase))
		case kind == secObjective:
			if d.objSec == "" {
				d.objSec = objectiveText(groups)
			}
		case kind == secWork || kind == secOutcome || kind == secNext:
			if e := g.entry(kind == secWork); strings.TrimSpace(e) != "" {
				entries = append(entries, e)
			}
		}
	}
	if len(entries) > 0 || (kind == secWork && sec.parent != nil && kindOf(sec.parent) == secWork) {
		entries = prefixWithTitle(sec, kind, entries)
	}
	for _, e := range entries {
		switch kind {
		case secWork:
			d.s.Updates = appendLine(d.s.Updates, e)
		case secOutcome:
			d.s.Outcomes = appendLine(d.s.Outcomes, e)
		case secNext:
			d.s.NextSteps = appendLine(d.s.NextSteps, e)
		}
	}
}

// finish resolves the metadata candidates and fallbacks.
func (d *mdDoc) finish(prose string) {
	s := &d.s
	get := func(f metaField) string { return d.meta[f].value }
	if t, ok := parseTime(get(fieldDate)); ok {
		s.Date = t
		d.markers++
	} else if t, ok := dateFromName(s.SourcePath); ok {
		s.Date = t
	}
	if t, ok := parseTime(get(fieldEnded)); ok && !t.Before(s.Date) {
		s.Ended = t
	}
	s.Branch = cleanBranch(get(fieldBranch))
	s.StartCommit = commitSHA(get(fieldStartCommit))
	s.EndCommit = commitSHA(get(fieldEndCommit))
	s.Status = line(get(fieldStatus))
	s.Objective = d.objective()
	var r refs
	r.scan(prose)
	s.Issues = r.list()
	for _, ok := range []bool{s.Branch != "", s.StartCommit != "", len(s.Checklist) > 0,
		len(s.Updates) > 0, len(s.Decisions) > 0, len(s.NextSteps) > 0} {
		if ok {
			d.markers++
		}
	}
}

// objective picks the best objective: an Objective/Goal label, then an
// objective section, then a Task/Focus label, then the title or file name.
func (d *mdDoc) objective() string {
	c, ok := d.meta[fieldObjective]
	label := line(c.value)
	switch {
	case ok && label != "" && c.score <= int(scopeHeader)*10+2:
		d.markers++
		return label
	case d.objSec != "":
		d.markers++
		return d.objSec
	case ok && label != "":
		d.markers++
		return label
	}
	d.objSource = objFromTitle
	if t := titleObjective(d.title()); t != "" {
		return t
	}
	d.objSource = objFromName
	if t := slugObjective(d.s.ID); t != "" {
		return t
	}
	if t := line(d.title()); t != "" {
		d.objSource = objFromTitle
		return t
	}
	return d.s.ID
}

func (d *mdDoc) title() string {
	if h := d.firstH1(); h != nil {
		return h.title
	}
	for _, s := range d.sections {
		if s.level > 0 {
			return s.title
		}
	}
	return ""
}

var (
	reTitleSession = lazyregexp.New(`(?i)^(session\s*(log|handoff|summary)?\s*[#:]?\s*[\w.-]*\d[\w.-]*|session\s*(log|handoff|summary)|handoff)\s*[:\-–—]?\s*`)
	reTitleDate    = lazyregexp.New(`\s*[-–—(]?\s*\d{4}-\d{2}-\d{2}\)?\s*`)
)

// titleObjective derives an objective from a title such as
// "Session 374: Codex MCP Configuration Support" → "Codex MCP Configuration
// Support". It returns "" when nothing but a session number or date is left.
func titleObjective(title string) string {
	t := clean(title)
	t = reTitleSession().ReplaceAllString(t, "")
	t = strings.TrimSpace(reTitleDate().ReplaceAllString(t, " "))
	t = strings.Trim(t, "-–—: ")
	letters := 0
	for _, r := range t {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	if letters < 3 {
		return ""
	}
	return line(t)
}

// notSessionReason returns why the document is not a session log, or "".
func (d *mdDoc) notSessionReason(base string) string {
	dated := reNameDate().MatchString(base)
	sessionish := strings.Contains(base, "session") || strings.Contains(base, "handoff")
	switch {
	case dated && sessionish:
		return ""
	case (dated || sessionish) && d.markers >= 2:
		return ""
	case !dated && !sessionish:
		return "file name has neither a YYYY-MM-DD prefix nor \"session\"/\"handoff\" (a summary, metrics file or README)"
	default:
		return fmt.Sprintf("no session content (found %d of: date, objective, branch, start commit, checklist, work log, decisions, next steps)", d.markers)
	}
}
