package importer

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// Tool calls in SpecStory chats: <tool-use> blocks, <details> summaries, fences, and the session they add up to.

// tag reads a line starting with '<'; ok is false for text that only
// starts with a tag.
func (p *ssParser) tag(off, end int, t []byte) (next int, ok bool) {
	if len(t) < 2 {
		return end, false
	}
	switch {
	case t[1] == '/':
		switch {
		case bytes.HasPrefix(t, []byte("</tool-use>")):
			p.endTool()
		case bytes.HasPrefix(t, []byte("</details>")):
			p.closeDetails(t)
		default:
			return end, false
		}
	case t[1] != 't' && t[1] != 'd' && t[1] != 's' && t[1] != '!':
		return end, false
	case bytes.HasPrefix(t, []byte("<think>")) || bytes.HasPrefix(t, []byte("<think ")):
		i := bytes.Index(p.data[off:], thinkEnd)
		if i < 0 {
			p.bad(off, "a <think> block opened here is not closed before the end of the file (a chat cut short?): read as thinking to the end")
			return len(p.data), true
		}
		return lineEnd(p.data, off+i+len(thinkEnd)), true
	case bytes.HasPrefix(t, []byte("<tool-use")):
		p.endTool()
		typ, name, ok := toolUseAttrs(t)
		if !ok {
			typ, name = attr(t, `data-tool-type="`), attr(t, `data-tool-name="`)
		}
		tl := p.newTool(off, name, typ)
		tl.tagged = true
		if i := bytes.Index(t, []byte("<details")); i >= 0 {
			tl.depth++
			p.summary(off, t[i:])
		}
		if bytes.HasSuffix(t, []byte("</tool-use>")) {
			p.endTool()
		}
	case bytes.HasPrefix(t, []byte("<details")):
		if tl := p.tool; tl == nil || !tl.tagged && tl.summarized {
			p.endTool()
			p.newTool(off, nil, nil)
		}
		p.tool.depth++
		p.summary(off, t)
		if bytes.Contains(t, []byte("</details>")) {
			p.closeDetails(t)
		}
	case bytes.HasPrefix(t, []byte("<summary>")):
		p.summary(off, t)
	case bytes.HasPrefix(t, []byte("<!--")):
		p.comment(t)
	default:
		return end, false
	}
	return end, true
}

// closeDetails reads "</details>" (maybe followed by "</tool-use>"): a tool
// opened by <details> or a "Tool use:" line ends with it.
func (p *ssParser) closeDetails(t []byte) {
	tl := p.tool
	if tl == nil {
		return
	}
	tl.depth--
	if tl.depth <= 0 {
		tl.body = true
		if !tl.tagged || bytes.HasSuffix(t, []byte("</tool-use>")) {
			p.endTool()
		}
	}
}

// toolUseAttrs reads `<tool-use data-tool-type="T" data-tool-name="N"`, as
// SpecStory writes it, without searching.
func toolUseAttrs(t []byte) (typ, name []byte, ok bool) {
	const a, b = `<tool-use data-tool-type="`, `" data-tool-name="`
	if !bytes.HasPrefix(t, []byte(a)) {
		return nil, nil, false
	}
	r := t[len(a):]
	i := bytes.IndexByte(r, '"')
	if i < 0 || !bytes.HasPrefix(r[i:], []byte(b)) {
		return nil, nil, false
	}
	typ, r = r[:i], r[i+len(b):]
	j := bytes.IndexByte(r, '"')
	if j < 0 {
		return nil, nil, false
	}
	return typ, r[:j], true
}

// attr returns the value of an attribute in a tag; key is its name and
// `="`.
func attr(t []byte, key string) []byte {
	i := bytes.Index(t, []byte(key))
	if i < 0 {
		return nil
	}
	v := t[i+len(key):]
	if j := bytes.IndexByte(v, '"'); j >= 0 {
		return v[:j]
	}
	return nil
}

// newTool starts reading a tool call at off (in p.cur: a chat of 1 MB has
// hundreds).
func (p *ssParser) newTool(off int, name, typ []byte) *ssTool {
	p.cur = ssTool{off: off, at: p.at}
	p.cur.kind, p.cur.verb = toolKind(name, typ)
	p.tool = &p.cur
	p.fresh = false
	return p.tool
}

