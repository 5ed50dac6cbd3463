package importer

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/markdown"
)

// aider's chat history (.aider.chat.history.md, the --chat-history-file),
// as aider/io.py appends to it (InputOutput.append_chat_history):
//
//   - each run of aider starts a chat with "\n# aider chat started at
//     YYYY-MM-DD HH:MM:SS\n\n" (local time, no zone);
//   - each user message is written as lines "#### text" (a multi-line input
//     gives one "#### " line per line, joined by two trailing spaces; an
//     empty input is "#### <blank>");
//   - tool output, confirmations and questions are blockquote lines "> text"
//     (aider's own messages: "> Applied edit to src/app.py", "> Commit
//     1a2b3c4 feat: …", "> Model: … with diff edit format", "> Aider v…");
//   - assistant replies are the rest, as the model wrote them (markdown).
//
// Nothing else is promised: a reply may itself hold "#### " or "> " lines,
// which are then read as a user message or tool output (the record keeps the
// chat's text byte for byte either way). The file is appended to, never
// rewritten; on Windows its lines end in CRLF.

// KeepsDigest reports whether the records of a source format keep a digest
// of their source rather than its text (Claude Code transcripts): such a
// record cannot be read back (Reparse), and says itself whether it was
// edited since it was written.
func KeepsDigest(format string) bool { return format == FormatClaudeCode }

// ErrNoReparse says a record's kept text cannot be read back as its session
// (Reparse): the record keeps a digest of its source, not the source.
var ErrNoReparse = errors.New("its record keeps a digest of the source, not the source, and cannot be read back")

// FormatAiderChat is the Session.Format of one chat of an aider history.
const FormatAiderChat = "aider-chat"

// ErrNotAiderHistory is returned (wrapped) by [ParseAiderHistory] for a file
// without a single "# aider chat started at" line.
var ErrNotAiderHistory = errors.New("not an aider chat history")

var (
	reAiderHeader = lazyregexp.New(`^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$`)
	reAiderEdit   = lazyregexp.New(`^Applied edit to (.+)$`)
	reAiderCommit = lazyregexp.New(`^Commit ([0-9a-f]{7,40}) (.+)$`)
	reAiderModel  = lazyregexp.New(`^(?:Main )?[Mm]odels?: (.+)$`)
)

// maxAiderOutcomes bounds the edited files and commits listed in a chat's
// outcomes (the chat's text keeps them all).
const maxAiderOutcomes = 50

// ParseAiderHistory splits an aider chat history into one Session per chat.
// source is the path reported for it (the record's source property: pass
// the file's base name so it does not depend on how the file was named on
// the command line). Times are read in loc.
//
// Each chat runs from its "# aider chat started at" line to the next one;
// the blank lines before the next chat's line separate the two and belong
// to neither (aider writes them when the next chat starts, so a chat's text
// does not change when the file grows). The Session of a chat: ID
// "YYYY-MM-DD-aider-HHMMSS" from its start (with "-2", "-3"… for chats
// started in the same second); Format FormatAiderChat; Date the start;
// Objective the first user message that is not an aider command ("/add
// …"), else the first user message, else "aider chat started at …";
// Updates one per user message, commands included (one line each, at most
// MaxLineLen bytes; UpdateTimes nil: aider writes no time per message);
// Outcomes a count line ("4 user messages, 3 replies, 2 files edited, 1
// commit"), the model, then "Applied edit to …" (each file once) and
// "Commit …" lines, at most maxAiderOutcomes of each; Issues the references
// in the text; Original the chat's bytes.
//
// Chats that cannot be kept are returned as skipped, with the reason: over
// MaxOriginal bytes, or not UTF-8 text; so is text before the first chat
// that is not blank. The error wraps ErrNotAiderHistory when the file has
// no chat at all.
func ParseAiderHistory(source string, data []byte, loc *time.Location) ([]Session, []Skipped, error) {
	type start struct {
		off, line int
		when      time.Time
	}
	var starts []start
	lineNo := 0
	for off := 0; off < len(data); {
		end := markdown.LineEnd(data, off)
		lineNo++
		if !bytes.HasPrefix(data[off:end], []byte("# aider chat started at ")) {
			off = end
			continue
		}
		if m := reAiderHeader().FindStringSubmatch(strings.TrimRight(string(data[off:end]), "\r\n")); m != nil {
			if t, err := time.ParseInLocation("2006-01-02 15:04:05", m[1], loc); err == nil {
				starts = append(starts, start{off, lineNo, t})
			}
		}
		off = end
	}
	if len(starts) == 0 {
		return nil, nil, &ParseError{Path: source, Err: fmt.Errorf("%w: no \"# aider chat started at YYYY-MM-DD HH:MM:SS\" line", ErrNotAiderHistory)}
	}
	var out []Session
	var skipped []Skipped
	if len(bytes.TrimSpace(data[:starts[0].off])) > 0 {
		skipped = append(skipped, Skipped{Path: fmt.Sprintf("%s lines 1-%d", source, starts[0].line-1), Reason: "text before the first \"# aider chat started at\" line: not part of a chat"})
	}
	ids := map[string]int{}
	for i, st := range starts {
		end := len(data)
		if i+1 < len(starts) {
			end = starts[i+1].off
		}
		block := trimTrailingBlankLines(data[st.off:end])
		where := fmt.Sprintf("%s line %d (chat started at %s)", source, st.line, st.when.Format("2006-01-02 15:04:05"))
		if len(block) > MaxOriginal {
			skipped = append(skipped, Skipped{Path: where, Reason: fmt.Sprintf("%d bytes: larger than the %d MB a session record can keep (a vault note may have 10 MB)", len(block), MaxOriginal>>20)})
			continue
		}
		if why := notText(block); why != "" {
			skipped = append(skipped, Skipped{Path: where, Reason: why + " (aider --encoding other than UTF-8?)"})
			continue
		}
		s := parseAiderChat(source, block, st.when)
		if ids[s.ID]++; ids[s.ID] > 1 {
			s.ID += "-" + strconv.Itoa(ids[s.ID])
		}
		out = append(out, s)
	}
	return out, skipped, nil
}

