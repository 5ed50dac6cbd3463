package imports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Records that keep their source's text (Claude Code session notes, aider
// chats: importer.Session.Original). Such a record has, besides what every
// imported record has (issue 15, "Importers"):
//
//   - the properties source_bytes (the source text's length in bytes) and
//     source_sha256 (its SHA-256, lower-case hex);
//   - a last section "## Original text": one line naming the source, then
//     the text in a fenced block ("markdown"), fenced by one backtick more
//     than the longest run of backticks in the text (at least three), so
//     nothing in it can end the block. A text whose every line ends in CRLF
//     is kept with LF endings (the note's own); a text that does not end in
//     a line ending gets one before the closing fence. The text with the
//     SHA-256 of source_sha256 among these readings is the source's bytes.
//
// Reading the text back lets a later import tell a source it has already
// imported (same text: unchanged, even when a person edited the record)
// from one that changed since (a session note updated by /session-update,
// an aider chat that went on): the record is then rewritten only when it
// is still exactly what the earlier import wrote.

// secOriginal is the section of an imported record that keeps its source.
const secOriginal = "Original text"

// ImportOptions tunes [Service.ImportRecords].
type ImportOptions struct {
	// DryRun reads everything and writes nothing (no commit): the report
	// says what an import would do.
	DryRun bool
	// What names the source in the commit's summary, e.g. "Claude Code
	// session notes".
	What string
}

// errDryRun ends a dry run's transaction without writing.
var errDryRun = errors.New("dry run")

// ImportRecords writes sessions read from another tool as archived sessions
// of the project, like ImportSessions (sessions/<id>.md, decision notes,
// session-history.md, one commit), and also keeps the source's text in a
// record whose session has it (Original). For those, a record already in
// the vault is:
//
//   - unchanged when it holds the same source text (whatever else a person
//     changed in it);
//   - rewritten (Updated) when the source's text changed since, and the
//     record is still byte for byte what the earlier import wrote from its
//     text; its entry in session-history.md is rewritten too when it is
//     still as written;
//   - else kept, and the session skipped with the reason.
//
// With opt.DryRun nothing is written and the report tells what would be.
func (s *Service) ImportRecords(project string, logs []importer.Session, opt ImportOptions, progress func(done, total int)) (ImportReport, vault.Result, error) {
	rep := ImportReport{DryRun: opt.DryRun}
	project, err := s.Project(project)
	if err != nil {
		return rep, vault.Result{}, err
	}
	what := session.FirstNonEmpty(opt.What, "imported sessions")
	res, err := s.V.Transact(func(tx *vault.Tx) (vault.Change, error) {
		rep = ImportReport{DryRun: opt.DryRun}
		for i, l := range logs {
			if err := s.importOne(tx, project, l, &rep); err != nil {
				return vault.Change{}, fmt.Errorf("importing %s: %w", l.SourcePath, err)
			}
			if progress != nil {
				progress(i+1, len(logs))
			}
		}
		if opt.DryRun {
			return vault.Change{}, errDryRun
		}
		summary := fmt.Sprintf("%d sessions from %s", rep.Sessions, what)
		if rep.Updated > 0 {
			summary = fmt.Sprintf("%d sessions, %d updated, from %s", rep.Sessions, rep.Updated, what)
		}
		return vault.Change{Operation: "import", Summary: summary}, nil
	})
	if errors.Is(err, errDryRun) {
		return rep, vault.Result{}, nil
	}
	return rep, res, err
}

// keepOriginal adds the source's text to an imported record (see above).
func keepOriginal(d *session.Doc, l importer.Session) {
	sum := sha256.Sum256(l.Original)
	d.Set("source_bytes", len(l.Original))
	d.Set("source_sha256", hex.EncodeToString(sum[:]))
	text, crlf := l.Original, false
	if n := bytes.Count(text, []byte("\n")); n > 0 && bytes.Count(text, []byte("\r\n")) == n {
		text, crlf = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n")), true
	}
	fence := strings.Repeat("`", max(3, longestRun(text, '`')+1))
	intro := "The source `" + strings.ReplaceAll(l.SourcePath, "`", "'") + "` as imported, byte for byte"
	if importer.KeepsDigest(l.Format) {
		intro = "A digest of the transcript `" + strings.ReplaceAll(l.SourcePath, "`", "'") + "` as imported (one line per prompt, reply, tool call, failed tool result, commit and compaction; not its JSON)"
	}
	if crlf {
		intro += " (its CRLF line endings shown as LF)"
	}
	var b strings.Builder
	b.WriteString(intro + ":\n\n" + fence + "markdown\n")
	b.Write(text)
	if len(text) > 0 && text[len(text)-1] != '\n' {
		b.WriteString("\n")
	}
	b.WriteString(fence)
	lines := strings.Split(b.String(), "\n")
	if d.Newline() == "\r\n" {
		// A template with CRLF endings: setSection joins with CRLF, so the
		// text's own lines must not end in CR already.
		for i := range lines {
			lines[i] = strings.TrimSuffix(lines[i], "\r")
		}
	}
	d.SetSection(secOriginal, lines)
}

