package importer

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The SpecStory chat parser: one pass over the lines, speakers, fences and headers.

var (
	nl         = []byte("\n")
	nlPlus     = []byte("\n+")
	nlMinus    = []byte("\n-")
	bom        = []byte("\xef\xbb\xbf")
	toolUseBeg = []byte("Tool use: **")
	thinkEnd   = []byte("</think>")
)

type ssRole uint8

const (
	ssNone     ssRole = iota // before the first speaker line
	ssUser                   // a person's request
	ssSideUser               // a sub-agent's prompt ("sidechain")
	ssAgent                  // the assistant
)

type ssKind uint8

const (
	ssOther ssKind = iota
	ssEdit
	ssCommand
	ssRead
)

// ssTool is a tool call being read. Its text fields point into the chat
// (or a copy without HTML escapes) until endTool folds them into lines.
type ssTool struct {
	kind           ssKind
	verb           string // "Created", "Deleted"; "" is "Edited"
	path, cmd      []byte
	desc           []byte
	context        []byte // the agent's text before a diff that names no file
	added, removed int
	diff           bool
	cancelled      bool
	failed         bool // an edit that reported an error: nothing changed
	summarized     bool // its <summary> has been read
	body           bool // past its description: a code block, argument or the end of its <details>
	tagged         bool // opened by <tool-use …>: ends at </tool-use>
	depth          int  // <details> open in it
	off            int  // where it started
	at             time.Time
}

// ssSet is a set of strings in order of first addition.
type ssSet struct {
	list []string
	seen map[string]bool
}

