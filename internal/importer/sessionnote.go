package importer

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/markdown"
)

// The variants of session notes people keep (written by /session-start,
// /session-update and /session-end commands and their many forks): what a
// note says of its times, its objective and its progress, wherever it says
// it.

var (
	reFrontStart     = lazyregexp.New(`(?i)^(date|started|start|created|created_at|start_time)$`)
	reFrontEnd       = lazyregexp.New(`(?i)^(ended|end|completed|finished|end_time|ended_at)$`)
	reObjectiveLabel = lazyregexp.New(`(?i)^(objective|goal|overview|issue|task|focus|purpose)$`)
	reTodoHeading    = lazyregexp.New(`(?i)^(todo|to-?do list|tasks?|checklist)$`)
	reNotesHeading   = lazyregexp.New(`(?i)^(notes?|progress|progress log|log|work log|changes)$`)
	reDatedLine      = lazyregexp.New(`^\s*(?:[-*+]\s+)?(?:\*\*|_)?\[?(\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2})\]?(?:\*\*|_)?\s*[-–—:|]?\s+(.+)$`)
	reTaskItem       = lazyregexp.New(`^\s{0,1}[-*+] \[([ xX])\] (.+)$`)
	reStatusLabel    = lazyregexp.New(`(?i)^(session )?status$`)
)

// nameDate reads the date a note's file name starts with (YYYY-MM-DD, no
// time), midnight in loc.
func nameDate(base string, loc *time.Location) (time.Time, bool) {
	m := reNameDate().FindString(base)
	if m == "" || len(base) > len(m) && base[len(m)] >= '0' && base[len(m)] <= '9' {
		return time.Time{}, false
	}
	t, _, ok := localDateTime(m, loc)
	return t, ok
}

// frontMatterTimes reads a note's front-matter start (date, started,
// created) and end (ended, completed), each with whether it has a clock.
func frontMatterTimes(fm map[string]string, loc *time.Location) (start, end time.Time, startClock, endClock bool) {
	for _, k := range []string{"started", "start", "start_time", "date", "created", "created_at"} {
		if v, ok := fm[k]; ok && start.IsZero() && reFrontStart().MatchString(k) {
			if t, clk, ok := localDateTime(v, loc); ok {
				start, startClock = t, clk
			}
		}
	}
	for _, k := range []string{"ended", "end", "end_time", "ended_at", "completed", "finished"} {
		if v, ok := fm[k]; ok && end.IsZero() && reFrontEnd().MatchString(k) {
			if t, clk, ok := localDateTime(v, loc); ok {
				end, endClock = t, clk
			}
		}
	}
	return start, end, startClock, endClock
}

// hasSessionSections reports whether a note has a section a session note
// has: Progress/Notes, Todo, a summary, goals or an overview.
func hasSessionSections(secs []markdown.Section) bool {
	for _, s := range secs {
		t := strings.TrimSpace(s.Title)
		if s.Level >= 2 && (reNotesHeading().MatchString(t) || reTodoHeading().MatchString(t) || reSummaryHeading().MatchString(t) ||
			reGoalsHeading().MatchString(t) || reOverview().MatchString(t)) {
			return true
		}
	}
	return false
}

// labelledStatus returns the value of the first line labelled Status, or "".
func labelledStatus(data []byte) string {
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if label, value, ok := labelled(l); ok && value != "" && reStatusLabel().MatchString(label) {
			return clean(value)
		}
	}
	return ""
}

// frontMatter returns the top-level "key: value" pairs of a note's YAML
// front matter (between "---" lines at its start), quotes removed.
func frontMatter(data []byte) map[string]string {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil
	}
	end := strings.Index(text[4:], "\n---")
	if end < 0 {
		return nil
	}
	out := map[string]string{}
	for _, l := range strings.Split(text[4:4+end], "\n") {
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
	}
	return out
}

// labelledTimes finds the first labelled start and end lines of a note's
// text (outside code fences): their time, and whether it has a clock. A
// time of day alone is put on day (when day is known).
func labelledTimes(data []byte, day time.Time, loc *time.Location) (start, end time.Time, startClock, endClock bool) {
	fence := false
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		label, value, ok := labelled(l)
		if !ok || value == "" {
			continue
		}
		isStart, isEnd := reStartLabel().MatchString(label), reEndLabel().MatchString(label)
		if !isStart && !isEnd {
			continue
		}
		t, clk, ok := localDateTime(value, loc)
		if !ok && !day.IsZero() {
			t, ok = clockOn(value, day)
			clk = ok
		}
		if !ok {
			continue
		}
		switch {
		case isStart && start.IsZero():
			start, startClock = t, clk
		case isEnd && end.IsZero():
			end, endClock = t, clk
		}
	}
	return start, end, startClock, endClock
}

// firstCommitTime returns when the file at path was first committed to the
// git repository holding it (its author time), or ok=false when it is in
// none, not committed, or git is missing.
func firstCommitTime(path string) (time.Time, bool) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	cmd := exec.Command("git", "-C", dir, "log", "--diff-filter=A", "--follow", "--format=%at", "--", base)
	cmd.Env = append(cmd.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return time.Time{}, false
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return time.Time{}, false
	}
	secs, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

// labelledObjective returns the value of the first line labelled
// Objective/Goal/Overview/Issue/Task/Focus in a note's text, or "".
func labelledObjective(data []byte) string {
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if label, value, ok := labelled(l); ok && value != "" && reObjectiveLabel().MatchString(label) {
			if c := clean(value); c != "" && !isPlaceholder(c) {
				return c
			}
		}
	}
	return ""
}

// todoChecklist returns the task items ("- [ ] …", "- [x] …") of a note's
// Todo/Tasks/Checklist sections, kept as checklist items of that section.
func todoChecklist(data []byte, secs []markdown.Section) []ChecklistItem {
	var out []ChecklistItem
	for _, s := range secs {
		if s.Level < 2 || !reTodoHeading().MatchString(strings.TrimSpace(s.Title)) {
			continue
		}
		for _, l := range sectionText(data, s) {
			if m := reTaskItem().FindStringSubmatch(l); m != nil {
				if step := clean(m[2]); step != "" {
					out = append(out, ChecklistItem{Phase: s.Title, Step: line(step), Done: m[1] != " "})
				}
			}
		}
	}
	return out
}

// notesUpdates returns a note's progress as updates when it has no update
// blocks: its dated lines ("- 2026-03-07 21:10 – wired the form", "**21:10**
// wired the form"), each at its time (a time of day on the start's day),
// else the top-level items of its Notes/Progress sections.
func notesUpdates(data []byte, secs []markdown.Section, day time.Time, loc *time.Location) (msgs []string, times []time.Time) {
	fence := false
	for _, l := range strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		m := reDatedLine().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if label, _, ok := labelled(l); ok && (reStartLabel().MatchString(label) || reEndLabel().MatchString(label)) {
			continue
		}
		when, clk, ok := localDateTime(m[1], loc)
		if !ok || !clk {
			if t, ok2 := clockOn(m[1], day); ok2 {
				when, ok = t, true
			}
		}
		msg := clean(m[2])
		if !ok || msg == "" {
			continue
		}
		msgs, times = append(msgs, line(msg)), append(times, when)
	}
	if len(msgs) > 0 {
		return msgs, times
	}
	for _, s := range secs {
		if s.Level < 2 || !reNotesHeading().MatchString(strings.TrimSpace(s.Title)) {
			continue
		}
		for _, it := range textItems(sectionText(data, s)) {
			msgs, times = append(msgs, line(it)), append(times, time.Time{})
		}
	}
	return msgs, times
}
