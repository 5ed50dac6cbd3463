package importer

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// Claude Code transcript events: messages, content blocks, tool calls and results, compactions.

// ccEvent is what one line says, as raw JSON string contents (escapes not
// yet decoded) pointing into the line.
type ccEvent struct {
	typ, ts, sid, cwd, branch, version  []byte
	subtype, level, sysContent, summary []byte
	role, model, msgID                  []byte
	sidechain, meta, compactSummary     bool
	hasText                             bool   // message.content is a string
	text                                []byte // that string
	blocks                              []ccBlock
	trigger, preTokens                  []byte // compactMetadata
}

// ccBlock is one content block of a message.
type ccBlock struct {
	typ, text, name, id, toolUseID []byte
	input                          ccInput // a tool call's
	content                        []byte  // a tool result's, raw JSON
	isError                        bool
}

// ccPending is a tool call waiting for its result.
type ccPending struct {
	name   string
	file   string // the file an edit tool edits
	commit bool   // a Bash command running git commit
	cmd    string
}

// ccCount is a name with a count, kept in a slice (few names, no
// allocation per increment).
type ccCount struct {
	name string // decoded
	raw  string // as in the JSON
	n    int
}

// ccParser reads one transcript, line by line, keeping what the session
// will be made of (and nothing of a line once read).
type ccParser struct {
	src, stem string
	lineNo    int
	ev        ccEvent

	nonBlank, parsed   int
	badLines           []int
	badSkipped         []Skipped
	minTS, maxTS       []byte // canonical (see ccCanonicalTS)
	stemSeen           bool
	lastSID            string // raw JSON string contents
	cwd, version       string
	branches, models   []string
	mainMsgs, sideMsgs int // user and assistant events
	sidechain          int
	types              []ccCount // every event type, in order of first appearance
	otherBlocks        []ccCount

	prompts, replies, interrupts, thinking int
	toolCalls, toolErrors                  int
	compactions, compactSummaries, images  int
	commitRuns                             int
	lastMsgID                              []byte
	objective, firstCommand, firstSummary  string
	summaries                              map[string]bool
	updates                                []string
	updateTimes                            []time.Time
	tools                                  []ccCount // calls per tool
	cwdPrefixes                            []string  // cwd + "/", cwd + "\\"
	pending                                map[string]ccPending
	edited                                 []string
	editOK                                 map[string]int // file → calls not failed
	commits                                []string
	endCommit                              string
	todos                                  []ChecklistItem
	todoIdx                                map[string]int
	refs                                   refs
	digest                                 ccDigest
}

func newCCParser(source string) *ccParser {
	base := source[strings.LastIndexByte(source, '/')+1:]
	return &ccParser{
		src: source, stem: strings.TrimSuffix(base, ".jsonl"),
		summaries: map[string]bool{}, pending: map[string]ccPending{},
		editOK: map[string]int{}, todoIdx: map[string]int{},
	}
}

// bad records line p.lineNo as not read.
func (p *ccParser) bad(why string) {
	p.badLines = append(p.badLines, p.lineNo)
	if len(p.badLines) <= maxCCBadLines {
		p.badSkipped = append(p.badSkipped, Skipped{Path: p.src + ":" + strconv.Itoa(p.lineNo), Reason: why})
	}
	p.digest.add(p.lineNo, nil, "not read", why)
}

// line reads one line of the transcript.
func (p *ccParser) line(b []byte) {
	if p.lineNo == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	p.nonBlank++
	ev := &p.ev
	*ev = ccEvent{blocks: ev.blocks[:0]}
	s := ccScan{b: b}
	if s.peek() != '{' {
		p.bad("not JSON: does not start with '{'")
		return
	}
	for ok := s.enter('{', '}'); ok; ok = s.next('}') {
		switch string(s.key()) {
		case "type":
			ev.typ = s.str()
		case "timestamp":
			ev.ts = s.str()
		case "sessionId":
			ev.sid = s.str()
		case "cwd":
			ev.cwd = s.str()
		case "gitBranch":
			ev.branch = s.str()
		case "version":
			ev.version = s.str()
		case "subtype":
			ev.subtype = s.str()
		case "level":
			ev.level = s.str()
		case "content":
			ev.sysContent = s.str()
		case "summary":
			ev.summary = s.str()
		case "isSidechain":
			ev.sidechain = s.boolean()
		case "isMeta":
			ev.meta = s.boolean()
		case "isCompactSummary":
			ev.compactSummary = s.boolean()
		case "message":
			s.message(ev)
		case "compactMetadata":
			s.compactMeta(ev)
		default:
			s.skip()
		}
	}
	if s.err == nil && s.peek() != 0 {
		s.fail("text after the JSON object")
	}
	if s.err != nil {
		p.bad("not JSON: " + s.err.Error())
		return
	}
	p.parsed++
	p.event(ev)
}