// toolKind classifies a tool by its data-tool-type, else by its name.
func toolKind(name, typ []byte) (ssKind, string) {
	var low [32]byte
	n := ""
	if len(name) <= len(low) {
		for i, c := range name {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			low[i] = c
		}
		n = string(low[:len(name)]) // no allocation: only compared
	}
	verb := ""
	switch n {
	case "delete_file":
		verb = "Deleted"
	case "create_file", "write_file":
		verb = "Created"
	}
	switch string(typ) {
	case "write":
		return ssEdit, verb
	case "shell":
		return ssCommand, ""
	case "read":
		return ssRead, ""
	case "search", "task", "mcp":
		return ssOther, ""
	}
	switch n {
	case "edit_file", "edit_file_v2", "search_replace", "write", "edit", "multiedit", "edit_notebook", "notebookedit",
		"reapply", "apply_patch", "code_edit", "copilot_applypatch", "copilot_insertedit", "create_file", "write_file",
		"replace", "str_replace_editor", "replace_string_in_file", "insert_edit_into_file", "delete_file":
		return ssEdit, verb
	case "run_terminal_cmd", "run_terminal_command", "run_terminal_command_v2", "bash", "run_shell_command", "shell",
		"run_in_terminal", "execute_command", "command":
		return ssCommand, ""
	case "read_file", "read_file_v2", "read", "view", "read_many_files", "notebookread", "open_file":
		return ssRead, ""
	}
	return ssOther, ""
}

// toolUse reads a "Tool use: **name** …" line: the name, then a "• what it
// did", a `path` or `command`, or a description.
func (p *ssParser) toolUse(off int, t []byte) {
	p.endTool()
	rest := t[len(toolUseBeg):]
	name := rest
	if j := bytes.Index(rest, []byte("**")); j >= 0 {
		name, rest = rest[:j], bytes.TrimSpace(rest[j+2:])
	} else {
		rest = nil
	}
	tl := p.newTool(off, name, nil)
	if r, ok := bytes.CutPrefix(rest, []byte("•")); ok {
		p.detail(tl, bytes.TrimSpace(r))
		return
	}
	if a := bytes.IndexByte(rest, '`'); a >= 0 {
		if b := bytes.IndexByte(rest[a+1:], '`'); b >= 0 {
			p.toolArg(tl, rest[a+1:a+1+b])
			rest = bytes.TrimSpace(append(rest[:a:a], rest[a+2+b:]...))
		}
	}
	if len(rest) > 0 && (tl.kind == ssEdit || tl.kind == ssCommand) {
		tl.desc = rest
	}
}

// toolArg reads the `argument` of a tool call: a command's command line, a
// read's or an edit's file.
func (p *ssParser) toolArg(tl *ssTool, arg []byte) {
	switch tl.kind {
	case ssCommand:
		if tl.cmd == nil {
			tl.cmd = arg
		}
	case ssRead, ssEdit:
		if tl.path == nil {
			tl.path = arg
		}
	}
}

// summary reads the <summary> on line t, if any: "Tool use: **name** •
// what", or "what".
func (p *ssParser) summary(off int, t []byte) {
	i := 0
	if !bytes.HasPrefix(t, []byte("<summary>")) {
		if i = bytes.Index(t, []byte("<summary>")); i < 0 {
			return
		}
	}
	s := t[i+len("<summary>"):]
	if bytes.HasSuffix(s, []byte("</summary>")) {
		s = s[:len(s)-len("</summary>")]
	} else if j := bytes.Index(s, []byte("</summary>")); j >= 0 {
		s = s[:j]
	}
	tl := p.tool
	if tl == nil {
		tl = p.newTool(off, nil, nil)
	}
	if tl.summarized {
		return // a <details> nested in the tool's
	}
	tl.summarized = true
	s = bytes.TrimSpace(s)
	if r, ok := bytes.CutPrefix(s, toolUseBeg); ok {
		name := r
		if j := bytes.Index(r, []byte("**")); j >= 0 {
			name, s = r[:j], bytes.TrimSpace(r[j+2:])
		} else {
			s = nil
		}
		if tl.kind == ssOther {
			tl.kind, tl.verb = toolKind(name, nil)
		}
		if r, ok := bytes.CutPrefix(s, []byte("•")); ok {
			s = bytes.TrimSpace(r)
		}
	}
	if len(s) > 0 {
		p.detail(tl, s)
	}
}

