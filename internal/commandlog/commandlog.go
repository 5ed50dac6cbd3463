// Package commandlog is the line format of the command history: every
// command an agent runs, one line each in a log note per session,
// <project>/sessions/<session-id>/commands.md, readable in Obsidian:
//
//   - 2025-01-09T10:00:00Z · success · `go test ./...` · **args:** `{"timeout":120000}` · **model:** sonnet · **agent:** Explore · **task:** [[demo/tasks/x|x]] · **feature:** [[demo/features/f-2025-01-09|f-2025-01-09]] · **duration:** 1234 ms ^h-1
//   - 2025-01-09T10:00:05Z · failure · `make lint` · **duration:** 810 ms · **error:** `exit status 2` ^h-2
//
// The time, the status (success or failure) and the command (a code span)
// come first; then, each left out when empty and in this order: args and
// error as code spans, model and agent as words, task and feature as
// wikilinks when their notes exist (else their ids), duration in
// milliseconds. In code spans, a line break is written \n, a carriage return
// \r, a tab \t, and a backslash before one of n, r, t, \ or those three is
// doubled, so that every value reads back exactly; the fence is one backtick
// longer than the longest run in the value.
//
// The package holds what both writers of the log share — the full
// PostToolUse hook (package features) and the lean one (package guard) —
// and links nothing but the standard library, so the lean hook stays small.
// It also holds the two state files the hooks read beside it: the model
// SessionStart recorded, and when the logs were last committed.
package commandlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

const (
	// Sep separates the fields of an entry line (and of the other entry
	// lines of the notes: updates, decisions).
	Sep = " · "
	// MachineSuffix is the pattern of the machine suffix a block id may
	// end with (-<machine>, none on the vault's first machine).
	MachineSuffix = `(?:-[a-z][a-z0-9]*)?`
	// Success and Failure are an entry's statuses.
	Success = "success"
	Failure = "failure"
	// HookCut is where the hooks cut a command or its arguments, in bytes.
	HookCut = 4 << 10
	// ErrorCut is where the hooks cut a failed call's error, in bytes.
	ErrorCut = 1 << 10
	// CommitEvery is how stale the committed logs may get while a session
	// runs: a tool call recorded later than this after the last commit of
	// the logs commits them.
	CommitEvery = 5 * time.Minute
)

// Line is one entry line as written.
type Line struct {
	Time    time.Time
	Status  string // Success or Failure
	Command string // not empty
	// Arguments, Model, Agent and Error are left out when empty.
	Arguments, Model, Agent string
	// Task and Feature are as written: a wikilink when the note exists,
	// else the id; left out when empty.
	Task, Feature string
	DurationMs    *int64 // left out when nil
	Error         string
	ID            string // h-N and the machine suffix
}

// String renders the line, without its newline.
func (l Line) String() string {
	var b strings.Builder
	b.WriteString("- " + l.Time.UTC().Format(time.RFC3339) + Sep + l.Status + Sep + CodeSpan(l.Command))
	if l.Arguments != "" {
		b.WriteString(Sep + "**args:** " + CodeSpan(l.Arguments))
	}
	if l.Model != "" {
		b.WriteString(Sep + "**model:** " + l.Model)
	}
	if l.Agent != "" {
		b.WriteString(Sep + "**agent:** " + l.Agent)
	}
	if l.Task != "" {
		b.WriteString(Sep + "**task:** " + l.Task)
	}
	if l.Feature != "" {
		b.WriteString(Sep + "**feature:** " + l.Feature)
	}
	if l.DurationMs != nil {
		b.WriteString(Sep + "**duration:** " + strconv.FormatInt(*l.DurationMs, 10) + " ms")
	}
	if l.Error != "" {
		b.WriteString(Sep + "**error:** " + CodeSpan(l.Error))
	}
	b.WriteString(" ^" + l.ID)
	return b.String()
}

// IDRe matches an entry line's block id at its end: group 1 is the id,
// group 2 its number.
var IDRe = lazyregexp.New(`\s\^(h-(\d+)` + MachineSuffix + `)\s*$`)

// Last returns the id number and time of the last entry line in tail (the
// end of a log), or ok false when it holds none.
func Last(tail []byte) (n int, t time.Time, ok bool) {
	lines := bytes.Split(tail, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := string(bytes.TrimRight(lines[i], "\r"))
		m := IDRe().FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(l, "- ") {
			continue
		}
		ts, _, _ := strings.Cut(l[2:], Sep)
		if at, err := time.Parse(time.RFC3339, ts); err == nil {
			n, _ = strconv.Atoi(m[2])
			return n, at.UTC(), true
		}
	}
	return 0, time.Time{}, false
}