// message reads an event's "message" object.
func (s *ccScan) message(ev *ccEvent) {
	if s.peek() != '{' {
		s.skip()
		return
	}
	for ok := s.enter('{', '}'); ok; ok = s.next('}') {
		switch string(s.key()) {
		case "role":
			ev.role = s.str()
		case "model":
			ev.model = s.str()
		case "id":
			ev.msgID = s.str()
		case "content":
			switch s.peek() {
			case '"':
				ev.hasText, ev.text = true, s.rawStr()
			case '[':
				for ok := s.enter('[', ']'); ok; ok = s.next(']') {
					s.block(ev)
				}
			default:
				s.skip()
			}
		default:
			s.skip()
		}
	}
}

// block reads one content block.
func (s *ccScan) block(ev *ccEvent) {
	var bl ccBlock
	if s.peek() != '{' {
		s.skip()
		ev.blocks = append(ev.blocks, bl)
		return
	}
	for ok := s.enter('{', '}'); ok; ok = s.next('}') {
		switch string(s.key()) {
		case "type":
			bl.typ = s.str()
		case "text":
			bl.text = s.str()
		case "name":
			bl.name = s.str()
		case "id":
			bl.id = s.str()
		case "tool_use_id":
			bl.toolUseID = s.str()
		case "is_error":
			bl.isError = s.boolean()
		case "input":
			s.toolInput(&bl.input)
		case "content":
			bl.content = s.raw()
		default:
			s.skip()
		}
	}
	ev.blocks = append(ev.blocks, bl)
}

// compactMeta reads a compact_boundary's compactMetadata.
func (s *ccScan) compactMeta(ev *ccEvent) {
	if s.peek() != '{' {
		s.skip()
		return
	}
	for ok := s.enter('{', '}'); ok; ok = s.next('}') {
		switch string(s.key()) {
		case "trigger":
			ev.trigger = s.str()
		case "preTokens":
			ev.preTokens = s.raw()
		default:
			s.skip()
		}
	}
}

// ccCanonicalTS reports whether raw is a timestamp as Claude Code writes it
// ("2025-05-26T07:27:40.079Z"), which compare as strings: every other
// byte a digit, so nothing else (a byte that is not text) passes for one.
func ccCanonicalTS(raw []byte) bool {
	if len(raw) != len(ccTSShape) {
		return false
	}
	for i, c := range raw {
		if want := ccTSShape[i]; want == '0' && !isDigit(c) || want != '0' && c != want {
			return false
		}
	}
	return true
}

// ccTSShape is a canonical timestamp's shape: '0' stands for a digit.
const ccTSShape = "0000-00-00T00:00:00.000Z"

