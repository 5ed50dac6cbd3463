package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/markdown"
)

// Claude Code session notes: the files the community /session-start,
// /session-update and /session-end slash commands (iannuttall/claude-sessions
// and its forks) ask Claude to write in .claude/sessions/. What the commands
// promise, and all this reader relies on:
//
//   - the file name is "YYYY-MM-DD-HHMM.md" or "YYYY-MM-DD-HHMM-name.md";
//   - session-start writes a title with the session's name and time
//     ("# Development Session - 2025-01-16 13:47 - campaign-editor"), an
//     overview with the start time, a goals section and an empty progress
//     section;
//   - session-update appends a block per update, in the commands' example
//     "### Update - 2025-06-16 12:15 PM" followed by "**Summary**: …", git
//     changes, todo progress and details;
//   - session-end appends a summary (duration, git and todo summaries, key
//     accomplishments, problems and solutions, lessons, what wasn't
//     completed, tips), in the README's example under "## Session Summary";
//   - .claude/sessions/.current-session holds the active session's file name
//     (empty when none is active).
//
// The text is written by a model, so headings vary in wording and language:
// every field below is read when found and left empty otherwise, and the
// record keeps the whole note byte for byte (Session.Original), so nothing
// the reader does not understand is lost.

// FormatClaudeSession is the Session.Format of a Claude Code session note.
const FormatClaudeSession = "claude-session"

// ErrNoSessionsFolder is returned (wrapped) by [ScanClaudeSessions] when the
// folder neither is nor holds a .claude/sessions folder.
var ErrNoSessionsFolder = errors.New("no .claude/sessions folder")

// currentSessionFile names the active session's file.
const currentSessionFile = ".current-session"

// MaxOriginal is the largest source text (a session note, an aider chat) an
// archived record keeps: the record adds its own lines, and a vault note may
// have at most 10 MB. Larger sources are skipped with the reason.
const MaxOriginal = 9 << 20

// ScanClaudeSessions reads every session note under dir: a .claude/sessions
// folder, a .claude folder or repository holding one, or another folder of
// such notes (one holding .current-session or files named
// YYYY-MM-DD-HHMM…md, such as ~/.claude/sessions/<project>). Sub-folders
// are read too, hidden ones not. It never writes.
//
// Each .md file gives a Session (see [ParseClaudeSession]) or a Skipped
// with the reason; .current-session is skipped as the pointer it is, and the
// session it names gets Status "active: named in .current-session". Paths
// (Session.SourcePath, Skipped.Path) are relative to the sessions folder,
// prefixed by the folder's path from its .claude ancestor
// (".claude/sessions/2025-01-16-1347-x.md"), so they do not depend on how
// dir was given. Times without a zone are read in loc. Two files giving the
// same ID get "-2", "-3"… in path order. progress, if non-nil, is called
// after each file. The error wraps ErrNoSessionsFolder, or is the error
// reading dir.
func ScanClaudeSessions(dir string, loc *time.Location, progress func(done, total int)) ([]Session, []Skipped, error) {
	root, prefix, err := claudeSessionsRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	files, skipped, err := walkFiles(root, prefix, "session notes")
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	active := ""
	if data, err := os.ReadFile(filepath.Join(root, currentSessionFile)); err == nil {
		active = strings.TrimSpace(string(data))
	}
	var out []Session
	ids := map[string]int{}
	for i, p := range files {
		rel := path.Join(prefix, relSlash(root, p))
		s, sk := readClaudeSession(p, rel, active, loc)
		if sk != nil {
			skipped = append(skipped, *sk)
		} else {
			if ids[s.ID]++; ids[s.ID] > 1 {
				s.ID += "-" + strconv.Itoa(ids[s.ID])
			}
			out = append(out, s)
		}
		if progress != nil {
			progress(i+1, len(files))
		}
	}
	sortSessions(out)
	sort.SliceStable(skipped, func(a, b int) bool { return skipped[a].Path < skipped[b].Path })
	return out, skipped, nil
}