// longestRun returns the length of the longest run of c in b.
func longestRun(b []byte, c byte) int {
	best, n := 0, 0
	for _, x := range b {
		if x == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// keptOriginal reads back the source text a record keeps, checked against
// its source_sha256; ok is false when the record keeps none, or none that
// matches.
func (s *Service) keptOriginal(rel string, data []byte) (text []byte, d *session.Doc, ok bool) {
	d, err := s.ParseDoc(rel, data)
	if err != nil {
		return nil, nil, false
	}
	want := d.Prop("source_sha256")
	lines := d.SectionLines(secOriginal)
	if want == "" || len(lines) == 0 {
		return nil, d, false
	}
	start, fence := -1, ""
	var body [][]byte
	for i, l := range lines {
		c := string(l.Content())
		if start < 0 {
			if strings.HasPrefix(c, "```") {
				fence = c[:strings.IndexFunc(c+"x", func(r rune) bool { return r != '`' })]
				start = i
			}
			continue
		}
		if c == fence {
			break
		}
		body = append(body, l.Text)
	}
	if start < 0 {
		return nil, d, false
	}
	raw := bytes.Join(body, nil)
	if d.Newline() == "\r\n" {
		raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n")) // the note's own endings
	}
	for _, cand := range [][]byte{raw, bytes.TrimSuffix(raw, []byte("\n"))} {
		for _, c := range [][]byte{cand, bytes.ReplaceAll(cand, []byte("\n"), []byte("\r\n"))} {
			if sum := sha256.Sum256(c); hex.EncodeToString(sum[:]) == want {
				return c, d, true
			}
		}
	}
	return nil, d, false
}

// reimport decides about a record already in the vault that differs from
// what the import renders now, for a session whose record keeps its source
// text (see ImportRecords).
func (s *Service) reimport(tx *vault.Tx, rel string, cur, data []byte, st session.State, l importer.Session, rep *ImportReport) error {
	skip := func(reason string) error {
		rep.Skipped = append(rep.Skipped, importer.Skipped{Path: l.SourcePath, Reason: reason})
		return nil
	}
	prevText, d, ok := s.keptOriginal(rel, cur)
	if !ok {
		return skip("the vault already has a different " + rel + ", and the source text kept in it was edited (it no longer matches its source_sha256) or is not this source's; kept the vault's copy (to import the source again, move that note out of the vault)")
	}
	if importer.KeepsDigest(l.Format) && unedited(s, rel, cur) {
		// A digest does not hold everything its record shows (the last
		// event's time, counts of what it leaves out): an unedited record
		// is rewritten whenever it differs from what the source gives now.
		return s.rewriteRecord(tx, rel, data, recordState(d, st.Project), st, l, rep)
	}
	if bytes.Equal(prevText, l.Original) {
		rep.Unchanged++ // imported before; a person has edited the record since
		rep.Records = append(rep.Records, RecordOutcome{Source: l.SourcePath, Record: rel, Action: "unchanged"})
		return nil
	}
	loc, err := s.V.Config.Location()
	if err != nil {
		return err
	}
	edited := "the source changed since it was imported, and " + rel + " was edited in the vault since: kept the vault's copy (to take the source's new text, move that note out of the vault and import again)"
	prev, err := importer.Reparse(l, prevText, loc)
	if errors.Is(err, importer.ErrNoReparse) {
		return skip("the source changed since it was imported (it was still being written then, or went on since), and " + rel +
			", which keeps a digest of the earlier source, was edited in the vault since: kept the vault's copy (to take the new source, move that note out of the vault and import again)")
	}
	if err != nil {
		return skip(edited)
	}
	prev.SourcePath = session.FirstNonEmpty(d.Prop("source"), prev.SourcePath)
	prev.Status = d.Prop("source_status")
	old := importedState(st.Project, prev)
	prevData, err := s.renderArchived(old, prev)
	if err != nil || !bytes.Equal(prevData, cur) {
		return skip(edited)
	}
	if err := tx.Write(rel, data); err != nil {
		return err
	}
	rep.Updated++
	rep.Records = append(rep.Records, RecordOutcome{Source: l.SourcePath, Record: rel, Action: "update"})
	return s.replaceHistoryEntry(tx, old, st)
}

// rewriteRecord writes data as the record rel of a source that changed
// (old: the state the record had), and its history entry.
func (s *Service) rewriteRecord(tx *vault.Tx, rel string, data []byte, old, cur session.State, l importer.Session, rep *ImportReport) error {
	if err := tx.Write(rel, data); err != nil {
		return err
	}
	rep.Updated++
	rep.Records = append(rep.Records, RecordOutcome{Source: l.SourcePath, Record: rel, Action: "update"})
	return s.replaceHistoryEntry(tx, old, cur)
}

// recordState is the state an imported record shows, as importedState made
// it: its summary is the record's Summary items (the summary property is
// clipped).
func recordState(d *session.Doc, project string) session.State {
	st := d.ReadState(project)
	var items []string
	for _, l := range d.SectionLines(session.SecSummary) {
		if t := strings.TrimPrefix(strings.TrimSpace(string(l.Content())), "- "); t != "" {
			items = append(items, t)
		}
	}
	if len(items) > 0 {
		st.Summary = strings.Join(items, "; ")
	}
	return st
}

// replaceHistoryEntry rewrites session old's entry in session-history.md
// as cur's, when it is still exactly as the engine wrote it (a person may
// have edited it, and older entries are links only): then nothing changes.
func (s *Service) replaceHistoryEntry(tx *vault.Tx, old, cur session.State) error {
	_, rel, _ := session.Paths(old.Project)
	d, err := s.ReadDoc(tx, rel)
	if err != nil {
		return err
	}
	nl := d.Newline()
	was := strings.Join(session.HistoryEntry(old), nl)
	now := strings.Join(session.HistoryEntry(cur), nl)
	i := bytes.Index(d.Body, []byte(was))
	if i < 0 || was == now {
		return nil
	}
	d.Edit(i, i+len(was), now)
	b, err := d.Bytes()
	if err != nil {
		return err
	}
	return tx.Write(rel, b)
}