// ccTimestamp returns the event's time in the canonical form, or "".
func ccTimestamp(raw []byte) string {
	if ccCanonicalTS(raw) {
		return string(raw)
	}
	if len(raw) == 0 || len(raw) > 64 {
		return ""
	}
	t, err := time.Parse(time.RFC3339Nano, ccStr(raw, 64))
	if err != nil {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

func ccParseTS(ts []byte) time.Time {
	if len(ts) == 0 {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return time.Time{}
	}
	return t
}

// event reads one parsed event.
func (p *ccParser) event(ev *ccEvent) {
	var ts []byte
	if len(ev.ts) > 0 {
		if len(p.maxTS) > 0 && ccCanonicalTS(ev.ts) && string(ev.ts) >= string(p.maxTS) {
			// The usual case: an event after the last one.
			p.maxTS = append(p.maxTS[:0], ev.ts...)
			ts = ev.ts
		} else if t := ccTimestamp(ev.ts); t != "" {
			ts = []byte(t)
			if len(p.minTS) == 0 || t < string(p.minTS) {
				p.minTS = append(p.minTS[:0], t...)
			}
			if t > string(p.maxTS) {
				p.maxTS = append(p.maxTS[:0], t...)
			}
		}
	}
	if len(ev.sid) > 0 {
		if string(ev.sid) == p.stem {
			p.stemSeen = true
		}
		if string(ev.sid) != p.lastSID {
			p.lastSID = string(ev.sid)
		}
	}
	p.types = ccCountName(p.types, ev.typ)
	isMsg := string(ev.typ) == "user" || string(ev.typ) == "assistant"
	if ev.sidechain {
		p.sidechain++
		if isMsg {
			p.sideMsgs++
		}
		return
	}
	if isMsg {
		p.mainMsgs++
	}
	if p.cwd == "" && len(ev.cwd) > 0 {
		p.cwd = ccStr(ev.cwd, 1024)
	}
	if p.version == "" && len(ev.version) > 0 {
		p.version = ccStr(ev.version, 64)
	}
	if len(ev.branch) > 0 && (len(p.branches) == 0 || string(ev.branch) != p.branches[len(p.branches)-1]) {
		p.addDistinct(&p.branches, ccStr(ev.branch, 256))
	}
	switch string(ev.typ) {
	case "user":
		p.user(ev, ts)
	case "assistant":
		p.assistant(ev, ts)
	case "summary":
		p.summaryLine(ev, ts)
	case "system":
		p.system(ev, ts)
	}
}

func (p *ccParser) addDistinct(list *[]string, s string) {
	for _, x := range *list {
		if x == s {
			return
		}
	}
	*list = append(*list, s)
}

// ccCountName adds one to name's count, without allocating when it is
// already there.
func ccCountName(list []ccCount, name []byte) []ccCount {
	list, _ = ccCountAt(list, name)
	return list
}

// ccCountAt is ccCountName that also returns the name's index.
func ccCountAt(list []ccCount, name []byte) ([]ccCount, int) {
	if len(name) == 0 {
		name = []byte("(no type)")
	}
	for i := range list {
		if list[i].raw == string(name) {
			list[i].n++
			return list, i
		}
	}
	shown := string(ccAppendFolded(nil, ccStr(name, 64), 64))
	if shown == "" {
		shown = "(blank)"
	}
	return append(list, ccCount{shown, string(name), 1}), len(list)
}

// ccLine is line(s), quicker for text without Markdown: without any of
// "`[<*~_", clean only folds white space.
func ccLine(s string) string {
	if strings.ContainsAny(s, "`[<*~_") {
		return line(s)
	}
	b := make([]byte, 0, len(s))
	space := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\f', '\r':
			space = true
		default:
			if space && len(b) > 0 {
				b = append(b, ' ')
			}
			space = false
			b = append(b, c)
		}
	}
	return truncate(strings.TrimSpace(string(b)), MaxLineLen)
}

// scanRefs is p.refs.scan(text), skipped for text that cannot hold a
// reference: one needs a digit, and "#", "github.com", or "PR" before white
// space, "-" or a digit.
func (p *ccParser) scanRefs(text string) {
	if !strings.ContainsAny(text, "0123456789") {
		return
	}
	may := strings.ContainsRune(text, '#') || strings.Contains(text, "github.com")
	for i := 0; !may && i+2 < len(text); i++ {
		if (text[i] == 'p' || text[i] == 'P') && (text[i+1] == 'r' || text[i+1] == 'R') {
			c := text[i+2]
			may = c <= ' ' || c == '-' || c >= '0' && c <= '9'
		}
	}
	if may {
		p.refs.scan(text)
	}
}

// update adds an update at ts (canonical, or "").
func (p *ccParser) update(text string, ts []byte) {
	u := ccLine(text)
	if u == "" {
		return
	}
	p.updates = append(p.updates, u)
	p.updateTimes = append(p.updateTimes, ccParseTS(ts))
}

var (
	reCCCommandName = lazyregexp.New(`(?s)<command-name>\s*(.*?)\s*</command-name>`)
	reCCCommandArgs = lazyregexp.New(`(?s)<command-args>(.*?)</command-args>`)
	reCCBashInput   = lazyregexp.New(`(?s)<bash-input>(.*?)</bash-input>`)
	// reCCGitCommit matches a shell command running git commit ("git -C dir
	// commit", "git -c k=v commit --amend").
	reCCGitCommit = lazyregexp.New(`(?:^|[\s;&|(])git(?:\s+-[cC]\s+\S+)*\s+commit\b`)
	// reCCCommitOut matches git commit's "[main 1a2b3c4] message" line.
	reCCCommitOut = lazyregexp.New(`(?m)^\[([^\]\n]+?) (?:\(root-commit\) )?([0-9a-f]{7,40})\] (.*)$`)
	// reCCCommitMsg finds -m "message" in a git commit command.
	reCCCommitMsg = lazyregexp.New(`\s-m\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))`)
)