// claudeSessionsRoot returns the sessions folder of dir and the prefix of
// the paths reported for it.
func claudeSessionsRoot(dir string) (root, prefix string, err error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", "", err
	}
	if !fi.IsDir() {
		return "", "", fmt.Errorf("%s is not a folder: %w", dir, ErrNoSessionsFolder)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	isDir := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
	switch {
	case isDir(filepath.Join(abs, ".claude", "sessions")):
		abs = filepath.Join(abs, ".claude", "sessions")
	case filepath.Base(abs) == ".claude" && isDir(filepath.Join(abs, "sessions")):
		abs = filepath.Join(abs, "sessions")
	case filepath.Base(abs) == "sessions" || looksLikeSessionsFolder(abs):
	default:
		return "", "", fmt.Errorf("%s holds no .claude/sessions folder and no session notes (files named YYYY-MM-DD-name.md): %w", dir, ErrNoSessionsFolder)
	}
	// The prefix: the folder's path from its .claude ancestor, else its name.
	parts := strings.Split(filepath.ToSlash(abs), "/")
	prefix = parts[len(parts)-1]
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] == ".claude" {
			prefix = strings.Join(parts[i:], "/")
			break
		}
	}
	return abs, prefix, nil
}

func looksLikeSessionsFolder(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() == currentSessionFile {
			return true
		}
		if _, ok := nameDate(e.Name(), time.UTC); ok && strings.HasSuffix(e.Name(), ".md") {
			return true
		}
	}
	return false
}

// readClaudeSession reads and parses one file of a sessions folder.
func readClaudeSession(p, rel, active string, loc *time.Location) (Session, *Skipped) {
	base := path.Base(rel)
	switch {
	case base == currentSessionFile:
		reason := "the pointer to the active session (empty: none is active), not a session note"
		if active != "" {
			reason = fmt.Sprintf("the pointer to the active session (it names %s), not a session note", active)
		}
		return Session{}, &Skipped{Path: rel, Reason: reason}
	case strings.HasPrefix(base, "."):
		return Session{}, &Skipped{Path: rel, Reason: "a hidden file: not a session note"}
	case !strings.HasSuffix(base, ".md"):
		return Session{}, &Skipped{Path: rel, Reason: "not a .md file: session notes are markdown"}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return Session{}, &Skipped{Path: rel, Reason: "unreadable: " + err.Error()}
	}
	if fi.Size() > MaxOriginal {
		return Session{}, &Skipped{Path: rel, Reason: fmt.Sprintf("%d bytes: larger than the %d MB a session record can keep (a vault note may have 10 MB)", fi.Size(), MaxOriginal>>20)}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return Session{}, &Skipped{Path: rel, Reason: "unreadable: " + err.Error()}
	}
	s, err := parseClaudeSession(rel, data, loc, func() (time.Time, bool) { return firstCommitTime(p) })
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return Session{}, &Skipped{Path: rel, Reason: pe.reason()}
		}
		return Session{}, &Skipped{Path: rel, Reason: err.Error()}
	}
	if active != "" && (active == base || active == strings.TrimSuffix(base, ".md") || path.Base(filepath.ToSlash(active)) == base) {
		s.Status = "active: named in .current-session"
	}
	return s, nil
}

