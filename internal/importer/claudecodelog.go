package importer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Claude Code's transcripts: ~/.claude/projects/<project>/<session>.jsonl,
// where <project> is the working folder's path with every "/" (and other
// character outside [A-Za-z0-9-]) turned into "-", and <session> is the
// session's UUID. What this reader relies on:
//
//   - one JSON object per line (an "event"), appended while the session
//     runs; a line may be cut short when Claude Code stopped mid-write;
//   - "type": "user", "assistant", "system" or "summary"; other types
//     ("file-history-snapshot", "progress", "queue-operation", …) come and
//     go with Claude Code's versions and are counted, not read;
//   - "timestamp" (ISO 8601, UTC), "sessionId", "cwd", "gitBranch",
//     "version", "uuid"/"parentUuid" (the conversation's chain; the file's
//     order is taken as the session's order), "isSidechain" (true for a
//     subagent's events), "isMeta" (text Claude Code added, not typed by
//     the user);
//   - "message": {"role", "content", and for the assistant "model", "id"
//     and "usage"}; content is a string or an array of blocks: "text",
//     "tool_use" {id, name, input}, "tool_result" {tool_use_id, content (a
//     string or text blocks), is_error}, "thinking", "image", …; one API
//     reply may be written as several lines sharing its message id;
//   - a compaction writes a "system" event with subtype "compact_boundary"
//     (and compactMetadata {trigger, preTokens}) and a user message with
//     "isCompactSummary": true holding the summary; older versions wrote a
//     {"type": "summary", "summary": …} line;
//   - slash commands are user messages wrapped in <command-name>… tags, their
//     output in <local-command-stdout>; an interrupt is the text "[Request
//     interrupted by user…]";
//   - the TodoWrite tool's input is {"todos": [{content, status
//     ("pending", "in_progress", "completed"), activeForm}]}: the whole
//     list, each time;
//   - a subagent's events are written to <session>/subagents/agent-*.jsonl
//     (older versions: agent-*.jsonl beside the sessions, or inline with
//     "isSidechain": true).

// FormatClaudeCode is the Session.Format of a Claude Code transcript.
const FormatClaudeCode = "claude-code-transcript"

// ErrNoTranscripts is returned (wrapped) by [ScanClaudeCode] for a folder
// that holds no .jsonl file.
var ErrNoTranscripts = errors.New("no Claude Code transcript (.jsonl file)")

// ErrNotClaudeCodeTranscript is returned (wrapped, in a *ParseError) by
// [ParseClaudeCode] for a file that is not a Claude Code session's
// transcript: no line is JSON, no line is a user or assistant message, or
// every message is a subagent's.
var ErrNotClaudeCodeTranscript = errors.New("not a Claude Code session transcript")

// MaxClaudeCodeLine is the longest transcript line read, in bytes: a longer
// line is named as not read, and the reader never holds more than one line.
const MaxClaudeCodeLine = 64 << 20

// ccMaxLine is MaxClaudeCodeLine (tests lower it).
var ccMaxLine = MaxClaudeCodeLine

// Bounds of what one transcript's session keeps.
const (
	// ccTodoPhase is the ChecklistItem.Phase of the TodoWrite items: the
	// record shows them as a checklist under this heading.
	ccTodoPhase = "Todo list"
	// maxCCDigest bounds the digest kept as Session.Original, in bytes: the
	// first two thirds and the last third of a longer one are kept.
	maxCCDigest = 512 << 10
	// ccDigestText is the most bytes of text a digest line shows.
	ccDigestText = 240
	// maxCCBadLines is how many unreadable lines of a file are named one by
	// one; the rest are counted.
	maxCCBadLines = 20
	// maxCCTodos bounds the checklist.
	maxCCTodos = 200
	// maxCCOutcomes bounds the files edited and the commits listed in the
	// outcomes (the counts say how many there were).
	maxCCOutcomes = 50
	// ccReadBuffer is the line reader's buffer: lines up to this size are
	// not copied.
	ccReadBuffer = 256 << 10
)