// user reads a user event: a prompt, a command, tool results, a compaction
// summary.
func (p *ccParser) user(ev *ccEvent, ts []byte) {
	if ev.compactSummary {
		p.compactSummaries++
		text := ""
		if ev.hasText {
			text = ccStr(ev.text, 4*MaxLineLen)
		}
		for _, bl := range ev.blocks {
			if string(bl.typ) == "text" && text == "" {
				text = ccStr(bl.text, 4*MaxLineLen)
			}
		}
		p.update("Compaction summary: "+text, ts)
		p.scanRefs(text)
		p.digest.add(p.lineNo, ts, "compaction summary", text)
		return
	}
	if ev.hasText {
		if !ev.meta {
			p.prompt(ev.text, ts)
		}
		return
	}
	var texts [][]byte
	for _, bl := range ev.blocks {
		switch string(bl.typ) {
		case "tool_result":
			p.toolResult(bl, ts)
		case "text":
			texts = append(texts, bl.text)
		case "image":
			p.images++
		default:
			p.otherBlocks = ccCountName(p.otherBlocks, bl.typ)
		}
	}
	if ev.meta || len(texts) == 0 {
		return
	}
	if len(texts) == 1 {
		p.prompt(texts[0], ts)
		return
	}
	p.prompt(bytes.Join(texts, []byte(`\n`)), ts)
}

// prompt reads what the user typed (raw JSON string contents).
func (p *ccParser) prompt(raw []byte, ts []byte) {
	text := strings.TrimSpace(ccStr(raw, 4096))
	command := false
	switch {
	case text == "":
		return
	case strings.HasPrefix(text, "[Request interrupted by user"):
		p.interrupts++
		return
	case strings.HasPrefix(text, "<local-command-std"), strings.HasPrefix(text, "<bash-std"),
		strings.HasPrefix(text, "Caveat: The messages below were generated by the user while running local commands"):
		return // a command's output
	case strings.Contains(text, "<command-name>"):
		m := reCCCommandName().FindStringSubmatch(text)
		if m == nil {
			return
		}
		name := strings.TrimSpace(m[1])
		if !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		if args := reCCCommandArgs().FindStringSubmatch(text); args != nil && strings.TrimSpace(args[1]) != "" {
			name += " " + strings.TrimSpace(args[1])
		}
		text, command = name, true
	case strings.HasPrefix(text, "<bash-input>"):
		m := reCCBashInput().FindStringSubmatch(text)
		if m == nil {
			return
		}
		text, command = "!"+strings.TrimSpace(m[1]), true
	}
	p.prompts++
	u := ccLine(text)
	if u == "" {
		return
	}
	p.updates = append(p.updates, u)
	p.updateTimes = append(p.updateTimes, ccParseTS(ts))
	p.digest.add(p.lineNo, ts, "user", text)
	if command {
		if p.firstCommand == "" {
			p.firstCommand = u
		}
		return
	}
	if p.objective == "" {
		p.objective = u
	}
	p.scanRefs(text)
}

// assistant reads an assistant event: replies, tool calls, thinking.
func (p *ccParser) assistant(ev *ccEvent, ts []byte) {
	if len(ev.msgID) == 0 || string(ev.msgID) != string(p.lastMsgID) {
		p.replies++
		if len(ev.msgID) > 0 {
			p.lastMsgID = append(p.lastMsgID[:0], ev.msgID...)
		}
	}
	if len(ev.model) > 0 && string(ev.model) != "<synthetic>" {
		if len(p.models) == 0 || string(ev.model) != p.models[len(p.models)-1] {
			p.addDistinct(&p.models, ccStr(ev.model, 256))
		}
	}
	if ev.hasText {
		p.digest.addRaw(p.lineNo, ts, "assistant", ev.text)
	}
	for _, bl := range ev.blocks {
		switch string(bl.typ) {
		case "text":
			p.digest.addRaw(p.lineNo, ts, "assistant", bl.text)
		case "tool_use", "server_tool_use":
			p.toolUse(bl, ts)
		case "thinking", "redacted_thinking":
			p.thinking++
		default:
			p.otherBlocks = ccCountName(p.otherBlocks, bl.typ)
		}
	}
}