// detail reads what a tool did, from its summary or a line of its own:
// "Edit file: path", "Read file: path", "Run command: command", "Delete
// file: path"; other summaries ("Listed directory …", "Grep for …") name no
// change.
func (p *ssParser) detail(tl *ssTool, s []byte) {
	v := func(pre string) []byte {
		r := bytes.TrimSpace(s[len(pre):])
		if j := bytes.Index(r, []byte(" • ")); j >= 0 {
			r = r[:j]
		}
		return bytes.Trim(unescapeHTML(r), "`")
	}
	switch {
	case bytes.HasPrefix(s, []byte("Edit file: ")):
		if (tl.kind == ssOther || tl.kind == ssEdit) && tl.path == nil {
			tl.kind, tl.path = ssEdit, v("Edit file: ")
		}
	case bytes.HasPrefix(s, []byte("Delete file: ")):
		if tl.path == nil {
			tl.kind, tl.verb, tl.path = ssEdit, "Deleted", v("Delete file: ")
		}
	case bytes.HasPrefix(s, []byte("Read file: ")):
		if (tl.kind == ssOther || tl.kind == ssRead) && tl.path == nil {
			tl.kind, tl.path = ssRead, v("Read file: ")
		}
	case bytes.HasPrefix(s, []byte("Run command: ")):
		if tl.cmd == nil {
			tl.kind, tl.cmd = ssCommand, v("Run command: ")
		}
	}
}

var htmlEntities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'", "&apos;", "'", "&#96;", "`")

// unescapeHTML undoes the escapes SpecStory writes in summaries.
func unescapeHTML(b []byte) []byte {
	if bytes.IndexByte(b, '&') < 0 {
		return b
	}
	return []byte(htmlEntities.Replace(string(b)))
}

// agentFence reads a code block of the assistant's message: part of the
// tool call being read, or, as the first thing of a message, the first
// Cursor versions' bare diff (an edit) or bash block (a command run).
func (p *ssParser) agentFence(lang, body []byte) {
	tl := p.tool
	if tl == nil {
		if !p.fresh {
			return
		}
		switch {
		case string(lang) == "diff":
			p.cur = ssTool{kind: ssEdit, at: p.at}
			if p.cont {
				p.cur.context = p.textBefore(p.msgOff)
			}
		case isShellLang(lang):
			p.cur = ssTool{kind: ssCommand, at: p.at}
		default:
			return
		}
		tl = &p.cur
		p.tool = tl
		p.toolFence(tl, lang, body)
		p.endTool()
		return
	}
	p.toolFence(tl, lang, body)
}

// textBefore returns the assistant's line of text just before the speaker
// line at off, past blank lines and "---", or nil when something else (a
// code block, a tag, a speaker line) comes first.
func (p *ssParser) textBefore(off int) []byte {
	d := p.data
	for end := off; end > 0; {
		start := bytes.LastIndexByte(d[:end-1], '\n') + 1
		l := bytes.TrimSpace(d[start:end])
		end = start
		switch {
		case len(l) == 0 || isRule(l):
			continue
		case plainStart[l[0]] && l[0] != '#' && l[0] != '|':
			return l
		}
		return nil
	}
	return nil
}

func isShellLang(lang []byte) bool {
	switch string(lang) {
	case "bash", "sh", "shell", "zsh", "console", "powershell", "pwsh", "cmd":
		return true
	}
	return false
}

