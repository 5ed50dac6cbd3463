package importer

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The session a Claude Code transcript adds up to: its outcomes and the digest its record keeps.

// finish makes the Session once every line is read.
func (p *ccParser) finish(loc *time.Location) (Session, []Skipped, error) {
	fail := func(format string, args ...any) (Session, []Skipped, error) {
		return Session{}, p.lineSkips(), &ParseError{Path: p.src, Err: fmt.Errorf("%w: "+format, append([]any{ErrNotClaudeCodeTranscript}, args...)...)}
	}
	switch {
	case p.nonBlank == 0:
		return Session{}, nil, &ParseError{Path: p.src, Err: ErrEmpty}
	case p.parsed == 0:
		return Session{}, nil, &ParseError{Path: p.src, Err: fmt.Errorf("%w: no line is a JSON object (line %d: %s)", ErrNotClaudeCodeTranscript, p.badLines[0], p.badSkipped[0].Reason)}
	case p.mainMsgs == 0 && p.sideMsgs > 0:
		return fail("only a subagent's events (%d with \"isSidechain\": true), no session of its own", p.sidechain)
	case p.mainMsgs == 0:
		return fail("no user or assistant message (events: %s)", ccCounts(p.types))
	case len(p.minTS) == 0:
		return fail("no event has a timestamp")
	}
	start, end := ccParseTS(p.minTS), ccParseTS(p.maxTS)
	sid := p.stem
	if !p.stemSeen && p.lastSID != "" {
		sid = ccStr([]byte(p.lastSID), 256) // raw until now
	}
	s := Session{
		ID:         start.In(loc).Format("2006-01-02") + "-claude-code-" + ccShortID(sid),
		SourcePath: p.src, Format: FormatClaudeCode, Date: start,
		Objective:   ccFirst(p.objective, p.firstCommand, p.firstSummary, ccLine("Claude Code session "+sid)),
		EndCommit:   p.endCommit,
		Checklist:   p.todos,
		Updates:     p.updates,
		UpdateTimes: p.updateTimes,
		Issues:      p.refs.list(),
	}
	if end.After(start) {
		s.Ended = end
	}
	if len(p.branches) > 0 {
		s.Branch = ccLine(p.branches[0])
	}
	s.Outcomes = p.outcomes()
	s.Original = p.digest.text(p.src, p.typeCounts(), p.sidechain)
	return s, p.lineSkips(), nil
}

func ccFirst(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// typeCounts are the counts of the event types not read (other than user,
// assistant, system and summary), most first.
func (p *ccParser) typeCounts() []ccCount {
	var out []ccCount
	for _, c := range p.types {
		switch c.name {
		case "user", "assistant", "system", "summary":
		default:
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].n > out[b].n })
	return out
}

// ccCounts renders "a 3, b 1".
func ccCounts(cs []ccCount) string {
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		parts = append(parts, c.name+" "+strconv.Itoa(c.n))
	}
	return strings.Join(parts, ", ")
}

// lineSkips are the Skipped of the lines not read.
func (p *ccParser) lineSkips() []Skipped {
	out := p.badSkipped
	if n := len(p.badLines) - len(p.badSkipped); n > 0 {
		out = append(out, Skipped{Path: p.src + ":" + strconv.Itoa(p.badLines[maxCCBadLines]), Reason: fmt.Sprintf("not JSON, nor are %d more lines after it: not read", n-1)})
	}
	return out
}

// ccShortID is the session ID's part of a Session.ID: a UUID's first 8
// characters, else the ID made a name (at most 40 characters).
func ccShortID(sid string) string {
	if ccIsUUID(sid) {
		return strings.ToLower(sid[:8])
	}
	b := []byte(sid)
	for i, c := range b {
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '-'
		}
	}
	return string(b[:min(len(b), 40)])
}

func ccIsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// outcomes lists what the session did.
func (p *ccParser) outcomes() []string {
	edited := 0
	var files []string
	for _, f := range p.edited {
		if p.editOK[f] > 0 {
			edited++
			if len(files) < maxCCOutcomes {
				files = append(files, "Edited "+f)
			}
		}
	}
	calls := count(p.toolCalls, "tool call")
	if p.toolErrors > 0 {
		calls += fmt.Sprintf(" (%d failed)", p.toolErrors)
	}
	head := []string{count(p.prompts, "prompt"), count(p.replies, "reply"), calls, count(edited, "file edited"), count(len(p.commits), "commit")}
	if c := max(p.compactions, p.compactSummaries); c > 0 {
		head = append(head, count(c, "compaction"))
	}
	if p.interrupts > 0 {
		head = append(head, count(p.interrupts, "interruption"))
	}
	out := []string{strings.Join(head, ", ")}
	switch len(p.models) {
	case 0:
	case 1:
		out = append(out, "Model: "+p.models[0])
	default:
		out = append(out, "Models: "+strings.Join(p.models, ", "))
	}
	if p.version != "" || p.cwd != "" {
		where := "Claude Code"
		if p.version != "" {
			where += " " + p.version
		}
		if p.cwd != "" {
			where += " in " + p.cwd
		}
		out = append(out, where)
	}
	if len(p.tools) > 0 {
		ts := append([]ccCount(nil), p.tools...)
		sort.Slice(ts, func(a, b int) bool {
			if ts[a].n != ts[b].n {
				return ts[a].n > ts[b].n
			}
			return ts[a].name < ts[b].name
		})
		var parts []string
		for _, t := range ts {
			parts = append(parts, t.name+" "+strconv.Itoa(t.n))
		}
		out = append(out, "Tools: "+strings.Join(parts, ", "))
	}
	out = append(out, files...)
	if edited > len(files) {
		out = append(out, fmt.Sprintf("… and %d more files edited", edited-len(files)))
	}
	for i, c := range p.commits {
		if i == maxCCOutcomes {
			out = append(out, fmt.Sprintf("… and %d more commits", len(p.commits)-i))
			break
		}
		out = append(out, c)
	}
	if p.commitRuns > len(p.commits) {
		out = append(out, fmt.Sprintf("git commit run %d times, %s", p.commitRuns, count(len(p.commits), "commit")+" made"))
	}
	if len(p.branches) > 1 {
		out = append(out, "Branches: "+strings.Join(p.branches, ", "))
	}
	var left []string
	if p.sidechain > 0 {
		left = append(left, fmt.Sprintf("%d subagent (sidechain) events", p.sidechain))
	}
	if others := p.typeCounts(); len(others) > 0 {
		left = append(left, "events of other types ("+ccCounts(others)+")")
	}
	if len(p.otherBlocks) > 0 {
		left = append(left, "content blocks of other types ("+ccCounts(p.otherBlocks)+")")
	}
	if p.thinking > 0 {
		left = append(left, count(p.thinking, "thinking block"))
	}
	if p.images > 0 {
		left = append(left, count(p.images, "image"))
	}
	if len(left) > 0 {
		out = append(out, "Not read: "+strings.Join(left, "; "))
	}
	if n := len(p.badLines); n > 0 {
		var ls []string
		for _, l := range p.badLines[:min(n, maxCCBadLines)] {
			ls = append(ls, strconv.Itoa(l))
		}
		more := ""
		if n > maxCCBadLines {
			more = fmt.Sprintf(" and %d more", n-maxCCBadLines)
		}
		out = append(out, fmt.Sprintf("%s not JSON, not read: %s%s", count(n, "line"), strings.Join(ls, ", "), more))
	}
	for i := range out {
		out[i] = truncate(strings.Join(strings.Fields(out[i]), " "), MaxLineLen)
	}
	return out
}

// ccDigest is the text a transcript's record keeps (Session.Original): not
// the transcript's JSON (megabytes, mostly tool output, and read by people
// and agents in the vault), but one line per event the session is about —
//
//	L12 07:27:40 user: add a config file for the staging server
//	L13 07:27:45 assistant: I'll create it.
//	L13 07:27:45 → Write: config/staging.yaml
//	L15 07:27:50 ✗ Edit: String to replace not found in file.
//	L20 07:28:02 commit: Commit 1a2b3c4 add staging config
//	L31 not read: not JSON: unexpected end of the line
//
// — "L<n>" the transcript's line, the time in UTC, texts cut to
// ccDigestText bytes on one line, after a first line saying what it is.
// Successful tool results, thinking, subagent events and events of other
// types are left out. Over maxCCDigest bytes, the first two thirds and the
// last third are kept, with the count of lines left out between them.
// It is the same for the same transcript, so a second import finds the
// record unchanged.
type ccDigest struct {
	head      []byte
	tail      [][]byte
	tailStart int
	tailBytes int
	dropped   int
	scratch   []byte
}