var (
	reUpdateHeading  = lazyregexp.New(`(?i)^update\b`)
	reSummaryHeading = lazyregexp.New(`(?i)summary|session end|wrap[- ]?up|resumen|résumé|zusammenfassung|riepilogo|resumo|samenvatting|podsumowanie|итог|резюме|сводка|总结|總結|まとめ|要約|요약`)
	reGoalsHeading   = lazyregexp.New(`(?i)goal|objective|objetivo|objectif|\bziele?\b|obiettiv|doel|cel[eu]?\b|цел|задач|目標|目标|목표`)
	reOverview       = lazyregexp.New(`(?i)overview|übersicht|resumen general|aperçu|panoramica|visão geral|обзор|概要|概览|개요`)
	reStartLabel     = lazyregexp.New(`(?i)^(session )?(start(ed)?|start time|started at|date|beginn?|début|inicio|início|начало|開始|开始)$`)
	reEndLabel       = lazyregexp.New(`(?i)^(session )?(end(ed)?|end time|ended at|finished|completed at|ende|fin|término|fim|конец|終了|结束)$`)
	reDurationLabel  = lazyregexp.New(`(?i)duration|dauer|durée|duración|duração|durata|длительность|продолжительность|所要時間|時間|时长|持续时间`)
	reBranchLabel    = lazyregexp.New(`(?i)^(current )?branch$`)
	reSummaryLabel   = lazyregexp.New(`(?i)^(summary|update|details|notes?)$`)
	reAccomplished   = lazyregexp.New(`(?i)accomplish|achievement|features implemented|what was done|completed tasks|logros|réalisations|erfolge|ergebnisse|достижения|成果|完成`)
	reNotCompleted   = lazyregexp.New(`(?i)not completed|wasn'?t completed|were not completed|incomplete|remaining|unfinished|next steps|todo|to do|pendiente|reste à faire|offen|не выполнено|未完了|未完成`)
	reChatListItem   = lazyregexp.New(`^(\s*)(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?(.*)$`)
	reHours          = lazyregexp.New(`(\d+(?:[.,]\d+)?)\s*(?:h\b|hrs?\b|hours?|ч\b|час|時間|小时|std\b|stunden?|heures?|horas?|ore\b)`)
	reMinutes        = lazyregexp.New(`(\d+)\s*(?:m\b|mins?\b|minutes?|мин|分|minuten?|minutos?|minuti)`)
	reSessionWords   = lazyregexp.New(`(?i)\bdevelopment session\b|\bsession\b|開発セッション|セッション|сессия разработки|сессия|sesión de desarrollo|sesión|session de développement|entwicklungssitzung|sitzung|开发会话|会话`)
	reSeparators     = lazyregexp.New(`\s+[-–—|·](?:\s+[-–—|·])*\s+`)
)

// ParseClaudeSession reads one Claude Code session note. source is the
// path reported for it (its base name gives the ID and, when it starts with
// YYYY-MM-DD-HHMM, the start time). Times without a zone are read in loc.
//
// The Session it returns: ID the base name (see Session.ID; the runs of '-'
// left for letters outside ASCII folded); Format
// FormatClaudeSession; Date the start time, from the file name, else the
// title, else an overview line labelled Start/Started/Date; Ended from a
// summary line labelled End/Ended (a date-time or a time of the start's
// day) or Start + a "Duration" (2h 15m, 135 minutes, "13:47 - 16:02");
// Objective the session's name (title, else file name) and its goals
// ("campaign-editor: Create the editor; Add markdown support"); Branch from a
// "Branch:"/"Current branch:" line; Updates one per update block — a
// heading starting with "Update", or a level-3/4 heading holding a date or
// a time — its "Summary:" line, else its first line of text, else the
// heading, with UpdateTimes the time in the heading; Outcomes the summary's
// key accomplishments, else its first paragraph; NextSteps what the summary
// lists as not completed; Status "ended" with a summary section, else "open:
// no session-end summary"; Issues the references in the text; Original the
// file's bytes.
//
// Errors (*ParseError): the note is empty (ErrEmpty), is not UTF-8 text, is
// not a session note (ErrNotSessionLog: its name does not start with
// YYYY-MM-DD-HHMM and it has neither a title naming a session nor update
// blocks), or gives no start time (ErrNotSessionLog).
func ParseClaudeSession(source string, data []byte, loc *time.Location) (Session, error) {
	return parseClaudeSession(source, data, loc, nil)
}