// add adds v (converted only when new).
func (s *ssSet) add(v []byte) {
	if s.seen[string(v)] {
		return
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	str := string(v)
	s.seen[str] = true
	s.list = append(s.list, str)
}

// ssChange is a file a tool call changed: its path as written in the chat,
// and how.
type ssChange struct {
	path []byte
	verb string
}

// ssParser reads one chat, line by line.
type ssParser struct {
	src     string
	data    []byte
	loc     *time.Location
	skipped []Skipped

	marker      bool   // a SpecStory header comment or heading
	title       []byte // without its time
	titleTime   time.Time
	commentTime time.Time
	provider    string
	chatID      string

	messages int
	role     ssRole
	at       time.Time // the current message's time
	msgOff   int       // where the current message's speaker line starts
	cont     bool      // the current message is a "_****_" part
	fresh    bool      // the current message has no content yet
	req      []byte    // the current request's text, up to maxRequestBytes
	reqAt    time.Time
	reqFull  bool
	tool     *ssTool // the tool call being read: nil, or &cur
	cur      ssTool
	scratch  []byte // where endTool makes its line

	requests, replies, edits, commands int
	first, last                        time.Time
	day                                []byte    // "YYYY-MM-DD" of the last speaker line's UTC time
	dayStart                           time.Time // its midnight
	hdrHead, hdrTail                   []byte    // the last speaker line before and after its time, when it has one
	hdrRole                            ssRole
	hdrSide                            bool
	models                             ssSet
	lastModel                          []byte
	changed                            []ssChange // in order, as written: the sets are made once read
	read, ran                          [][]byte
	updates                            []string
	times                              []time.Time
	anyTime                            bool
	objective                          string
	refs                               refs
}

// bad reports the line at off as malformed.
func (p *ssParser) bad(off int, reason string) {
	line := bytes.Count(p.data[:off], nl) + 1
	p.skipped = append(p.skipped, Skipped{Path: p.src + ":" + strconv.Itoa(line), Reason: reason})
}

// run reads the chat from its start to its end.
func (p *ssParser) run() {
	off := 0
	if bytes.HasPrefix(p.data, bom) {
		off = len(bom)
	}
	p.runRange(off, len(p.data))
	p.finish()
}

// runRange reads the lines from off, the start of a line, until the next
// line to read starts at or after stop, and returns that line's offset: stop
// itself, or past it when stop is inside a block read whole (a code block,
// a <think> block).
func (p *ssParser) runRange(off, stop int) int {
	d := p.data
	for off < stop {
		if d[off] == '\n' { // SpecStory puts a blank line between everything
			off++
			continue
		}
		end := len(d)
		if i := bytes.IndexByte(d[off:], '\n'); i >= 0 {
			end = off + i + 1
		}
		// Most lines are text: of the assistant, outside a tool call; of a
		// request already read in full; of a sub-agent's prompt. Only a line
		// starting with one of a few bytes can change what is read.
		if c := d[off]; plainStart[c] {
			switch {
			case p.role == ssAgent && p.tool == nil:
				p.fresh = false
				off = end
				continue
			case p.role == ssSideUser, p.role == ssUser && p.reqFull:
				off = end
				continue
			}
		}
		off = p.line(off, end)
	}
	return off
}

// finish ends the chat once its last line is read.
func (p *ssParser) finish() {
	if t := p.tool; t != nil && t.tagged {
		p.bad(t.off, "a <tool-use> block opened here is not closed before the end of the file (a chat cut short?): read to the end")
	}
	p.endMessage()
}

// plainStart holds the bytes a line of text may start with that starts
// nothing to read outside a tool call: not white space, '\n', '\r', '_'
// (speaker lines), '`' and '~' (code blocks), '<' (tags), '-' ("---") or
// 'T' ("Tool use:").
var plainStart = func() (t [256]bool) {
	for c := range t {
		t[c] = true
	}
	for _, c := range " \t\r\n_`~<-T" {
		t[c] = false
	}
	return t
}()

// lineEnd returns the offset after the line starting at off (after its
// '\n', or len(d)).
func lineEnd(d []byte, off int) int {
	if i := bytes.IndexByte(d[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(d)
}

// line reads the line d[off:end] and returns the offset of the next line to
// read (past a code or <think> block it starts).
func (p *ssParser) line(off, end int) int {
	l := p.data[off:end]
	for len(l) > 0 && (l[len(l)-1] == '\n' || l[len(l)-1] == '\r') {
		l = l[:len(l)-1]
	}
	ind := 0
	for ind < len(l) && (l[ind] == ' ' || l[ind] == '\t') {
		ind++
	}
	t := l[ind:]
	if len(t) == 0 {
		return end
	}
	c := t[0]
	if (c == '`' || c == '~') && ind <= 3 {
		if n := fenceOpen(t); n > 0 {
			return p.fence(off, end, t, n)
		}
	}
	if c == '_' && ind == 0 && len(t) >= 4 && t[1] == '*' && t[2] == '*' && p.header(off, t) {
		return end
	}
	switch p.role {
	case ssUser:
		if !bytes.HasPrefix(t, []byte("<!--")) && !(ind == 0 && isRule(t)) {
			p.addRequest(t)
		}
		return end
	case ssSideUser:
		return end
	case ssNone:
		p.preamble(t, ind)
		return end
	}
	return p.agentLine(off, end, t, ind)
}

// fenceOpen returns the length of the fence that opens a code block on line
// t (3 or more backticks or tildes; a backtick fence's info string holds no
// backtick), or 0.
func fenceOpen(t []byte) int {
	c := t[0]
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 || c == '`' && bytes.IndexByte(t[n:], '`') >= 0 {
		return 0
	}
	return n
}

// fence reads the code block whose opening line t (at off, ending at end)
// has a fence of n characters, and returns the offset after it: one search
// for its closing fence, however long the block.
func (p *ssParser) fence(off, end int, t []byte, n int) int {
	lang := bytes.TrimSpace(t[n:])
	for i, c := range lang {
		if c == ' ' || c == '{' {
			lang = lang[:i]
			break
		}
	}
	cs, ce := fenceClose(p.data, end, t[0], n)
	if cs < 0 {
		p.bad(off, "a code block opened here is not closed before the end of the file (a chat cut short?): read as code to the end")
		cs, ce = len(p.data), len(p.data)
	}
	body := p.data[end:cs]
	switch p.role {
	case ssUser:
		p.addRequest(body)
	case ssAgent:
		p.agentFence(lang, body)
	}
	p.fresh = false
	return ce
}

// fenceClose finds the line closing a code block whose body starts at from:
// at most 3 spaces, at least n of c, then only white space. It returns the
// offsets of that line's start and end, or -1, -1.
func fenceClose(d []byte, from int, c byte, n int) (int, int) {
	marker := []byte("```")
	if c == '~' {
		marker = []byte("~~~")
	}
	for pos := from; pos < len(d); {
		i := bytes.Index(d[pos:], marker)
		if i < 0 {
			return -1, -1
		}
		j := pos + i
		r := j
		for r < len(d) && d[r] == c {
			r++
		}
		ls, sp := j, 0
		for ls > from && d[ls-1] == ' ' && sp <= 3 {
			ls--
			sp++
		}
		if sp <= 3 && (ls == from || d[ls-1] == '\n') && r-j >= n {
			e := lineEnd(d, r)
			if len(bytes.TrimSpace(d[r:e])) == 0 {
				return ls, e
			}
		}
		pos = r
	}
	return -1, -1
}

// header reads a speaker line ("_**User (…)**_", "_**Agent (…)**_",
// "_****_"); false when t is not one (e.g. "_**Note**_" in a reply).
func (p *ssParser) header(off int, t []byte) bool {
	// Most speaker lines repeat the one before but for its time.
	if h, tl := p.hdrHead, p.hdrTail; len(h) > 0 && len(t) > len(h)+len(tl) && bytes.HasPrefix(t, h) && bytes.HasSuffix(t, tl) {
		if ts, ok := p.sameDay(t[len(h) : len(t)-len(tl)]); ok {
			p.startMessage(off, p.hdrRole, p.hdrSide, false, ts)
			return true
		}
	}
	p.hdrHead = nil
	inner, closed := t[3:], false
	if len(t) >= 6 && t[len(t)-1] == '_' && t[len(t)-2] == '*' && t[len(t)-3] == '*' {
		inner, closed = t[3:len(t)-3], true
	}
	var role ssRole
	var rest []byte
	switch {
	case len(inner) == 0 && closed:
		role = ssAgent // "_****_": the assistant goes on
	case bytes.HasPrefix(inner, []byte("User")):
		role, rest = ssUser, inner[4:]
	case bytes.HasPrefix(inner, []byte("Agent")):
		role, rest = ssAgent, inner[5:]
	case bytes.HasPrefix(inner, []byte("Assistant")):
		role, rest = ssAgent, inner[9:]
	default:
		return false
	}
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '(' && (closed || rest[0] != '*') {
		return false // "_**Users**_"
	}
	if !closed {
		rest = bytes.TrimRight(rest, "*_ ")
	}
	rest = bytes.TrimLeft(rest, " ")
	side := false
	if r, ok := bytes.CutPrefix(rest, []byte("- sidechain")); ok {
		side, rest = true, bytes.TrimLeft(r, " ")
	}
	var at time.Time
	var model []byte
	badTime := false
	for len(rest) > 0 && rest[0] == '(' {
		g := rest[1:]
		if j := bytes.IndexByte(rest, ')'); j >= 0 {
			g, rest = rest[1:j], bytes.TrimLeft(rest[j+1:], " ")
		} else {
			rest = nil
		}
		if string(g) == "sidechain" {
			side = true
			continue
		}
		ts, start, ok, bad := p.headerStamp(g)
		badTime = badTime || bad
		if ok {
			if from := cap(t) - cap(g) + start; ts.Location() == time.UTC && p.dayStart.Location() == time.UTC {
				p.hdrHead, p.hdrTail = t[:from], t[cap(t)-cap(g)+len(g):] // for the next speaker line
			}
			at, g = ts, g[:start]
		}
		if role == ssAgent {
			if m := modelName(g); len(m) > 0 {
				model = m
			}
		}
	}
	if len(rest) > 0 {
		p.hdrHead = nil
		return false // "_**User guide**_": emphasis in a message, not a speaker
	}
	if !closed || badTime || len(inner) == 0 {
		p.hdrHead = nil
	}
	p.hdrRole, p.hdrSide = role, side
	if !closed {
		p.bad(off, "a speaker line cut short (no closing \"**_\"): read as the start of a message")
	}
	if badTime {
		p.bad(off, "a speaker line with an unreadable time: the message is read without it")
	}
	p.startMessage(off, role, side, len(inner) == 0, at)
	if len(model) > 0 && !bytes.Equal(model, p.lastModel) {
		p.models.add(model)
		p.lastModel = model
	}
	return true
}

// headerStamp reads the time ending a speaker line's parenthesised part
// ("2025-10-01 23:30Z", "claude-opus-4 2026-03-06 19:16:47Z"): it looks at
// the last two words first, then anywhere (findStamp).
func (p *ssParser) headerStamp(g []byte) (t time.Time, start int, ok, bad bool) {
	i := bytes.LastIndexByte(g, ' ')
	if i > 0 {
		j := bytes.LastIndexByte(g[:i], ' ') + 1
		if t, ok := p.sameDay(g[j:]); ok {
			return t, j, true, false
		}
		if t, n, ok, bad := isoStamp(g[j:], p.loc); (ok || bad) && j+n == len(g) {
			if ok { // (an unreadable date is no day to read the next lines' times in)
				p.day, p.dayStart = g[j:j+10], t.Add(-time.Duration(t.Hour())*time.Hour-time.Duration(t.Minute())*time.Minute-time.Duration(t.Second())*time.Second)
			}
			return t, j, ok, bad
		}
	}
	t, start, _, ok, bad = findStamp(g, p.loc)
	return t, start, ok, bad
}

// sameDay reads "YYYY-MM-DD HH:MM:SSZ" (or "HH:MMZ") of the same day and
// zone as the speaker line read before: most of a chat's are (time.Date is
// the dearest part of a speaker line).
func (p *ssParser) sameDay(b []byte) (time.Time, bool) {
	if len(p.day) == 0 || len(b) < 17 || b[len(b)-1] != 'Z' || p.dayStart.Location() != time.UTC || !bytes.Equal(b[:10], p.day) || b[10] != ' ' || b[13] != ':' {
		return time.Time{}, false
	}
	h, ok1 := digits(b, 11, 2)
	m, ok2 := digits(b, 14, 2)
	sec, ok3 := 0, true
	switch len(b) {
	case 17:
	case 20:
		if b[16] != ':' {
			return time.Time{}, false
		}
		sec, ok3 = digits(b, 17, 2)
	default:
		return time.Time{}, false
	}
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return time.Time{}, false
	}
	return p.dayStart.Add(time.Duration(h*3600+m*60+sec) * time.Second), true
}

// modelName reads a model from the parenthesised part of an agent's
// speaker line, its time already cut: "model claude-4.5-opus, mode Agent"
// → "claude-4.5-opus".
func modelName(g []byte) []byte {
	m := bytes.TrimSpace(g)
	m = bytes.TrimPrefix(m, []byte("model "))
	if i := bytes.IndexByte(m, ','); i >= 0 {
		m = m[:i]
	}
	return bytes.TrimSpace(m)
}

func (p *ssParser) startMessage(off int, role ssRole, side, cont bool, at time.Time) {
	p.endMessage()
	p.messages++
	p.msgOff, p.cont = off, cont
	if !at.IsZero() {
		if p.first.IsZero() {
			p.first = at
		}
		if at.After(p.last) {
			p.last = at
		}
	}
	if !cont {
		p.at = at
	}
	p.fresh = true
	switch {
	case role == ssUser && side:
		p.role = ssSideUser
	case role == ssUser:
		p.role = ssUser
		p.req, p.reqAt, p.reqFull = p.req[:0], at, false
	default:
		p.role = ssAgent
		if !cont && !side {
			p.replies++
		}
	}
}

func (p *ssParser) endMessage() {
	p.endTool()
	if p.role != ssUser {
		return
	}
	p.role = ssNone
	const asked = "Asked: "
	s := foldLine(asked, p.req, true)
	if len(s) == len(asked) || strings.HasPrefix(s, asked+"[Request interrupted") {
		return
	}
	p.requests++
	if p.objective == "" {
		p.objective = proseLine(p.req)
	}
	p.addUpdate(s, p.reqAt)
}

// addRequest adds a line or block of the current request's text (its first
// maxRequestBytes only), and the issue references in it.
func (p *ssParser) addRequest(b []byte) {
	if p.reqFull {
		return
	}
	room := maxRequestBytes - len(p.req)
	if len(b) >= room {
		cut := room
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b, p.reqFull = b[:cut], true
	}
	scanRefs(&p.refs, b)
	if len(p.req) > 0 {
		p.req = append(p.req, ' ')
	}
	p.req = append(p.req, b...)
}

// preamble reads a line before the first speaker line: the header
// comments and the title.
func (p *ssParser) preamble(t []byte, ind int) {
	switch {
	case bytes.HasPrefix(t, []byte("<!--")):
		p.comment(t)
	case t[0] == '#' && ind == 0:
		h := bytes.TrimSpace(bytes.TrimLeft(t, "#"))
		if string(h) == "SpecStory" {
			p.marker = true
		} else if p.title == nil && p.titleTime.IsZero() {
			p.setTitle(h)
		}
	}
}

// setTitle reads "Title (time)" or "time".
func (p *ssParser) setTitle(h []byte) {
	if len(h) > 0 && h[len(h)-1] == ')' {
		if i := bytes.LastIndex(h, []byte(" (")); i >= 0 {
			g := h[i+2 : len(h)-1]
			if ts, start, end, ok, _ := findStamp(g, p.loc); ok && start == 0 && end == len(g) {
				p.titleTime, h = ts, bytes.TrimSpace(h[:i])
			}
		}
	} else if ts, start, end, ok, _ := findStamp(h, p.loc); ok && start == 0 && end == len(h) {
		p.titleTime, h = ts, nil
	}
	p.title = h
	if h == nil {
		p.title = []byte{}
	}
	scanRefs(&p.refs, h)
}

// comment reads "<!-- Generated by SpecStory … -->" and "<!-- <tool>
// Session <id> (<time>) -->".
func (p *ssParser) comment(t []byte) {
	if bytes.Contains(t, []byte("Generated by SpecStory")) {
		p.marker = true
		return
	}
	i := bytes.Index(t, []byte(" Session "))
	if i < 0 || p.provider != "" {
		return
	}
	p.marker = true
	p.provider = string(bytes.TrimSpace(t[4:i]))
	rest := bytes.TrimSuffix(bytes.TrimSpace(t[i+len(" Session "):]), []byte("-->"))
	if j := bytes.IndexByte(rest, ' '); j >= 0 {
		p.chatID = string(rest[:j])
		rest = rest[j:]
	} else {
		p.chatID, rest = string(bytes.TrimSpace(rest)), nil
	}
	if a, b := bytes.IndexByte(rest, '('), bytes.LastIndexByte(rest, ')'); a >= 0 && b > a {
		if ts, _, _, ok, _ := findStamp(rest[a+1:b], p.loc); ok {
			p.commentTime = ts
		}
	}
}

// agentLine reads a line of the assistant's message.
func (p *ssParser) agentLine(off, end int, t []byte, ind int) int {
	tl := p.tool
	switch t[0] {
	case '<':
		if next, ok := p.tag(off, end, t); ok {
			p.fresh = false
			return next
		}
	case '-':
		if ind == 0 && isRule(t) {
			p.endTool()
			return end
		}
	case 'T':
		if bytes.HasPrefix(t, toolUseBeg) {
			p.toolUse(off, t)
			p.fresh = false
			return end
		}
	case '`':
		if tl != nil && !tl.body {
			if arg, ok := codeSpanLine(t); ok {
				p.toolArg(tl, arg)
				tl.body = true
				return end
			}
		}
	case 'C':
		if tl != nil && string(t) == "Cancelled" {
			tl.cancelled = true
			return end
		}
	case 'E', '*':
		if tl != nil && (string(t) == "Error:" || string(t) == "**Error:**") {
			tl.failed = true
			return end
		}
	}
	p.fresh = false
	if tl == nil {
		return end
	}
	if d, ok := toolDetail(t); ok {
		p.detail(tl, d)
		return end
	}
	if !tl.body && tl.desc == nil && (tl.kind == ssEdit || tl.kind == ssCommand) && isDescription(t) {
		tl.desc = t
	}
	return end
}

// isRule reports whether t is "---" (three or more '-').
func isRule(t []byte) bool {
	t = bytes.TrimRight(t, " ")
	if len(t) < 3 {
		return false
	}
	for _, c := range t {
		if c != '-' {
			return false
		}
	}
	return true
}

// codeSpanLine returns the text of a line that is one code span ("`npm
// test`").
func codeSpanLine(t []byte) ([]byte, bool) {
	t = bytes.TrimSpace(t)
	n := 0
	for n < len(t) && t[n] == '`' {
		n++
	}
	if n == 0 || len(t) < 2*n+1 {
		return nil, false
	}
	in := t[n : len(t)-n]
	if !bytes.Equal(t[len(t)-n:], t[:n]) || bytes.Contains(in, t[:n]) {
		return nil, false
	}
	return bytes.TrimSpace(in), true
}

// toolDetail returns a line naming what a tool did ("Edit file: x", "Read
// file: x", "Run command: x").
func toolDetail(t []byte) ([]byte, bool) {
	switch t[0] {
	case 'E', 'R', 'D':
		for _, pre := range []string{"Edit file: ", "Read file: ", "Run command: ", "Delete file: "} {
			if bytes.HasPrefix(t, []byte(pre)) {
				return t, true
			}
		}
	}
	return nil, false
}

// isDescription reports whether a line inside a tool call says what it is
// for (Claude Code's Bash description, Cursor's edit instructions) rather
// than being its output or a label ("Lines added: 2", "**Chunk 1**",
// "Result:", "Output mode: content", a table).
func isDescription(t []byte) bool {
	c := t[0]
	switch {
	case c >= 'a' && c <= 'z' || c >= utf8.RuneSelf:
		return true
	case c < 'A' || c > 'Z':
		return false
	case strings.IndexByte("LROPASUEC", c) < 0:
		return true
	}
	for _, pre := range []string{"Lines added", "Result", "Output mode", "Parameters", "Additional data", "Status:", "User decision", "Lint ", "Error:", "Cancelled"} {
		if bytes.HasPrefix(t, []byte(pre)) {
			return false
		}
	}
	return true
}