// ScanClaudeCode reads the transcripts at p: a project folder of
// ~/.claude/projects (its *.jsonl files; the per-session sub-folders of
// subagent transcripts and tool output are not read) or one .jsonl file.
// It only reads.
//
// Each transcript gives a Session (see [ParseClaudeCode]) or a Skipped with
// the reason; its unreadable lines give a Skipped each, named
// "<source>:<line>". Other files and other sub-folders of the folder are
// skipped with the reason. Paths are "<folder name>/<file name>" (the
// project folder's name says which project the session was in), however p
// was given. Two transcripts giving the same ID get "-2", "-3"… in file
// name order. progress, if non-nil, is called after each transcript. The
// error is the error reading p, or wraps ErrNoTranscripts.
func ScanClaudeCode(p string, loc *time.Location, progress func(done, total int)) ([]Session, []Skipped, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, nil, err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, nil, err
	}
	var files []string
	var skipped []Skipped
	if !fi.IsDir() {
		files = []string{abs}
	} else {
		entries, err := os.ReadDir(abs)
		if err != nil {
			return nil, nil, err
		}
		names := map[string]bool{}
		for _, e := range entries {
			names[e.Name()] = true
		}
		others := 0
		for _, e := range entries {
			name := e.Name()
			rel := ccSourcePath(filepath.Join(abs, name))
			switch {
			case e.IsDir() && names[name+".jsonl"]:
				// The session's own folder: its subagents' transcripts
				// and tool output, part of the session read from its
				// .jsonl.
			case e.IsDir():
				others++
				skipped = append(skipped, Skipped{Path: rel + "/", Reason: "a folder: not read (give a project folder of ~/.claude/projects, or a .jsonl file)"})
			case !e.Type().IsRegular() && e.Type()&fs.ModeSymlink == 0:
				others++
				skipped = append(skipped, Skipped{Path: rel, Reason: "not a regular file"})
			case strings.HasSuffix(name, ".jsonl"):
				files = append(files, filepath.Join(abs, name))
			default:
				others++
				skipped = append(skipped, Skipped{Path: rel, Reason: "not a .jsonl transcript"})
			}
		}
		if len(files) == 0 {
			return nil, skipped, fmt.Errorf("%s holds %d other files and folders: %w", p, others, ErrNoTranscripts)
		}
	}
	var out []Session
	ids := map[string]int{}
	for i, f := range files {
		src := ccSourcePath(f)
		s, lines, err := readClaudeCodeFile(f, src, loc)
		if err != nil {
			skipped = append(skipped, Skipped{Path: src, Reason: ccSkipReason(err)})
		} else {
			if ids[s.ID]++; ids[s.ID] > 1 {
				s.ID += "-" + strconv.Itoa(ids[s.ID])
			}
			out = append(out, s)
		}
		skipped = append(skipped, lines...)
		if progress != nil {
			progress(i+1, len(files))
		}
	}
	sortSessions(out)
	return out, skipped, nil
}

// ccSourcePath names a transcript by its folder's name and its own.
func ccSourcePath(file string) string {
	return filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)
}

// ccSkipReason renders a Parse error for Skipped.Reason (without the path).
func ccSkipReason(err error) string {
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe.reason()
	}
	return "unreadable: " + err.Error()
}

func readClaudeCodeFile(file, src string, loc *time.Location) (Session, []Skipped, error) {
	f, err := os.Open(file)
	if err != nil {
		return Session{}, nil, err
	}
	defer f.Close()
	return ParseClaudeCode(src, f, loc)
}