// toolFence reads a code block inside a tool call: a diff's added and
// removed lines, a command's command line, or the file an edit reports
// ("The file … has been updated", "File created successfully at: …").
func (p *ssParser) toolFence(tl *ssTool, lang, body []byte) {
	switch {
	case string(lang) == "diff":
		tl.added += bytes.Count(body, nlPlus)
		tl.removed += bytes.Count(body, nlMinus)
		if len(body) > 0 && body[0] == '+' {
			tl.added++
		} else if len(body) > 0 && body[0] == '-' {
			tl.removed++
		}
		tl.diff = true
		if tl.kind == ssOther {
			tl.kind = ssEdit
		}
	case tl.kind == ssCommand && tl.cmd == nil && !tl.body && (len(lang) == 0 || isShellLang(lang)):
		tl.cmd = firstLines(body, 3)
	case tl.kind == ssEdit && tl.path == nil:
		if i := bytes.Index(body, []byte("File created successfully at: ")); i >= 0 {
			r := body[i+len("File created successfully at: "):]
			tl.path, tl.verb = bytes.TrimSpace(r[:lineEnd(r, 0)]), "Created"
		} else if i := bytes.Index(body, []byte("The file ")); i >= 0 {
			r := body[i+len("The file "):]
			r = r[:lineEnd(r, 0)]
			if j := bytes.Index(r, []byte(" has been updated")); j > 0 {
				tl.path = r[:j]
			}
		}
	}
	tl.body = true
}

// firstLines returns the first n lines of text of a command block, joined
// with "; ".
func firstLines(body []byte, n int) []byte {
	var out []byte
	for off, k := 0, 0; off < len(body) && k < n; {
		e := lineEnd(body, off)
		l := bytes.TrimPrefix(bytes.TrimSpace(body[off:e]), []byte("$ "))
		if len(l) > 0 {
			if k == 0 && e >= len(body)-1 {
				return l // one line: no copy
			}
			if k > 0 {
				out = append(out, "; "...)
			}
			out = append(out, l...)
			k++
		}
		off = e
	}
	return out
}

// endTool records the tool call being read: an update for a change, and
// its file or command in the lists.
func (p *ssParser) endTool() {
	tl := p.tool
	if tl == nil {
		return
	}
	p.tool = nil
	out := p.scratch[:0]
	defer func() { p.scratch = out[:0] }()
	switch tl.kind {
	case ssEdit:
		switch {
		case tl.failed:
			return // nothing changed
		case tl.cancelled:
			out = append(out, "Cancelled an edit"...)
			if tl.path != nil {
				out = appendFold(append(out, " of "...), tl.path, false)
			}
			p.addUpdate(truncate(string(out), MaxLineLen), tl.at)
			return
		}
		p.edits++
		verb := tl.verb
		if verb == "" {
			verb = "Edited"
		}
		out = append(out, verb...)
		if tl.path == nil {
			out = append(out, " a file"...)
		} else {
			out = appendFold(append(out, ' '), tl.path, false)
			p.changed = append(p.changed, ssChange{tl.path, verb})
		}
		if tl.diff {
			out = append(out, " (+"...)
			out = strconv.AppendInt(out, int64(tl.added), 10)
			out = append(out, " -"...)
			out = strconv.AppendInt(out, int64(tl.removed), 10)
			out = append(out, ')')
		}
		switch {
		case tl.path == nil && len(tl.context) > 0:
			out = appendFold(append(out, ": "...), tl.context, true)
		case tl.desc != nil:
			out = appendFold(append(out, ": "...), tl.desc, true)
		}
	case ssCommand:
		if tl.cancelled {
			out = appendFold(append(out, "Cancelled the command "...), tl.cmd, false)
			p.addUpdate(truncate(strings.TrimSpace(string(out)), MaxLineLen), tl.at)
			return
		}
		p.commands++
		if tl.cmd == nil {
			out = append(out, "Ran a command"...)
		} else {
			out = appendFold(append(out, "Ran "...), tl.cmd, false)
			p.ran = append(p.ran, tl.cmd)
		}
		if tl.desc != nil {
			out = append(appendFold(append(out, " ("...), tl.desc, true), ')')
		}
	case ssRead:
		if tl.path != nil {
			p.read = append(p.read, tl.path)
		}
		return
	default:
		return
	}
	p.addUpdate(truncate(string(out), MaxLineLen), tl.at)
}

func (p *ssParser) addUpdate(msg string, at time.Time) {
	p.updates = append(p.updates, msg)
	p.times = append(p.times, at)
	p.anyTime = p.anyTime || !at.IsZero()
}