const ccDigestHead = maxCCDigest * 2 / 3

// add adds a line for text (decoded).
func (d *ccDigest) add(lineNo int, ts []byte, kind, text string) {
	d.add2(lineNo, ts, kind, "", text)
}

// add2 is add for the kind kind+name.
func (d *ccDigest) add2(lineNo int, ts []byte, kind, name, text string) {
	b := d.start(lineNo, ts, kind)
	b = append(b, name...)
	if text != "" {
		b = append(b, ": "...)
		b = ccAppendFolded(b, text, ccDigestText)
	}
	d.push(b)
}

// addRaw adds a line for raw JSON string contents.
func (d *ccDigest) addRaw(lineNo int, ts []byte, kind string, raw []byte) {
	text := ccStr(raw, 2*ccDigestText)
	if strings.TrimSpace(text) == "" {
		return
	}
	d.add(lineNo, ts, kind, text)
}

func (d *ccDigest) start(lineNo int, ts []byte, kind string) []byte {
	b := append(d.scratch[:0], 'L')
	b = strconv.AppendInt(b, int64(lineNo), 10)
	if len(ts) >= 19 {
		b = append(b, ' ')
		b = append(b, ts[11:19]...)
	}
	b = append(b, ' ')
	return append(b, kind...)
}

func (d *ccDigest) push(b []byte) {
	b = append(b, '\n')
	d.scratch = b
	if len(d.head)+len(b) <= ccDigestHead && len(d.tail) == 0 {
		if d.head == nil {
			d.head = make([]byte, 0, 16<<10)
		}
		d.head = append(d.head, b...)
		return
	}
	d.tail = append(d.tail, append([]byte(nil), b...))
	d.tailBytes += len(b)
	for d.tailBytes > maxCCDigest-ccDigestHead && d.tailStart < len(d.tail) {
		d.tailBytes -= len(d.tail[d.tailStart])
		d.tail[d.tailStart] = nil
		d.tailStart++
		d.dropped++
	}
	if d.tailStart > 1024 && d.tailStart > len(d.tail)/2 {
		d.tail = append(d.tail[:0], d.tail[d.tailStart:]...)
		d.tailStart = 0
	}
}

// text renders the digest, after its first line.
func (d *ccDigest) text(src string, others []ccCount, sidechain int) []byte {
	var b bytes.Buffer
	head := "Claude Code transcript " + src + " in brief, not its JSON: one line per prompt, reply, tool call, failed tool result, commit and compaction (L<n>: the transcript's line; times UTC; texts cut to " + strconv.Itoa(ccDigestText) + " bytes)"
	var left []string
	if sidechain > 0 {
		left = append(left, fmt.Sprintf("%d subagent events", sidechain))
	}
	if len(others) > 0 {
		left = append(left, "events of other types ("+ccCounts(others)+")")
	}
	if len(left) > 0 {
		head += "; left out: " + strings.Join(left, "; ")
	}
	b.Write(ccAppendFolded(nil, head+".", len(head)+1)) // one line, whatever the names
	b.WriteString("\n")
	b.Write(d.head)
	if d.dropped > 0 {
		fmt.Fprintf(&b, "… %d lines left out …\n", d.dropped)
	}
	for _, l := range d.tail[d.tailStart:] {
		b.Write(l)
	}
	return b.Bytes()
}

// ccAppendFolded appends text on one line (white space and control
// characters folded to one space), cut to at most n bytes with "…".
func ccAppendFolded(b []byte, text string, n int) []byte {
	start, space := len(b), false
	// ASCII, the usual case, a byte at a time.
	i := 0
	for ; i < len(text); i++ {
		c := text[i]
		if c >= utf8.RuneSelf {
			break
		}
		if c <= ' ' || c == 0x7f {
			space = true
			continue
		}
		if space && len(b) > start {
			b = append(b, ' ')
		}
		space = false
		if len(b)-start+1 > n {
			return append(b, "…"...)
		}
		b = append(b, c)
	}
	for _, r := range text[i:] {
		if r < 0x20 || r == 0x7f || r == ' ' || r == '\u2028' || r == '\u2029' || r == 0x85 {
			space = true
			continue
		}
		if space && len(b) > start {
			b = append(b, ' ')
		}
		space = false
		if len(b)-start+utf8.RuneLen(r) > n {
			return append(b, "…"...)
		}
		b = utf8.AppendRune(b, r)
	}
	return b
}
