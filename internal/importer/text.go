package importer

import (
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sessionvault/sessionvault/internal/lazyregexp"
)

// sessionID turns a file path into a Session.ID: the base name without its
// extension, with every rune outside [A-Za-z0-9_-] replaced by '-'.
func sessionID(relPath string) string {
	base := path.Base(strings.ReplaceAll(relPath, "\\", "/"))
	base = strings.TrimSuffix(base, path.Ext(base))
	var b strings.Builder
	for _, r := range base {
		if r < utf8.RuneSelf && (r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

var (
	reLink       = lazyregexp.New(`!?\[([^\]]*)\]\([^)\s]*\)`)
	reAutoLink   = lazyregexp.New(`<(https?://[^>\s]+)>`)
	reEmphasis   = lazyregexp.New(`\*\*|~~`)
	reSpaces     = lazyregexp.New(`\s+`)
	reHTMLTag    = lazyregexp.New(`</?(br|sub|sup|b|i|em|strong|code|details|summary)\s*/?>`)
	reLeadingNum = lazyregexp.New(`^(\d+[.)]|[-*+])\s+`)
	// reSentenceEnd() ends a short title: ". ", ": ", "; ", " (", " - ", " — ".
	reSentenceEnd = lazyregexp.New(`[.:;]\s| \(| [-–—] `)
)

// clean strips inline Markdown (emphasis, code backticks, link targets,
// simple HTML tags) and folds all white space to single spaces. Text inside
// code spans is kept as written.
func clean(s string) string {
	parts := strings.Split(s, "`")
	for i := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			continue // inside a code span
		}
		p := reLink().ReplaceAllString(parts[i], "$1")
		p = reAutoLink().ReplaceAllString(p, "$1")
		p = reHTMLTag().ReplaceAllString(p, " ")
		parts[i] = stripEmphasis(p)
	}
	s = strings.Join(parts, "")
	return strings.TrimSpace(reSpaces().ReplaceAllString(s, " "))
}

// stripEmphasis removes "**" and "~~", and "__" unless it sits inside a
// word (as in "mcp__serena__activate_project").
func stripEmphasis(s string) string {
	s = reEmphasis().ReplaceAllString(s, "")
	if !strings.Contains(s, "__") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && i+1 < len(s) && s[i+1] == '_' {
			inWord := i > 0 && isWordByte(s[i-1]) && i+2 < len(s) && isWordByte(s[i+2])
			if !inWord {
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// line is clean followed by truncate to MaxLineLen.
func line(s string) string { return truncate(clean(s), MaxLineLen) }

// truncate cuts s to at most n bytes at a rune boundary, ending in "…"
// when it had to cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + ellipsis
}

// shortTitle makes a title from a longer text: the text up to the first
// sentence end or colon, cut at a word boundary to about 100 bytes.
func shortTitle(s string) string {
	s = clean(s)
	if loc := reSentenceEnd().FindStringIndex(s); loc != nil && loc[0] > 10 {
		s = strings.TrimSpace(s[:loc[0]])
	}
	s = strings.TrimRight(s, ".")
	if len(s) <= 100 {
		return s
	}
	cut := strings.LastIndex(s[:100], " ")
	if cut < 40 {
		return truncate(s, 100)
	}
	return s[:cut] + "…"
}

// appendLine appends the cleaned, truncated s to list unless it is empty or
// a placeholder.
func appendLine(list []string, s string) []string {
	s = line(s)
	if s == "" || isPlaceholder(s) {
		return list
	}
	return append(list, s)
}

var rePlaceholder = lazyregexp.New(`(?i)^[\s*_(\[]*(none|n/?a|tbd|todo|to be (documented|determined|filled)[^)\]]*|\[migrated from markdown\]|-+|…|\.\.\.)[\s*_.)\]]*$`)

// isPlaceholder reports whether s is template filler rather than content.
func isPlaceholder(s string) bool {
	return rePlaceholder().MatchString(strings.TrimSpace(s))
}

var (
	reDateTime = lazyregexp.New(`\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s?(?:Z|UTC|[+-]\d{2}:?\d{2}))?)?`)
	reNameDate = lazyregexp.New(`^(\d{4}-\d{2}-\d{2})`)
)

// timeLayouts are tried in order by parseTime on the first date-like run.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05-0700",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 UTC",
	"2006-01-02 15:04 UTC",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseTime finds the first date or date-time in s and parses it. A value
// without a zone is UTC. It reports false when s holds no valid date.
func parseTime(s string) (time.Time, bool) {
	m := reDateTime().FindString(s)
	if m == "" {
		return time.Time{}, false
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, m); err == nil {
			return t, true
		}
	}
	if t, err := time.Parse("2006-01-02", m[:10]); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// isFullTimestamp reports whether s is a complete RFC 3339 timestamp (with
// date, time and zone), as used for work-log times.
func isFullTimestamp(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z07:00"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// dateFromName parses the YYYY-MM-DD prefix of a file's base name.
func dateFromName(relPath string) (time.Time, bool) {
	m := reNameDate().FindString(path.Base(relPath))
	if m == "" {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02", m)
	return t, err == nil
}

var reSHA = lazyregexp.New(`(?i)(?:^|[^0-9a-z])([0-9a-f]{7,40})(?:$|[^0-9a-z])`)

// commitSHA returns the first 7-40 digit hex run of s, lower-cased, or "".
func commitSHA(s string) string {
	m := reSHA().FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// cleanBranch strips backticks, emphasis and a trailing "→ target" or
// parenthesised note from a branch value and keeps its first word.
func cleanBranch(s string) string {
	s = clean(s)
	for _, sep := range []string{"→", "->", " (", " - "} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	s = strings.TrimSpace(s)
	if f := strings.Fields(s); len(f) > 0 {
		s = f[0]
	}
	if isPlaceholder(s) {
		return ""
	}
	return strings.Trim(s, `"'`)
}

// humanize turns a JSON key such as "usageMandatoryRead" or
// "session_log_created" into "Usage mandatory read".
func humanize(key string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	runes := []rune(key)
	for i, r := range runes {
		switch {
		case r == '_' || r == '-' || r == ' ' || r == '.':
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(runes[i-1]) ||
			(i+1 < len(runes) && unicode.IsLower(runes[i+1]) && unicode.IsUpper(runes[i-1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	s := strings.Join(words, " ")
	if s == "" {
		return ""
	}
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// reSessionPrefix is the "session-48-" that starts a file name's slug.
var reSessionPrefix = lazyregexp.New(`(?i)^[-_]*(session[-_]?[0-9a-z]*[0-9][0-9a-z]*|session)[-_]*`)

// slugObjective makes a fallback objective from a file name such as
// "2025-12-20-session-48-semantic-slug-orchestration" →
// "Semantic slug orchestration". It returns "" when the name has no slug.
func slugObjective(id string) string {
	s := reNameDate().ReplaceAllString(id, "")
	s = reSessionPrefix().ReplaceAllString(s, "")
	s = strings.Trim(strings.NewReplacer("-", " ", "_", " ").Replace(s), " ")
	if !strings.ContainsFunc(s, unicode.IsLetter) {
		return ""
	}
	return humanize(s)
}

// refs collects issue and pull-request references in order of first
// appearance, one per number.
type refs struct {
	order []int
	isPR  map[int]bool
}

func (r *refs) add(n int, pr bool) {
	if n <= 0 {
		return
	}
	if r.isPR == nil {
		r.isPR = map[int]bool{}
	}
	prev, seen := r.isPR[n]
	if !seen {
		r.order = append(r.order, n)
	}
	r.isPR[n] = prev || pr
}

// list renders the references as "#N" and "PR #N".
func (r *refs) list() []string {
	if len(r.order) == 0 {
		return nil
	}
	out := make([]string, 0, len(r.order))
	for _, n := range r.order {
		if r.isPR[n] {
			out = append(out, "PR #"+strconv.Itoa(n))
		} else {
			out = append(out, "#"+strconv.Itoa(n))
		}
	}
	return out
}

var (
	reGitHubRef = lazyregexp.New(`github\.com/[\w.-]+/[\w.-]+/(pull|issues)/(\d+)`)
	// rePRRef() matches "PR #7", "pull request #7", "PR 4927" (two or more
	// digits) and "PR-194"/"pr202" (three or more), but not "PR1"/"PR2"
	// (pull requests numbered within a plan).
	rePRRef   = lazyregexp.New(`(?i)\b(?:(?:PR|pull request)\s?#\s?(\d{1,6})|PR\s(\d{2,6})|PR-?(\d{3,6}))\b`)
	reHashRef = lazyregexp.New(`(?i)(\b[a-z]+\b)?[\s(]*(?:^|[^\w&#/])#(\d{2,6})\b`)
)

// notIssueWords precede "#N" when N numbers something other than an issue.
var notIssueWords = map[string]bool{
	"comment": true, "comments": true, "session": true, "phase": true, "step": true,
	"option": true, "decision": true, "item": true, "task": true, "thread": true,
	"finding": true, "test": true, "round": true, "run": true, "line": true,
	"fix": true, "attempt": true, "iteration": true, "batch": true, "point": true,
	"question": true, "gap": true, "rule": true, "check": true, "criterion": true,
	"scenario": true, "case": true, "level": true, "rank": true, "priority": true,
	"no": true, "number": true, "entry": true, "memory": true, "skill": true,
	"concern": true, "problem": true, "change": true, "commit": true,
}

// scan adds the references found in free text: GitHub pull/issue URLs,
// "PR #N"/"PR N"/"pull request #N", and bare "#N" (two or more digits, not
// preceded by a word such as "Comment" or "Step").
func (r *refs) scan(text string) {
	type hit struct {
		pos, n int
		pr     bool
	}
	var hits []hit
	for _, m := range reGitHubRef().FindAllStringSubmatchIndex(text, -1) {
		n, _ := strconv.Atoi(text[m[4]:m[5]])
		hits = append(hits, hit{m[0], n, text[m[2]:m[3]] == "pull"})
	}
	for _, m := range rePRRef().FindAllStringSubmatchIndex(text, -1) {
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] >= 0 {
				n, _ := strconv.Atoi(text[m[g]:m[g+1]])
				hits = append(hits, hit{m[0], n, true})
			}
		}
	}
	for _, m := range reHashRef().FindAllStringSubmatchIndex(text, -1) {
		if m[2] >= 0 && notIssueWords[strings.ToLower(text[m[2]:m[3]])] {
			continue
		}
		n, _ := strconv.Atoi(text[m[4]:m[5]])
		hits = append(hits, hit{m[4], n, false})
	}
	// Keep the order of appearance in the text.
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].pos < hits[b].pos })
	for _, h := range hits {
		r.add(h.n, h.pr)
	}
}