// session builds the Session once the whole chat is read.
func (p *ssParser) session() (Session, error) {
	s := Session{ID: tidyID(sessionID(p.src)), SourcePath: p.src, Format: FormatSpecStory, Original: p.data}
	start := p.titleTime
	if start.IsZero() {
		start = p.commentTime
	}
	if start.IsZero() {
		start, _ = specStoryNameTime(path.Base(p.src), p.loc)
	}
	if !p.first.IsZero() && (start.IsZero() || p.first.Before(start)) {
		start = p.first
	}
	if start.IsZero() {
		return Session{}, errors.New("no time: neither the title, the speaker lines nor the file name (YYYY-MM-DD_HH-MMZ-…) give one")
	}
	s.Date = start
	if !p.last.IsZero() && !p.last.Before(start) {
		s.Ended = p.last
	}
	title := proseLine(p.title)
	s.Objective = p.objective
	if s.Objective == "" && title != "" && !strings.EqualFold(title, "Untitled") && !strings.EqualFold(title, "New chat") {
		s.Objective = title
	}
	if s.Objective == "" {
		s.Objective = "SpecStory chat of " + start.Format("2006-01-02 15:04")
	}
	s.Updates = p.updates
	if p.anyTime {
		s.UpdateTimes = p.times
	}
	s.Outcomes = append(s.Outcomes, fmt.Sprintf("%s, %s, %s, %s", count(p.requests, "user request"), count(p.replies, "reply"), count(p.edits, "edit"), count(p.commands, "command")))
	if p.provider != "" {
		o := "Recorded from " + p.provider
		if p.chatID != "" {
			o += " (session " + p.chatID + ")"
		}
		s.Outcomes = append(s.Outcomes, truncate(codeLine([]byte(o)), MaxLineLen))
	}
	if len(p.models.list) > 0 {
		s.Outcomes = append(s.Outcomes, codeLine([]byte("Model: "+strings.Join(p.models.list, ", "))))
	}
	// The files changed (a file created then edited was created; one deleted
	// at last, deleted), the others read, the commands run: once each, the
	// first maxSpecStoryOutcomes of each listed, the others counted.
	seen := make(map[string]int, len(p.changed)+len(p.read)) // path as written → index in edited, or -1
	var edited, verbs []string
	nEdited := 0
	for _, c := range p.changed {
		if i, ok := seen[string(c.path)]; ok {
			if i >= 0 && verbs[i] != c.verb && (verbs[i] != "Created" || c.verb == "Deleted") {
				verbs[i], edited[i] = c.verb, c.verb+edited[i][len(verbs[i]):]
			}
			continue
		}
		seen[string(c.path)] = -1
		if nEdited++; len(edited) < maxSpecStoryOutcomes {
			seen[string(c.path)] = len(edited)
			edited, verbs = append(edited, c.verb+" "+codeLine(c.path)), append(verbs, c.verb)
		}
	}
	s.Outcomes = appendListed(s.Outcomes, edited, nEdited, "files edited")
	var read []string
	nRead := 0
	for _, r := range p.read {
		if _, ok := seen[string(r)]; !ok {
			seen[string(r)] = -1
			if nRead++; len(read) < maxSpecStoryOutcomes {
				read = append(read, "Read "+codeLine(r))
			}
		}
	}
	s.Outcomes = appendListed(s.Outcomes, read, nRead, "files read")
	var ran []string
	nRan := 0
	seenCmd := make(map[string]bool, len(p.ran))
	for _, r := range p.ran {
		if !seenCmd[string(r)] {
			seenCmd[string(r)] = true
			if nRan++; len(ran) < maxSpecStoryOutcomes {
				ran = append(ran, "Ran "+codeLine(r))
			}
		}
	}
	s.Outcomes = appendListed(s.Outcomes, ran, nRan, "commands run")
	s.Issues = p.refs.list()
	return s, nil
}

// appendListed appends the lines listed of n items, then "… and N more
// what" for those not listed.
func appendListed(out, listed []string, n int, what string) []string {
	for _, it := range listed {
		out = append(out, truncate(it, MaxLineLen))
	}
	if n > len(listed) {
		out = append(out, fmt.Sprintf("… and %d more %s", n-len(listed), what))
	}
	return out
}