// trimTrailingBlankLines cuts the blank lines at the end of b, keeping the
// line ending of its last line of text.
func trimTrailingBlankLines(b []byte) []byte {
	end := len(b)
	for end > 0 {
		start := bytes.LastIndexByte(b[:end-1], '\n') + 1
		if end-1 < 0 || b[end-1] != '\n' || len(bytes.TrimSpace(b[start:end])) > 0 {
			break
		}
		end = start
	}
	return b[:end]
}

// parseAiderChat reads one chat (its header line first).
func parseAiderChat(source string, block []byte, when time.Time) Session {
	s := Session{
		ID: when.Format("2006-01-02") + "-aider-" + when.Format("150405"), SourcePath: source,
		Format: FormatAiderChat, Date: when, Original: block,
	}
	var users []string
	var cur []string
	replies, inReply := 0, false
	model := ""
	var edits, commits []string
	seenEdit := map[string]bool{}
	flush := func() {
		if len(cur) > 0 {
			users = append(users, strings.Join(cur, " "))
			cur = nil
		}
	}
	lines := strings.Split(string(block), "\n")
	for _, raw := range lines[1:] {
		l := strings.TrimRight(raw, "\r")
		switch {
		case l == "####" || strings.HasPrefix(l, "#### "):
			inReply = false
			t := strings.TrimSpace(strings.TrimPrefix(l, "####"))
			if t != "<blank>" && t != "" {
				cur = append(cur, t)
			}
		case l == ">" || strings.HasPrefix(l, "> "):
			flush()
			inReply = false
			t := strings.TrimSpace(strings.TrimPrefix(l, ">"))
			if m := reAiderEdit().FindStringSubmatch(t); m != nil && !seenEdit[m[1]] {
				seenEdit[m[1]] = true
				edits = append(edits, t)
			} else if reAiderCommit().MatchString(t) {
				commits = append(commits, t)
			} else if m := reAiderModel().FindStringSubmatch(t); m != nil && model == "" {
				model = m[1]
			}
		case strings.TrimSpace(l) == "":
			flush()
		default:
			flush()
			if !inReply {
				replies++
				inReply = true
			}
		}
	}
	flush()
	for _, u := range users {
		s.Updates = appendLine(s.Updates, u)
	}
	for _, u := range users {
		if !strings.HasPrefix(u, "/") {
			s.Objective = line(u)
			break
		}
	}
	if s.Objective == "" && len(s.Updates) > 0 {
		s.Objective = s.Updates[0]
	}
	if s.Objective == "" {
		s.Objective = "aider chat started at " + when.Format("2006-01-02 15:04:05")
	}
	s.Outcomes = append(s.Outcomes, fmt.Sprintf("%s, %s, %s, %s", count(len(users), "user message"), count(replies, "reply"), count(len(edits), "file edited"), count(len(commits), "commit")))
	if model != "" {
		s.Outcomes = appendLine(s.Outcomes, "Model: "+model)
	}
	for _, e := range edits[:min(len(edits), maxAiderOutcomes)] {
		s.Outcomes = appendLine(s.Outcomes, e)
	}
	for _, c := range commits[:min(len(commits), maxAiderOutcomes)] {
		s.Outcomes = appendLine(s.Outcomes, c)
	}
	var r refs
	r.scan(string(block))
	s.Issues = r.list()
	return s
}

// count renders "1 commit", "2 commits", "3 replies", "2 files edited".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	switch {
	case strings.HasSuffix(what, "y"):
		what = strings.TrimSuffix(what, "y") + "ies"
	case strings.HasPrefix(what, "file "):
		what = "files " + strings.TrimPrefix(what, "file ")
	default:
		what += "s"
	}
	return strconv.Itoa(n) + " " + what
}

// Reparse parses original again as the format s was read from
// (FormatClaudeSession, FormatAiderChat), keeping s's ID and SourcePath: the
// session an earlier import read from the text its record keeps (what
// ScanClaudeSessions adds from outside the text, the active Status, is not
// restored). Times are
// read in loc. It fails for other formats, and when original is no longer
// a session of that format.
//
// A format whose records keep a digest rather than the source (Claude Code
// transcripts) cannot be read back: the error wraps ErrNoReparse.
func Reparse(s Session, original []byte, loc *time.Location) (Session, error) {
	var out Session
	switch s.Format {
	case FormatClaudeSession:
		var err error
		// A note dated only by its first commit keeps the start it has now.
		if out, err = parseClaudeSession(s.SourcePath, original, loc, func() (time.Time, bool) { return s.Date, !s.Date.IsZero() }); err != nil {
			return Session{}, err
		}
	case FormatSpecStory:
		var err error
		if out, _, err = ParseSpecStory(s.SourcePath, original, loc); err != nil {
			return Session{}, err
		}
	case FormatAiderChat:
		ss, _, err := ParseAiderHistory(path.Base(s.SourcePath), original, loc)
		if err != nil {
			return Session{}, err
		}
		if len(ss) != 1 {
			return Session{}, fmt.Errorf("%s: the kept text holds %d chats, not one", s.SourcePath, len(ss))
		}
		out = ss[0]
		out.SourcePath = s.SourcePath
	default:
		return Session{}, fmt.Errorf("%s: format %q: %w", s.SourcePath, s.Format, ErrNoReparse)
	}
	out.ID = s.ID
	return out, nil
}