// ccInput is what a tool call's input says that the reader uses, as raw
// JSON string contents (and the todos' raw JSON array).
type ccInput struct {
	file, command, what, todos []byte
	whatRank                   int
}

// toolInput reads a tool call's input object: the file it works on, the
// command it runs, else the first of a few descriptive fields.
func (s *ccScan) toolInput(in *ccInput) {
	if s.peek() != '{' {
		s.skip()
		return
	}
	in.whatRank = 100
	for ok := s.enter('{', '}'); ok; ok = s.next('}') {
		k := s.key()
		switch string(k) {
		case "file_path", "notebook_path":
			in.file = s.str()
			continue
		case "command":
			in.command = s.str()
			continue
		case "todos":
			in.todos = s.raw()
			continue
		}
		if r := ccWhatRank(k); r < in.whatRank && s.peek() == '"' {
			in.whatRank, in.what = r, s.rawStr()
			continue
		}
		s.skip()
	}
}

// ccWhatRank orders the input fields that say what a tool call is about.
func ccWhatRank(k []byte) int {
	switch string(k) {
	case "pattern":
		return 0
	case "url":
		return 1
	case "query":
		return 2
	case "description":
		return 3
	case "path":
		return 4
	case "prompt":
		return 5
	case "skill", "subject":
		return 6
	}
	return 100
}

// toolUse reads a tool call.
func (p *ccParser) toolUse(bl ccBlock, ts []byte) {
	raw := bl.name
	if len(raw) == 0 {
		raw = []byte("(unnamed tool)")
	}
	var i int
	p.tools, i = ccCountAt(p.tools, raw)
	name := p.tools[i].name // one string per tool, not one per call
	p.toolCalls++
	in := &bl.input
	file := ccStr(in.file, 1024)
	command := ccStr(in.command, 16<<10)
	pend := ccPending{name: name}
	what := ""
	switch {
	case file != "":
		what = p.relFile(file)
	case command != "":
		what = command
	default:
		what = ccStr(in.what, 2*ccDigestText)
	}
	switch name {
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		if file != "" {
			pend.file = p.relFile(file)
			if _, seen := p.editOK[pend.file]; !seen {
				p.edited = append(p.edited, pend.file)
			}
			p.editOK[pend.file]++
			what = pend.file
		}
	case "Bash":
		if strings.Contains(command, "commit") && reCCGitCommit().MatchString(command) {
			pend.commit, pend.cmd = true, command
			p.commitRuns++
		}
	case "TodoWrite":
		what = p.todoWrite(in.todos)
	}
	p.digest.add2(p.lineNo, ts, "→ ", name, what)
	if len(bl.id) > 0 {
		p.pending[string(bl.id)] = pend
	}
}

// relFile shows a file under the session's folder relative to it.
func (p *ccParser) relFile(f string) string {
	if p.cwdPrefixes == nil && p.cwd != "" {
		for _, sep := range []string{"/", "\\"} {
			p.cwdPrefixes = append(p.cwdPrefixes, strings.TrimSuffix(p.cwd, sep)+sep)
		}
	}
	for _, pre := range p.cwdPrefixes {
		if rel, ok := strings.CutPrefix(f, pre); ok && rel != "" {
			return rel
		}
	}
	return f
}

// todoWrite merges a TodoWrite call's list into the checklist and says
// what it holds.
func (p *ccParser) todoWrite(raw []byte) string {
	s := ccScan{b: raw}
	if s.peek() != '[' {
		return ""
	}
	n, done := 0, 0
	for ok := s.enter('[', ']'); ok; ok = s.next(']') {
		if s.peek() != '{' {
			s.skip()
			continue
		}
		var content, status []byte
		for ok := s.enter('{', '}'); ok; ok = s.next('}') {
			switch string(s.key()) {
			case "content":
				content = s.str()
			case "status":
				status = s.str()
			default:
				s.skip()
			}
		}
		step := ccLine(ccStr(content, 2*MaxLineLen))
		if step == "" {
			continue
		}
		n++
		st := ccStr(status, 64)
		if st == "completed" {
			done++
		}
		if i, ok := p.todoIdx[step]; ok {
			p.todos[i].Done, p.todos[i].Evidence = st == "completed", st
		} else if len(p.todos) < maxCCTodos {
			p.todoIdx[step] = len(p.todos)
			p.todos = append(p.todos, ChecklistItem{Phase: ccTodoPhase, Step: step, Done: st == "completed", Evidence: st})
		}
	}
	return strconv.Itoa(n) + " todos, " + strconv.Itoa(done) + " completed"
}