// parseClaudeSession is ParseClaudeSession; committed, when not nil, gives
// the time the note was first committed, its start when it states none.
func parseClaudeSession(source string, data []byte, loc *time.Location, committed func() (time.Time, bool)) (Session, error) {
	fail := func(err error) (Session, error) { return Session{}, &ParseError{Path: source, Err: err} }
	original := data
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a BOM an editor left: not text of the note
	if len(bytes.TrimSpace(data)) == 0 {
		return fail(ErrEmpty)
	}
	if why := notText(data); why != "" {
		return fail(errors.New(why))
	}
	base := path.Base(source)
	secs := markdown.ScanSections(data)
	title := ""
	for _, s := range secs {
		if s.Level == 1 {
			title = s.Title
			break
		}
	}
	var updates []markdown.Section
	var summary, goals, overview *markdown.Section
	for i := range secs {
		s := &secs[i]
		switch {
		case s.Level >= 2 && s.Level <= 4 && isUpdateHeading(*s):
			updates = append(updates, *s)
		case s.Level == 2 && overview == nil && reOverview().MatchString(s.Title):
			overview = s
		case s.Level <= 3 && s.Level >= 2 && summary == nil && reSummaryHeading().MatchString(s.Title) && !reGoalsHeading().MatchString(s.Title):
			summary = s
		case s.Level == 2 && goals == nil && reGoalsHeading().MatchString(s.Title):
			goals = s
		}
	}
	nameTime, fromName := nameDateTime(base, loc)
	nameDay, fromNameDay := nameDate(base, loc)
	titleTime, titleClock, fromTitle := localDateTime(title, loc)
	fmStart, fmEnd, fmStartClock, fmEndClock := frontMatterTimes(frontMatter(data), loc)
	day := firstTime(nameTime, nameDay, titleTime, fmStart)
	lStart, lEnd, lStartClock, lEndClock := labelledTimes(data, day, loc)
	if !fromName && !fromNameDay && !strings.Contains(strings.ToLower(title), "session") && len(updates) == 0 && lStart.IsZero() && fmStart.IsZero() {
		return fail(fmt.Errorf("%w: its name does not start with a date (YYYY-MM-DD), and it has no Started line, no date in its front matter, no title naming a session and no \"### Update\" blocks", ErrNotSessionLog))
	}
	s := Session{ID: tidyID(sessionID(source)), SourcePath: source, Format: FormatClaudeSession, Original: original}
	// The start: the first time stated with a clock (the file name, the
	// title, a Started line, the front matter), else the first date (its
	// midnight: estimated), else the time the note was first committed
	// (estimated).
	switch {
	case fromName:
		s.Date = nameTime
	case fromTitle && titleClock:
		s.Date = titleTime
	case !lStart.IsZero() && lStartClock:
		s.Date = lStart
	case !fmStart.IsZero() && fmStartClock:
		s.Date = fmStart
	default:
		if d := firstTime(nameDay, lStart, fmStart, titleTime); !d.IsZero() {
			s.Date = d
			s.Estimated = append(s.Estimated, "started: a date without a time (00:00 assumed)")
		} else if committed != nil && (len(updates) > 0 || hasSessionSections(secs)) {
			// Only a note shaped like a session (update blocks, a
			// Progress/Notes/Todo/Summary/Goals section) is dated by its
			// commit: a README that names sessions is not one.
			if t, ok := committed(); ok {
				s.Date = t.In(loc)
				s.Estimated = append(s.Estimated, "started: the time the note was first committed")
			}
		}
	}
	if s.Date.IsZero() {
		why := "the note is not committed in a git repository"
		if committed != nil && len(updates) == 0 && !hasSessionSections(secs) {
			if _, ok := committed(); ok {
				why = "its commit time dates only a note shaped like a session: it has no \"### Update\" blocks and no Progress, Notes, Todo, Summary, Goals or Overview section"
			}
		}
		return fail(fmt.Errorf("%w: no start time (the file name, the title, a Started line and the front matter give none, and %s)", ErrNotSessionLog, why))
	}
	name := sessionName(title, base)
	var goalItems []string
	if goals != nil {
		goalItems = textItems(sectionText(data, *goals))
	}
	s.Objective = name
	if len(goalItems) == 0 {
		if o := labelledObjective(data); o != "" && !strings.EqualFold(o, name) {
			goalItems = []string{o}
		}
	}
	if len(goalItems) > 0 {
		g := strings.Join(goalItems, "; ")
		if name != "" {
			g = name + ": " + g
		}
		s.Objective = g
	}
	if s.Objective == "" {
		s.Objective = "Claude Code session of " + s.Date.Format("2006-01-02 15:04")
	}
	s.Objective = line(s.Objective)

	for _, l := range strings.Split(string(data), "\n") {
		if label, value, ok := labelled(l); ok && reBranchLabel().MatchString(label) {
			if b := cleanBranch(value); b != "" {
				s.Branch = b
				break
			}
		}
	}
	s.Updates, s.UpdateTimes = claudeUpdates(data, updates, s.Date, loc)
	if len(updates) == 0 {
		s.Updates, s.UpdateTimes = notesUpdates(data, secs, s.Date, loc)
	}
	s.Checklist = todoChecklist(data, secs)
	if summary != nil {
		claudeSummary(&s, sectionText(data, *summary), loc)
	} else if st := labelledStatus(data); st != "" {
		s.Status = st
	} else {
		s.Status = "open: no session-end summary"
	}
	// The end, when no summary gave one: an Ended line, the front matter;
	// a date alone is the end of that day (estimated).
	if s.Ended.IsZero() {
		end, clk := lEnd, lEndClock
		if end.IsZero() {
			end, clk = fmEnd, fmEndClock
		}
		switch {
		case end.IsZero():
		case clk && !end.Before(s.Date):
			s.Ended = end
		case !clk:
			if e := end.Add(24*time.Hour - time.Second); !e.Before(s.Date) {
				s.Ended = e
				s.Estimated = append(s.Estimated, "ended: a date without a time (the end of that day assumed)")
			}
		}
	}
	var r refs
	r.scan(string(data))
	s.Issues = r.list()
	return s, nil
}