// escapeSpan writes v for a code span: \n, \r, \t for the three control
// characters, and a backslash doubled before n, r, t, \ or those three.
func escapeSpan(v string) string {
	if !strings.ContainsAny(v, "\\\n\r\t") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\\':
			if i+1 < len(v) && strings.IndexByte("nrt\\\n\r\t", v[i+1]) >= 0 {
				b.WriteString(`\\`)
			} else {
				b.WriteByte('\\')
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unescapeSpan is escapeSpan's inverse.
func unescapeSpan(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// CodeSpan renders v (not empty) as a CommonMark code span that reads back
// as v (ReadCodeSpan).
func CodeSpan(v string) string {
	v = escapeSpan(v)
	longest, run := 0, 0
	for i := 0; i < len(v); i++ {
		if v[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	allSpaces := strings.Trim(v, " ") == ""
	if strings.HasPrefix(v, "`") || strings.HasSuffix(v, "`") || (!allSpaces && strings.HasPrefix(v, " ") && strings.HasSuffix(v, " ")) {
		v = " " + v + " "
	}
	return fence + v + fence
}

// ReadCodeSpan reads the code span at the start of s and returns its value
// and the rest of s; ok is false when s does not start with a whole one.
func ReadCodeSpan(s string) (value, rest string, ok bool) {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	if n == 0 {
		return "", s, false
	}
	for i := n; i < len(s); {
		j := strings.IndexByte(s[i:], '`')
		if j < 0 {
			return "", s, false
		}
		j += i
		k := j
		for k < len(s) && s[k] == '`' {
			k++
		}
		if k-j == n {
			v := s[n:j]
			if len(v) >= 2 && v[0] == ' ' && v[len(v)-1] == ' ' && strings.Trim(v, " ") != "" {
				v = v[1 : len(v)-1]
			}
			return unescapeSpan(v), s[k:], true
		}
		i = k
	}
	return "", s, false
}

// ToolCommand is the command and arguments of a tool call (Claude Code
// hooks: tool_name, tool_input): Bash's command line and its other inputs
// (description, timeout, …) as JSON; an MCP tool's name and its input as
// JSON (keys sorted, "" for none); both cut at HookCut bytes (Cut).
func ToolCommand(tool string, input json.RawMessage) (command, args string) {
	fields := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	_ = dec.Decode(&fields) // not an object: no arguments
	command = tool
	if tool == "Bash" {
		if c, ok := fields["command"].(string); ok && strings.TrimSpace(c) != "" {
			command = c
			delete(fields, "command")
		}
	}
	if len(fields) > 0 {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(fields) == nil {
			args = strings.TrimSuffix(b.String(), "\n")
		}
	}
	return Cut(command, HookCut), Cut(args, HookCut)
}

// Cut cuts v to at most n bytes (on a character boundary), saying how much
// was cut: "…… [N bytes cut]".
func Cut(v string, n int) string {
	if len(v) <= n {
		return v
	}
	i := n
	for i > 0 && !utf8.RuneStart(v[i]) {
		i--
	}
	return v[:i] + fmt.Sprintf("… [%d bytes cut]", len(v)-i)
}

// AgentRe is what a model or agent identifier is: a letter or digit, then
// up to 99 letters, digits and ._:/@+-.
var AgentRe = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,99}$`)

// Identifier is v as a model or agent identifier (AgentRe): other
// characters replaced by '-', leading punctuation dropped, cut at 100 bytes.
func Identifier(v string) string {
	if v == "" || AgentRe().MatchString(v) {
		return v
	}
	b := []byte(v)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:/@+-", c) >= 0) {
			b[i] = '-'
		}
	}
	v = strings.TrimLeft(string(b), "._:/@+-")
	if len(v) > 100 {
		v = v[:100]
	}
	return v
}

// ModelFile is the state file of the model SessionStart named for a Claude
// Code session (PostToolUse inputs do not name it): one line,
// "<claude session id>\t<model>\n".
func ModelFile(project string) string { return "model-" + project }

// ModelRecord is ModelFile's content for model in claudeSession.
func ModelRecord(claudeSession, model string) []byte {
	return []byte(claudeSession + "\t" + model + "\n")
}

// RecordedModel is the model data (ModelFile's content) records for
// claudeSession, "" when it records another session's or none.
func RecordedModel(data []byte, claudeSession string) string {
	id, model, _ := strings.Cut(strings.TrimSpace(string(data)), "\t")
	if id != claudeSession {
		return ""
	}
	return model
}

// CommittedFile is the state file of when a project's logs were last
// committed: Unix seconds, in decimal.
func CommittedFile(project string) string { return "history-committed-" + project }

// CommittedRecord is CommittedFile's content for a commit at t.
func CommittedRecord(t time.Time) []byte { return []byte(strconv.FormatInt(t.Unix(), 10)) }

// CommitDue reports whether the logs are due for a commit at now, given
// CommittedFile's content (nil when missing): when it is missing or does
// not read, or the last commit is older than CommitEvery.
func CommitDue(data []byte, now time.Time) bool {
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return err != nil || now.Sub(time.Unix(n, 0)) > CommitEvery
}
