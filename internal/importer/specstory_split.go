package importer

import (
	"bytes"
	"runtime"
	"slices"
)

// A large chat is read as two halves at once, on two cores, split at a
// speaker line: each half is checked as text and parsed by its own parser,
// and the second parser's counts and lists are appended to the first's. The
// result is the one reading front to back gives (TestSpecStorySplitReadsAsOne
// compares them), because a speaker line ends whatever the chat was in (the
// message, its tool call, its request) and the parser carries nothing else
// from one message to the next but counts, lists and sets in order of first
// appearance. Where that does not hold at the chosen line (it is inside a
// code or <think> block, or is not a speaker line as the parser reads it
// there), the first parser reads on to the end and the second's work is
// dropped.

// minSplitChat is the size from which a chat is read in two halves at once
// (bytes): below it starting the second parser costs more than it saves.
const minSplitChat = 128 << 10

// userLine is how a user's speaker line starts, after a line's end.
var userLine = []byte("\n_**User")

// chatSplit returns the offset of the first user's speaker line in the
// second half of d (a line starting "_**User"), or -1.
func chatSplit(d []byte) int {
	i := bytes.Index(d[len(d)/2:], userLine)
	if i < 0 {
		return -1
	}
	return len(d)/2 + i + 1
}

// parse checks the chat as text and reads it: it returns why it is not text
// (see notTextReason), or "" once p holds the whole chat.
func (p *ssParser) parse() string {
	split := -1
	if len(p.data) >= minSplitChat && runtime.GOMAXPROCS(0) > 1 {
		split = chatSplit(p.data)
	}
	return p.parseSplit(split)
}

// parseSplit is parse reading the chat in two halves at once, the second
// from the line starting at split (front to back when split is -1).
func (p *ssParser) parseSplit(split int) string {
	d := p.data
	if split < 0 {
		if nul, bad := textFault(d, 0, len(d)); nul >= 0 || bad >= 0 {
			return notTextReason(d, nul, bad)
		}
		p.run()
		return ""
	}
	q := &ssParser{src: p.src, data: d, loc: p.loc}
	var qNul, qBad int
	qRead := false // q read the second half from a speaker line at split
	done := make(chan struct{})
	go func() {
		defer close(done)
		if qNul, qBad = textFault(d, split, len(d)); qNul >= 0 || qBad >= 0 {
			return
		}
		next := q.line(split, lineEnd(d, split))
		if q.role != ssUser && q.role != ssSideUser {
			return // not a user's speaker line (an assistant's may go on the message before it)
		}
		q.runRange(next, len(d))
		q.finish()
		qRead = true
	}()
	nul, bad := textFault(d, 0, split)
	off := split
	if nul < 0 && bad < 0 {
		off = 0
		if bytes.HasPrefix(d, bom) {
			off = len(bom)
		}
		off = p.runRange(off, split)
	}
	<-done
	if nul < 0 {
		nul = qNul
	}
	if bad < 0 {
		bad = qBad
	}
	if why := notTextReason(d, nul, bad); why != "" {
		return why
	}
	if off != split || !qRead {
		p.runRange(off, len(d))
		p.finish()
		return ""
	}
	p.endMessage()
	p.join(q)
	return ""
}

// join appends what q read of the chat after p's part to p.
func (p *ssParser) join(q *ssParser) {
	p.skipped = append(p.skipped, q.skipped...)
	// A session comment ("<!-- Claude Code Session … -->") may come in an
	// assistant's message: the first one read counts.
	p.marker = p.marker || q.marker
	if p.provider == "" && q.provider != "" {
		p.provider, p.chatID, p.commentTime = q.provider, q.chatID, q.commentTime
	}
	p.messages += q.messages
	p.requests += q.requests
	p.replies += q.replies
	p.edits += q.edits
	p.commands += q.commands
	if p.first.IsZero() {
		p.first = q.first
	}
	if q.last.After(p.last) {
		p.last = q.last
	}
	for _, m := range q.models.list {
		p.models.add([]byte(m))
	}
	p.changed = joinLists(p.changed, q.changed)
	p.read = joinLists(p.read, q.read)
	p.ran = joinLists(p.ran, q.ran)
	p.updates = joinLists(p.updates, q.updates)
	p.times = joinLists(p.times, q.times)
	p.anyTime = p.anyTime || q.anyTime
	if p.objective == "" {
		p.objective = q.objective
	}
	for _, n := range q.refs.order {
		p.refs.add(n, q.refs.isPR[n])
	}
}

// joinLists returns b appended to a: in a's room when it has enough, else in
// a new list of exactly their length (append would make it larger still).
func joinLists[T any](a, b []T) []T {
	if cap(a)-len(a) >= len(b) {
		return append(a, b...)
	}
	return slices.Concat(a, b)
}