// claudeUpdates reads the update blocks of a session note: each one's
// message (its Summary line, else its first plain line, else its heading)
// and its time (from the heading; the zero time when it names none).
func claudeUpdates(data []byte, updates []markdown.Section, date time.Time, loc *time.Location) (msgs []string, times []time.Time) {
	for _, u := range updates {
		text := sectionText(data, u)
		msg := ""
		for _, l := range text {
			if label, value, ok := labelled(l); ok && reSummaryLabel().MatchString(label) && strings.TrimSpace(value) != "" {
				msg = value
				break
			}
		}
		if msg == "" {
			for _, l := range text {
				if c := clean(stripListMarker(l)); c != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") && !strings.HasPrefix(strings.TrimSpace(l), "```") {
					msg = c
					break
				}
			}
		}
		if msg == "" {
			msg = u.Title
		}
		msgs = append(msgs, line(msg))
		when := time.Time{}
		if t, hasClock, ok := localDateTime(u.Title, loc); ok && hasClock {
			when = t
		} else if t, ok := clockOn(u.Title, date); ok {
			when = t
		}
		times = append(times, when)
	}
	return msgs, times
}

// claudeSummary reads a session note's end summary (text) into s: ended,
// when, what was accomplished and what was not (the next steps).
func claudeSummary(s *Session, text []string, loc *time.Location) {
	s.Status = "ended"
	s.Ended = endTime(text, s.Date, loc)
	for _, o := range itemsUnder(text, reAccomplished()) {
		s.Outcomes = appendLine(s.Outcomes, o)
	}
	if len(s.Outcomes) == 0 {
		if p := firstParagraph(text); p != "" {
			s.Outcomes = appendLine(s.Outcomes, p)
		}
	}
	if len(s.Outcomes) == 0 {
		for _, l := range text { // plain items: "- Removed 7 of 9 flags", not "- **Ended**: …"
			if m := reChatListItem().FindStringSubmatch(l); m != nil && len(m[1]) < 2 && !strings.Contains(m[2], "**") {
				s.Outcomes = appendLine(s.Outcomes, m[2])
			}
		}
	}
	for _, n := range itemsUnder(text, reNotCompleted()) {
		s.NextSteps = appendLine(s.NextSteps, n)
	}
}

// tidyID folds the runs of '-' that sessionID leaves for characters
// outside ASCII ("2025-03-10-2210-データ移行" → "2025-03-10-2210").
func tidyID(id string) string {
	for strings.Contains(id, "--") {
		id = strings.ReplaceAll(id, "--", "-")
	}
	if t := strings.Trim(id, "-"); t != "" {
		return t
	}
	return "session"
}

func isUpdateHeading(s markdown.Section) bool {
	if reUpdateHeading().MatchString(s.Title) {
		return true
	}
	if s.Level < 3 {
		return false
	}
	if _, hasClock, ok := localDateTime(s.Title, time.UTC); ok && hasClock {
		return true
	}
	m := reClock().FindStringIndex(s.Title)
	return m != nil && m[0] <= 2
}

// sessionName is the session's name: the title without "Development
// Session", its date and time and the separators, else the file name after
// its YYYY-MM-DD-HHMM prefix.
func sessionName(title, base string) string {
	t := reLocalDateTime().ReplaceAllString(title, " ")
	t = reSessionWords().ReplaceAllString(t, " ")
	t = strings.Trim(clean(t), " -–—:|·")
	t = strings.TrimSpace(reSeparators().ReplaceAllString(t, " - "))
	if t != "" {
		return t
	}
	n := strings.TrimSuffix(base, ".md")
	if reNameDateTime().MatchString(n) {
		n = n[len("2006-01-02-1504"):]
	}
	return strings.Trim(n, "-_ ")
}

// sectionText returns the lines of a section's body, without line endings.
func sectionText(data []byte, s markdown.Section) []string {
	var out []string
	for _, l := range markdown.Lines(data, s.BodyStart, s.End) {
		out = append(out, string(l.Content()))
	}
	return out
}

// labelled reads "Label: value" from a line, with list markers and bold
// markers removed ("- **Summary**: x", "**Summary:** x", "Summary: x").
func labelled(l string) (label, value string, ok bool) {
	t := stripEmphasis(strings.TrimSpace(stripListMarker(l)))
	i := strings.Index(t, ":")
	if i <= 0 || i > 60 || strings.Contains(t[:i], "://") {
		return "", "", false
	}
	return strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+1:]), true
}

func stripListMarker(l string) string {
	if m := reChatListItem().FindStringSubmatch(l); m != nil {
		return m[2]
	}
	return l
}

// textItems returns a section's top-level list items (without their
// checkbox), or its lines of text when it has no list.
func textItems(lines []string) []string {
	var items, text []string
	for _, l := range lines {
		if m := reChatListItem().FindStringSubmatch(l); m != nil {
			if len(m[1]) < 2 {
				if c := clean(m[2]); c != "" && !isPlaceholder(c) && !strings.HasPrefix(c, "[") {
					items = append(items, c)
				}
			}
			continue
		}
		if c := clean(l); c != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") && !isPlaceholder(c) {
			text = append(text, c)
		}
	}
	if len(items) > 0 {
		return items
	}
	return text
}

// itemsUnder returns the items under the first sub-heading or bold label
// ("### Key Accomplishments", "**What wasn't completed**:") of lines whose
// text matches re: its list items, or its lines of text, up to the next
// heading or bold label.
func itemsUnder(lines []string, re *regexp.Regexp) []string {
	var out []string
	collecting := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		isHeading := strings.HasPrefix(t, "#")
		isLabel := !isHeading && reChatListItem().FindStringSubmatch(l) == nil && (strings.HasPrefix(t, "**") || strings.HasPrefix(t, "__"))
		if isHeading || isLabel {
			if collecting {
				return out
			}
			label := strings.TrimLeft(t, "# ")
			rest := ""
			if isLabel {
				if lb, v, ok := labelled(t); ok {
					label, rest = lb, v
				} else {
					label = stripEmphasis(t)
				}
			}
			if re.MatchString(label) {
				collecting = true
				if rest != "" {
					out = append(out, rest)
				}
			}
			continue
		}
		if !collecting || t == "" {
			continue
		}
		if m := reChatListItem().FindStringSubmatch(l); m != nil {
			if len(m[1]) < 2 {
				out = append(out, m[2])
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

// firstParagraph returns the first paragraph of text lines (no heading,
// label or list item), joined.
func firstParagraph(lines []string) string {
	var p []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "" && len(p) > 0:
			return strings.Join(p, " ")
		case t == "", strings.HasPrefix(t, "#"), strings.HasPrefix(t, "**"), strings.HasPrefix(t, "```"), reChatListItem().MatchString(l):
			if len(p) > 0 {
				return strings.Join(p, " ")
			}
		default:
			p = append(p, t)
		}
	}
	return strings.Join(p, " ")
}

// endTime reads a summary's end: a line labelled End/Ended with a date-time
// (or a time of the start's day), else a Duration added to start. Zero
// when the summary states neither, or states an end before the start.
func endTime(lines []string, start time.Time, loc *time.Location) time.Time {
	var end time.Time
	for _, l := range lines {
		label, value, ok := labelled(l)
		if !ok {
			continue
		}
		switch {
		case reEndLabel().MatchString(label):
			if t, hasClock, ok := localDateTime(value, loc); ok && hasClock {
				end = t
			} else if t, ok := clockOn(value, start); ok {
				end = t
			}
		case reDurationLabel().MatchString(label) && end.IsZero():
			if clocks := reClock().FindAllStringIndex(value, -1); len(clocks) >= 2 {
				if t, ok := clockOn(value[clocks[len(clocks)-1][0]:], start); ok {
					if t.Before(start) {
						t = t.AddDate(0, 0, 1)
					}
					end = t
				}
			} else if d, ok := parseDuration(value); ok {
				end = start.Add(d)
			}
		}
		if !end.IsZero() {
			break
		}
	}
	if end.Before(start) {
		return time.Time{}
	}
	return end
}

// parseDuration reads "2 hours 15 minutes", "2h 15m", "135 minutes",
// "1.5 hours".
func parseDuration(s string) (time.Duration, bool) {
	s = strings.ToLower(s)
	var d time.Duration
	found := false
	if m := reHours().FindStringSubmatch(s); m != nil {
		if h, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", "."), 64); err == nil {
			d += time.Duration(h * float64(time.Hour))
			found = true
		}
	}
	if m := reMinutes().FindStringSubmatch(s); m != nil {
		if mi, err := strconv.Atoi(m[1]); err == nil {
			d += time.Duration(mi) * time.Minute
			found = true
		}
	}
	return d, found && d > 0
}

// firstTime returns the first of ts that is not the zero time, or zero.
func firstTime(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// walkFiles returns the files under root (absolute paths, in walk order),
// and as skipped the hidden folders below root ("a hidden folder: not
// <what>") and what could not be read, each named by its path under prefix.
// The error is root's own.
func walkFiles(root, prefix, what string) (files []string, skipped []Skipped, err error) {
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		rel := path.Join(prefix, relSlash(root, p))
		if err != nil {
			if p == root {
				return err
			}
			skipped = append(skipped, Skipped{Path: rel, Reason: "unreadable: " + err.Error()})
			if e != nil && e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if p != root && strings.HasPrefix(e.Name(), ".") {
				skipped = append(skipped, Skipped{Path: rel + "/", Reason: "a hidden folder: not " + what})
				return fs.SkipDir
			}
			return nil
		}
		files = append(files, p)
		return nil
	})
	return files, skipped, err
}