// ParseClaudeCode reads one Claude Code transcript from r, line by line
// (holding one line at a time, at most MaxClaudeCodeLine bytes). source is
// the path reported for it (Session.SourcePath, Skipped.Path prefix). The
// session's date in loc names it.
//
// The Session: ID "YYYY-MM-DD-claude-code-<first 8 characters of the
// session ID>" from the start's date in loc (the session ID is the file
// name's when events carry it, else the last one events carry); Format
// FormatClaudeCode; Date and Ended the earliest and latest event
// timestamps; Objective the first prompt the user typed that is not a
// slash command, else the first command, else the first summary line;
// Branch the first gitBranch; EndCommit the last commit the session's
// `git commit` runs made (as their output shows it); Checklist every
// TodoWrite item in order of first appearance with its last status (Done
// when "completed"); Updates the user's prompts and commands, compactions
// and their summaries, and summary lines, with their times; Outcomes counts
// (prompts, replies, tool calls and failures, files edited, commits,
// compactions), the models, the Claude Code version and folder, calls per
// tool, files edited (by a call whose result is not an error), commits,
// branches when more than one, what was left out (subagent events, events
// of other types, content blocks of other types) and the lines not read;
// Issues the references in the prompts, summaries and commit messages;
// Original a digest, not the transcript's bytes: a line saying so, then one
// line per prompt, reply, tool call, failed tool result, commit, compaction
// and unreadable line, with the transcript's line number and the time,
// texts cut short, at most 512 KB (the start and the end of a longer one).
// Subagent events ("isSidechain": true) are counted, not read.
//
// Lines that are not JSON objects are returned as Skipped
// ("<source>:<line>", the first maxCCBadLines one by one), and the rest is
// read. The error is a *ParseError wrapping ErrEmpty, or
// ErrNotClaudeCodeTranscript with the reason, or the error reading r.
func ParseClaudeCode(source string, r io.Reader, loc *time.Location) (Session, []Skipped, error) {
	p := newCCParser(source)
	lr := newCCLines(r)
	defer lr.release()
	for {
		b, tooLong, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Session{}, nil, fmt.Errorf("reading %s: %w", source, err)
		}
		p.lineNo = lr.n
		if tooLong {
			p.nonBlank++
			p.bad(fmt.Sprintf("longer than %d MB: not read", ccMaxLine>>20))
			continue
		}
		p.line(b)
	}
	return p.finish(loc)
}

// ccLines reads lines, without their line endings, holding one at a time.
type ccLines struct {
	br   *bufio.Reader
	long []byte // a line longer than br's buffer
	n    int    // the line number of the last line returned
}

// ccReaders keeps the line readers' buffers from one transcript to the
// next.
var ccReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, ccReadBuffer) }}

// newCCLines reads r's lines; release gives its buffer back.
func newCCLines(r io.Reader) *ccLines {
	br := ccReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return &ccLines{br: br}
}

// release gives the reader's buffer back for the next transcript.
func (r *ccLines) release() {
	r.br.Reset(nil)
	ccReaders.Put(r.br)
	r.br = nil
}

// next returns the next line (valid until the next call), or tooLong for a
// line over MaxClaudeCodeLine (read and dropped); io.EOF at the end.
func (r *ccLines) next() (line []byte, tooLong bool, err error) {
	b, err := r.br.ReadSlice('\n')
	switch {
	case err == io.EOF && len(b) == 0:
		return nil, false, io.EOF
	case err == nil || err == io.EOF:
		r.n++
		return ccTrimEOL(b), false, nil
	case err != bufio.ErrBufferFull:
		return nil, false, err
	}
	r.n++
	r.long = append(r.long[:0], b...)
	for {
		b, err = r.br.ReadSlice('\n')
		if !tooLong && len(r.long)+len(b) > ccMaxLine {
			tooLong, r.long = true, r.long[:0]
		}
		if !tooLong {
			r.long = append(r.long, b...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, false, err
		}
		break
	}
	if tooLong {
		return nil, true, nil
	}
	return ccTrimEOL(r.long), false, nil
}

func ccTrimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