// toolResult reads a tool call's result.
func (p *ccParser) toolResult(bl ccBlock, ts []byte) {
	pend, ok := p.pending[string(bl.toolUseID)]
	if ok {
		delete(p.pending, string(bl.toolUseID))
	}
	if bl.isError {
		p.toolErrors++
		if pend.file != "" {
			p.editOK[pend.file]--
		}
		name := pend.name
		if name == "" {
			name = "tool"
		}
		p.digest.add2(p.lineNo, ts, "✗ ", name, ccResultText(bl.content, 2*ccDigestText))
	}
	if !pend.commit {
		return
	}
	out := ccResultText(bl.content, 8192)
	if m := reCCCommitOut().FindStringSubmatch(out); m != nil {
		p.endCommit = m[2]
		c := "Commit " + m[2] + " " + strings.TrimSpace(m[3])
		p.commits = append(p.commits, c)
		p.scanRefs(m[3])
		p.digest.add(p.lineNo, ts, "commit", c)
		return
	}
	if bl.isError {
		return
	}
	if m := reCCCommitMsg().FindStringSubmatch(pend.cmd); m != nil {
		msg := m[1] + m[2] + m[3]
		if !strings.Contains(msg, "$(") {
			p.commits = append(p.commits, "Commit (hash not shown) "+strings.TrimSpace(msg))
			p.scanRefs(msg)
		}
	}
}

// ccResultText returns the text of a tool result's content (a string or
// text blocks), at most max bytes.
func ccResultText(raw []byte, max int) string {
	s := ccScan{b: raw}
	switch s.peek() {
	case '"':
		return ccStr(s.rawStr(), max)
	case '[':
		var b strings.Builder
		for ok := s.enter('[', ']'); ok && b.Len() < max; ok = s.next(']') {
			if s.peek() != '{' {
				s.skip()
				continue
			}
			for ok := s.enter('{', '}'); ok; ok = s.next('}') {
				if string(s.key()) == "text" && s.peek() == '"' {
					if b.Len() > 0 {
						b.WriteByte('\n')
					}
					b.WriteString(ccStr(s.rawStr(), max-b.Len()))
					continue
				}
				s.skip()
			}
		}
		return b.String()
	}
	return ""
}

// summaryLine reads a {"type": "summary"} line.
func (p *ccParser) summaryLine(ev *ccEvent, ts []byte) {
	text := ccLine(ccStr(ev.summary, 2*MaxLineLen))
	if text == "" || p.summaries[text] {
		return
	}
	p.summaries[text] = true
	if p.firstSummary == "" {
		p.firstSummary = text
	}
	p.update("Summary: "+text, ts)
	p.scanRefs(text)
	p.digest.add(p.lineNo, ts, "summary", text)
}

// system reads a system event: a compaction's boundary, or a message
// Claude Code showed (shown in the digest when a warning or an error).
func (p *ccParser) system(ev *ccEvent, ts []byte) {
	sub := ccStr(ev.subtype, 64)
	if sub == "compact_boundary" {
		p.compactions++
		var how []string
		if t := ccStr(ev.trigger, 64); t != "" {
			how = append(how, t)
		}
		if n, err := strconv.Atoi(string(ev.preTokens)); err == nil {
			how = append(how, strconv.Itoa(n)+" tokens before")
		}
		text := "Conversation compacted"
		if len(how) > 0 {
			text += " (" + strings.Join(how, ", ") + ")"
		}
		p.update(text, ts)
		p.digest.add(p.lineNo, ts, "compacted", text)
		return
	}
	lvl := ccStr(ev.level, 32)
	if lvl == "error" || lvl == "warning" || strings.Contains(sub, "error") {
		kind := string(ccAppendFolded(nil, "system "+sub+" "+lvl, 128))
		p.digest.add(p.lineNo, ts, kind, ccStr(ev.sysContent, 2*ccDigestText))
	}
}
